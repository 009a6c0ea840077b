"""Where τ2 writes simulations: monolithic results, the ``dir`` layout, a lone simulation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from replay.errors import LoadError
from replay.model import Trial
from replay.tau2.checks import check_results, check_simulation
from replay.tau2.simulation import trial_from_simulation
from replay.tau2.version import RESULTS_FIELDS, WRAPPER_FIELDS, unknown_keys, unknown_warning
from sessions.hostile.safe_files import FileError
from sessions.hostile.safe_files import read_json as _safe_read_json

SIMULATIONS_DIR = "simulations"
RESULTS_FILE = "results.json"


def is_results(data: Any) -> bool:
    """A τ2 results object (monolithic, or the metadata file of a dir layout)."""
    return (
        isinstance(data, Mapping)
        and "info" in data
        and ("simulations" in data or "tasks" in data or "simulation_index" in data)
    )


def is_simulation(data: Any) -> bool:
    """One τ2 simulation run object."""
    return (
        isinstance(data, Mapping)
        and "task_id" in data
        and "id" in data
        and ("messages" in data or "ticks" in data)
    )


def is_wrapped_simulation(data: Any) -> bool:
    """A trajectory record wrapping one run: ``{"simulation_run": {...}, "task": ...}``."""
    return isinstance(data, Mapping) and is_simulation(data.get("simulation_run"))


def read_json(path: Path) -> Any:
    """A JSON file through :mod:`sessions.hostile.safe_files` (regular file, UTF-8, limits)."""
    try:
        return _safe_read_json(path)
    except FileError as exc:
        raise LoadError(str(exc)) from None


def load_results_file(path: Path, data: Mapping[str, Any]) -> list[Trial]:
    """A monolithic results file (already parsed)."""
    sims = data.get("simulations")
    if not isinstance(sims, list):
        raise LoadError(f'{path}: τ2 results file has no "simulations" list')
    return trials_from_results(data, sims, str(path), layout="monolithic")


def load_results_dir(folder: Path) -> list[Trial]:
    """The dir layout: ``folder/results.json`` + ``folder/simulations/*.json``."""
    meta_path = folder / RESULTS_FILE
    meta = read_json(meta_path)
    if not is_results(meta):
        raise LoadError(f'{meta_path}: not a τ2 results file (no "info" with "tasks")')
    sims_dir = folder / SIMULATIONS_DIR
    files = sorted(sims_dir.glob("*.json")) if sims_dir.is_dir() else []
    warnings: list[str] = []
    index = meta.get("simulation_index")
    if isinstance(index, list):
        indexed = {str(e.get("id")) for e in index if isinstance(e, Mapping)}
        on_disk = {f.stem for f in files}
        missing = sorted(indexed - on_disk)
        extra = sorted(on_disk - indexed)
        if missing:
            warnings.append(
                f"{folder}: simulation_index lists {len(missing)} simulation(s) "
                f"with no file in simulations/: {', '.join(missing[:5])}"
            )
        if extra:
            warnings.append(
                f"{folder}: {len(extra)} file(s) in simulations/ are not in "
                f"simulation_index: {', '.join(extra[:5])}"
            )
    sims: list[dict[str, Any]] = []
    bad: list[str] = []
    for f in files:
        try:
            sim = read_json(f)
            if not is_simulation(sim):
                raise LoadError(
                    f'{f}: not a τ2 simulation (expected "id", "task_id" and "messages" or "ticks")'
                )
        except LoadError as exc:  # one bad file of many: skipped, and said so
            bad.append(str(exc))
            continue
        sim = dict(sim)
        sim["_file"] = str(f)
        sims.append(sim)
    if bad and not sims:
        raise LoadError(bad[0])
    if bad:
        warnings.append(
            f"{folder}: skipped {len(bad)} of {len(files)} simulation file(s) that cannot be "
            f"loaded (first: {bad[0]})"
        )
    if not sims and not isinstance(meta.get("simulations"), list):
        raise LoadError(f"{folder}: τ2 results directory has no simulations/*.json files")
    if not sims:
        sims = list(meta["simulations"])
    trials = trials_from_results(meta, sims, str(folder), layout="dir")
    for trial in trials:
        trial.warnings.extend(warnings)
    return trials


def load_simulation_file(path: Path, sim: Mapping[str, Any]) -> list[Trial]:
    """A lone simulation file; its results.json (if beside ``simulations/``) gives context."""
    info: Mapping[str, Any] = {}
    tasks: Sequence[Any] = []
    notes: list[str] = []
    meta_path = path.parent.parent / RESULTS_FILE
    if path.parent.name == SIMULATIONS_DIR and meta_path.is_file():
        meta = read_json(meta_path)
        if is_results(meta):
            meta, notes = check_results(meta, str(meta_path))
            info = meta.get("info") or {}
            tasks = meta.get("tasks") or []
    checked, warnings = check_simulation(sim, str(path))
    trial = trial_from_simulation(
        checked,
        info=info,
        tasks=_tasks_by_id(tasks),
        source=str(path),
        layout="simulation",
        results=meta if info else None,
    )
    trial.warnings.extend([*notes, *warnings])
    _name_unknown([trial], str(path))
    return [trial]


def load_wrapped_file(path: Path, data: Mapping[str, Any]) -> list[Trial]:
    """A ``simulation_run`` record: the run, with the ``task`` (and ``info``) beside it."""
    task = data.get("task")
    raw_info = data.get("info")
    info: Mapping[str, Any] = raw_info if isinstance(raw_info, Mapping) else {}
    tasks = _tasks_by_id([task]) if isinstance(task, Mapping) else {}
    checked, warnings = check_simulation(data["simulation_run"], str(path), ("simulation_run",))
    trial = trial_from_simulation(
        checked,
        info=info,
        tasks=tasks,
        source=str(path),
        layout="simulation_run",
        results=data if info else None,
    )
    trial.warnings.extend(warnings)
    extra = unknown_keys(data, WRAPPER_FIELDS)
    if extra:
        trial.meta["tau2_unknown_wrapper"] = {k: data[k] for k in extra}
    _name_unknown([trial], str(path), wrapper=extra)
    return [trial]


def trials_from_results(
    meta: Mapping[str, Any], sims: Sequence[Any], source: str, *, layout: str = "monolithic"
) -> list[Trial]:
    meta, notes = check_results(meta, source)
    info = meta.get("info") if isinstance(meta.get("info"), Mapping) else {}
    tasks = _tasks_by_id(meta.get("tasks") or [])
    trials = []
    for i, sim in enumerate(sims):
        if not is_simulation(sim):
            raise LoadError(
                f'{source}: simulation {i} is not a τ2 simulation (expected "id", '
                f'"task_id" and "messages" or "ticks")'
            )
        place: tuple[str | int, ...] = () if "_file" in sim else ("simulations", i)
        checked, warnings = check_simulation(sim, str(sim.get("_file") or source), place)
        trial = trial_from_simulation(
            checked, info=info or {}, tasks=tasks, source=source, layout=layout, results=meta
        )
        trial.warnings.extend([*notes, *warnings])
        trials.append(trial)
    _name_unknown(trials, source, results=unknown_keys(meta, RESULTS_FIELDS))
    return trials


def _name_unknown(
    trials: Sequence[Trial],
    source: str,
    *,
    results: Sequence[str] = (),
    wrapper: Sequence[str] = (),
) -> None:
    """One warning per kind of place naming every unknown field found there (the
    values stay on the trials)."""
    sims = [k for t in trials for k in t.meta.get("tau2_unknown", {})]
    for where, keys in (("results", results), ("record", wrapper), ("simulation", sims)):
        text = unknown_warning(source, where, keys)
        if text is not None:
            for trial in trials:
                trial.warnings.append(text)


def _tasks_by_id(tasks: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(tasks, list):
        return {}
    return {str(t.get("id")): t for t in tasks if isinstance(t, Mapping)}


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
    "trials_from_results",
]
