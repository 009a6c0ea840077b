"""The τ2-bench importer's old address: everything lives in :mod:`replay.tau2` now."""

from replay.tau2 import (
    RESULTS_FILE,
    SIMULATIONS_DIR,
    is_results,
    is_simulation,
    load_results_dir,
    load_results_file,
    load_simulation_file,
    read_json,
    trial_from_simulation,
    trials_from_results,
)

__all__ = [
    "RESULTS_FILE",
    "SIMULATIONS_DIR",
    "is_results",
    "is_simulation",
    "load_results_dir",
    "load_results_file",
    "load_simulation_file",
    "read_json",
    "trial_from_simulation",
    "trials_from_results",
]
