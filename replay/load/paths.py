"""Path → trials. One entry point for everything replay can open.

What a path may be (decided by content, not by extension):

* a cutin session log — JSONL whose line 1 is a ``cutin.session/1`` header;
* a τ2-bench results file — monolithic (``simulations`` inside), or the
  ``results.json`` of a dir layout (a ``simulations/`` folder beside it);
* one τ2 simulation file (``simulations/<id>.json``), or a trajectory record wrapping
  one under ``simulation_run``;
* a verdict sidecar (``*.cutin-verdicts.jsonl``): loads the τ2 input it names;
* a directory: a τ2 dir layout (``results.json`` inside), or a folder of session
  logs (every ``*.jsonl`` below it, in path order).

Anything else is a :class:`~replay.errors.LoadError` naming the path and listing
what was expected. A session log whose last line was torn by a crash still loads;
the trial carries a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from replay.cutin_log.session_import import trial_from_session
from replay.errors import LoadError
from replay.model import Batch, Trial
from replay.tau2 import (
    RESULTS_FILE,
    SIMULATIONS_DIR,
    is_results,
    is_simulation,
    is_wrapped_simulation,
    load_results_dir,
    load_results_file,
    load_simulation_file,
    load_wrapped_file,
)
from replay.tau2.sidecar import SIDECAR_SCHEMA, default_sidecar, is_sidecar, merge_sidecar
from sessions.hostile.safe_files import (
    FileError,
    JsonSyntaxError,
    binary_kind,
    clean_strings,
    decode_text,
    exists,
    is_dir,
    is_file,
    list_tree,
    may_hold_controls,
    parse_json,
    read_bytes,
    read_head,
    shown_name,
    terminal_line,
)
from sessions.log.reader import LogError, read_session

_WRITE_BACK = frozenset({"source"})
"""Trial fields that name a file cutin appends to (``cutin judge``): never rewritten."""

EXPECTED = (
    'expected a cutin session log (.jsonl whose line 1 has "schema": "cutin.session/1"), '
    'a τ2-bench results.json ("info" + "simulations", or beside a simulations/ folder), '
    'a τ2 simulation file (or a "simulation_run" record), or a directory holding one of these'
)


def load_path(path: Path | str, *, skip_bad: bool = False) -> Batch:
    """Load one path (see the module docstring). ``skip_bad``: a bad session log
    inside a directory becomes a warning instead of an error."""
    p = Path(path)
    if not exists(p):
        raise LoadError(f"{p}: no such file or directory")
    try:
        batch = _load_dir(p, skip_bad=skip_bad) if is_dir(p) else _load_file(p)
    except FileError as exc:  # LoadError, or from the safe reader or the log reader
        # One inert line wherever it is shown (a terminal, the replay screen, a report),
        # whatever the file's name or text holds.
        raise LoadError(terminal_line(str(exc))) from None
    except OSError as exc:  # a folder or file we may not read (EACCES): one line too
        where = shown_name(exc.filename or p)
        raise LoadError(f"{where}: cannot read: {exc.strerror or exc}") from None
    # Warnings name files too (a skipped log, a simulation that cannot be read).
    batch.warnings = [terminal_line(w) for w in batch.warnings]
    for trial in batch.trials:
        trial.warnings = [terminal_line(w) for w in trial.warnings]
    return batch


def load_batch(paths: Iterable[Path | str], *, skip_bad: bool = False) -> Batch:
    """Load several paths into one batch, in the order given."""
    batch = Batch()
    for path in paths:
        part = load_path(path, skip_bad=skip_bad)
        batch.trials.extend(part.trials)
        batch.warnings.extend(part.warnings)
    return batch


def load_paths(paths: Iterable[Path | str], *, skip_bad: bool = False) -> list[Trial]:
    """Trials of every path, in order. The replay screen's entry point."""
    return load_batch(paths, skip_bad=skip_bad).trials


def load_log(path: Path | str) -> Trial:
    """One cutin session log."""
    try:
        session = read_session(path)
    except LogError as exc:
        kind = binary_kind(read_head(path))  # a picture named *.jsonl in a folder of logs
        if kind is not None:
            raise LoadError(f"{path}: a binary file ({kind}), not a cutin session log") from None
        raise LoadError(str(exc)) from None
    # A log keeps its text exactly (it is appended to and rewritten by nobody); what
    # is shown of it never carries a control character (sessions.hostile.safe_files).
    trial = trial_from_session(session)
    del session  # its events: the trial holds what it needs of them
    if _file_may_hold_controls(Path(path)):  # the walk costs; most logs need none
        clean_strings(trial, keep=_WRITE_BACK)
    return trial


def _file_may_hold_controls(path: Path) -> bool:
    """:func:`_may_hold_controls` of a log a few MiB at a time, whole lines each (what
    it looks for never spans lines), so a big log is never held whole."""
    try:
        with path.open("rb") as fh:
            rest = b""
            while chunk := fh.read(4 << 20):
                block, _, rest = (rest + chunk).rpartition(b"\n")
                if _may_hold_controls(block):
                    return True
            return _may_hold_controls(rest)
    except OSError:
        return True  # read once already: walk rather than guess


