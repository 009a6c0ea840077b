"""τ2-bench (τ-Voice) results → :class:`~replay.model.Trial`.

Modules: :mod:`.layouts` (files and folders), :mod:`.simulation` (one run),
:mod:`.messages` (half-duplex turns), :mod:`.control` (``###STOP###`` and kin),
:mod:`.verdicts` (reward and reviews), :mod:`.effects` (speech environment and
effects), :mod:`.version` (which τ2 wrote it, unknown fields).

Four layouts, as τ2-bench writes them:

* **monolithic** ``results.json``: ``{"info", "tasks", "simulations": [...]}``;
* **dir**: ``results.json`` holding ``info``/``tasks`` (and, in newer runs, a
  ``simulation_index``) next to ``simulations/<id>.json``, one file per simulation;
* a single **simulation** file on its own (``{"id", "task_id", "messages"|"ticks"}``);
* a **simulation_run** record: one run wrapped as ``{"simulation_run": {...}, "task": {...}}``
  (the trajectory examples of τ2's datasets), the task giving the run its context.

Half-duplex simulations carry ``messages``; consecutive messages of one side (an
assistant's tool call, the tool's result, then its reply) become one turn, tool
traffic as inline events. Full-duplex simulations carry ``ticks``, turned into
turns by :mod:`replay.tau2.ticks`. ``reward_info`` becomes ``tau2`` verdicts and
``review`` / ``user_only_review`` become ``tau2-review`` / ``tau2-user-review``
verdicts (the replay's *review* column). Control tokens become call events, never
speech. Simulations of a dir layout load in file-name order, as τ2 loads them.
"""

from replay.tau2.layouts import (
    RESULTS_FILE,
    SIMULATIONS_DIR,
    is_results,
    is_simulation,
    is_wrapped_simulation,
    load_results_dir,
    load_results_file,
    load_simulation_file,
    load_wrapped_file,
    read_json,
    trials_from_results,
)
from replay.tau2.simulation import trial_from_simulation

__all__ = [
    "RESULTS_FILE",
    "SIMULATIONS_DIR",
    "is_results",
    "is_simulation",
    "is_wrapped_simulation",
    "load_results_dir",
    "load_results_file",
    "load_simulation_file",
    "load_wrapped_file",
    "read_json",
    "trial_from_simulation",
    "trials_from_results",
]