# Every byte that can start what may_hold_controls looks for: a backslash escape, DEL,
# the UTF-8 lead byte of C1 controls, a raw C0 control other than tab and newline.
_CONTROL_LEADS = b"\\\x7f\xc2" + bytes(range(0x09)) + bytes(range(0x0B, 0x20))
_NOT_CONTROL_LEADS = bytes(b for b in range(256) if b not in _CONTROL_LEADS)


def _may_hold_controls(raw: bytes) -> bool:
    """:func:`may_hold_controls`, answered at once when ``raw`` holds none of the bytes
    its pattern starts with (a 2-hour log: a few ms instead of ~60 ms of regex)."""
    if not raw.translate(None, _NOT_CONTROL_LEADS):
        return False
    return may_hold_controls(raw)


PREVIEW_BYTES = 1_000_000
"""A session log larger than this gets a preview while it loads (about 20 minutes of a
call; a two-hour log is ~5 MB and takes a second to read on a busy machine)."""
PREVIEW_LINES = 2_000


def load_log_preview(path: Path | str) -> Trial | None:
    """The first :data:`PREVIEW_LINES` lines of a long cutin session log as a trial (as
    if the call had stopped there), for a screen to paint while the whole log loads;
    None for anything else (a short log, a τ2 file, a log that cannot be read: the full
    load says why)."""
    p = Path(path)
    try:
        if p.suffix != ".jsonl" or not is_file(p) or p.stat().st_size <= PREVIEW_BYTES:
            return None
        # Not a session log (a sidecar, a τ2 file): read_session says so, and the full
        # load names the problem.
        trial = trial_from_session(read_session(p, skip_bad=True, max_lines=PREVIEW_LINES))
    except (LoadError, LogError, OSError, ValueError):
        return None
    clean_strings(trial, keep=_WRITE_BACK)  # a preview is shown once: always cleaned
    trial.warnings.append(f"preview: the first {PREVIEW_LINES:,} lines; the rest is loading")
    return trial


def session_files(folder: Path, *, unlisted: list[str] | None = None) -> list[Path]:
    """Session logs below ``folder`` (sidecars excluded), in path order. Anything
    named ``*.jsonl`` that is not a directory is listed, so that a FIFO or device
    among the logs is reported when read rather than passed over in silence. A folder
    that cannot be listed (no permission) is a :class:`LoadError`, or one line added to
    ``unlisted`` when that is given: its logs are never dropped unseen."""
    found, problems = list_tree(folder, "*.jsonl")
    if problems and unlisted is None:
        raise LoadError(problems[0] + (f" (and {len(problems) - 1} more)" if problems[1:] else ""))
    if unlisted is not None:
        unlisted.extend(problems)
    return [p for p in found if not is_dir(p) and not is_sidecar(p)]


def recent_sessions(folder: Path | str, limit: int = 20) -> list[Path]:
    """The ``limit`` most recently modified session logs below ``folder``, newest first.
    A missing folder has none."""
    root = Path(folder)
    if not is_dir(root):
        return []
    stamped = []
    for p in session_files(root, unlisted=[]):  # the home list: what can be read
        try:
            stamped.append((p.stat().st_mtime, str(p), p))
        except OSError:
            continue
    stamped.sort(key=lambda item: (-item[0], item[1]))
    return [p for _, _, p in stamped[: max(0, limit)]]


def _load_dir(folder: Path, *, skip_bad: bool) -> Batch:
    if is_file(folder / RESULTS_FILE):
        return _with_sidecar(folder, load_results_dir(folder))
    unlisted: list[str] = []
    logs = session_files(folder, unlisted=unlisted if skip_bad else None)
    if not logs and unlisted:
        raise LoadError(unlisted[0])
    if not logs:
        raise LoadError(
            f"{folder}: directory holds no session logs (*.jsonl) and no {RESULTS_FILE}; {EXPECTED}"
        )
    batch = Batch(warnings=[f"skipped: {u}" for u in unlisted])
    for log in logs:
        try:
            trial = load_log(log)
        except LoadError as exc:
            if not skip_bad:
                raise
            batch.warnings.append(f"skipped: {exc}")
            continue
        batch.trials.append(trial)
        batch.warnings.extend(trial.warnings)
    return batch


def _first_line(raw: bytes, p: Path) -> Any:
    end = raw.find(b"\n")
    line = raw if end < 0 else raw[:end]
    if not line.strip().startswith(b"{"):
        return None
    try:
        return parse_json(line.decode("utf-8"), str(p), line=1)
    except JsonSyntaxError:
        return None
    except UnicodeDecodeError:
        return None


def _load_file(p: Path) -> Batch:
    if p.suffix == ".jsonl" and not is_sidecar(p) and b'"cutin.session/' in read_head(p):
        trial = load_log(p)  # read a line at a time, never held whole
        return Batch([trial], list(trial.warnings))
    try:
        raw = read_bytes(p)
    except FileError as exc:
        raise LoadError(str(exc)) from None
    if not raw.strip():
        raise LoadError(f"{p}: empty file; {EXPECTED}")
    kind = binary_kind(raw)
    if kind is not None:  # one short line, whatever the file is named
        raise LoadError(f"{p}: a binary file ({kind}), not a cutin session log or τ2-bench file")
    head = _first_line(raw, p)
    one_line = b"\n" not in raw.rstrip()
    if isinstance(head, dict) and "schema" in head:
        if head.get("schema") == SIDECAR_SCHEMA:
            return _load_sidecar(p, head)
        if str(head.get("schema", "")).startswith("cutin.session/") or p.suffix == ".jsonl":
            trial = load_log(p)
            return Batch([trial], list(trial.warnings))
    if p.suffix == ".jsonl" and head is None:
        raise LoadError(f"{p}:1: not a cutin session log (line 1 is not JSON); {EXPECTED}")
    if p.suffix == ".jsonl" and head is not None and not is_results(head):
        raise LoadError(
            f'{p}:1: not a cutin session log (line 1 has no "schema" field); {EXPECTED}'
        )
    data = head if (head is not None and one_line) else _parse_whole(p, raw)
    if is_results(data):
        sims_dir = p.parent / SIMULATIONS_DIR
        if not isinstance(data.get("simulations"), list) or (
            not data.get("simulations") and sims_dir.is_dir() and p.name == RESULTS_FILE
        ):
            if sims_dir.is_dir():
                return _with_sidecar(p.parent, load_results_dir(p.parent))
            raise LoadError(
                f'{p}: τ2 results metadata without "simulations" and with no '
                f"{SIMULATIONS_DIR}/ folder beside it"
            )
        return _with_sidecar(p, load_results_file(p, data))
    if is_simulation(data):
        return _with_sidecar(p, load_simulation_file(p, data))
    if is_wrapped_simulation(data):
        return _with_sidecar(p, load_wrapped_file(p, data))
    raise LoadError(f"{p}: not a cutin log or τ2-bench file; {EXPECTED}")


def _parse_whole(p: Path, raw: bytes) -> Any:
    try:
        return parse_json(decode_text(raw, p), str(p))
    except JsonSyntaxError as exc:
        raise LoadError(f"{exc} (neither a JSONL session log nor JSON); {EXPECTED}") from None


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _with_sidecar(source: Path, trials: list[Trial], sidecar: Path | None = None) -> Batch:
    batch = Batch(trials, _unique(w for t in trials for w in t.warnings))
    car = sidecar or default_sidecar(source)
    if not (car.is_file() or car.is_symlink() or car.exists()):
        return batch
    try:
        read_head(car) or read_bytes(car)  # a FIFO, device or folder: say so
        batch.warnings.extend(merge_sidecar(car, trials))
    except FileError as exc:
        # The τ2 results are fine without their sidecar: shown, and the sidecar named.
        batch.warnings.append(f"verdict sidecar not read: {exc}")
        return batch
    for trial in trials:
        trial.meta.setdefault("sidecars", []).append(str(car))
    return batch


def _load_sidecar(p: Path, head: dict[str, Any]) -> Batch:
    source = Path(str(head.get("source", "")))
    if not head.get("source") or not exists(source):
        raise LoadError(f"{p}: the τ2 input this sidecar names ({source}) does not exist")
    inner = load_path(source)
    if default_sidecar(source).resolve() == p.resolve():
        return inner  # already merged
    inner.warnings.extend(merge_sidecar(p, inner.trials))
    for trial in inner.trials:
        trial.meta.setdefault("sidecars", []).append(str(p))
    return inner


def load_one(path: Path) -> Batch | str:
    """The trials of ``path``, or one line naming it and saying why it cannot be loaded
    (the replay screen's loader and :func:`preflight` use the same)."""
    try:
        return load_path(path, skip_bad=True)
    except LoadError as exc:
        text = str(exc)
    except OSError as exc:
        text = f"{path}: cannot read: {exc.strerror or exc}"
    return text


def preflight(paths: Sequence[Path]) -> tuple[list[Batch | str], list[str]]:
    """Load ``paths`` in order until one holds a call or trial: (each result so far,
    what went wrong with each path before it). Problems and no trial in any result
    mean that nothing can be shown: a folder whose logs are all bad counts too (its
    skipped logs are the problems)."""
    done: list[Batch | str] = []
    problems: list[str] = []
    for path in paths:
        result = load_one(path)
        done.append(result)
        if isinstance(result, str):
            problems.append(result)
        elif result.trials:
            break
        else:
            skipped = [w.removeprefix("skipped: ") for w in result.warnings]
            problems.extend(skipped or [f"{path}: holds no call or trial"])
    return done, problems


__all__ = [
    "EXPECTED",
    "load_batch",
    "load_log",
    "load_log_preview",
    "load_one",
    "load_path",
    "load_paths",
    "preflight",
    "recent_sessions",
    "session_files",
]
