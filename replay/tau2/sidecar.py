"""Verdicts about τ2 trials, kept beside the τ2 files instead of inside them.

τ2-bench's results are not ours to edit, so ``cutin judge`` on a τ2 import writes a
*sidecar*: ``<results name>.cutin-verdicts.jsonl`` next to the results file or
directory (or any path given with ``--sidecar``). Line 1 is a header
``{"schema": "cutin.verdicts/1", "source": "<absolute path of the τ2 input>"}``;
every later line is a session-log verdict event plus ``"trial": "<simulation id>"``.
Like a session log it is only ever appended to. Loading a τ2 input picks up its
default sidecar; opening a sidecar itself loads the input its header names.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replay.cutin_log.session_import import log_verdict, verdict_from_log
from replay.errors import LoadError
from replay.model import Trial
from sessions.hostile.safe_files import (
    FileError,
    JsonSyntaxError,
    binary_kind,
    inert_json,
    parse_json,
    read_bytes,
    read_head,
)
from sessions.log.models import Verdict as LogVerdict
from sessions.log.writer import append_events

SIDECAR_SCHEMA = "cutin.verdicts/1"
SIDECAR_SUFFIX = ".cutin-verdicts.jsonl"


def default_sidecar(source: Path) -> Path:
    """Where the sidecar of a τ2 results file or directory lives by default."""
    source = Path(source)
    return source.parent / f"{source.name}{SIDECAR_SUFFIX}"


def is_sidecar(path: Path) -> bool:
    return Path(path).name.endswith(SIDECAR_SUFFIX)


def sidecar_source(path: Path) -> Path:
    """The τ2 input a sidecar's header names."""
    header = _header(Path(path))
    return Path(str(header["source"]))


def _header(path: Path) -> dict[str, Any]:
    first = read_head(path, 64 * 1024)
    try:
        header = parse_json(first.decode("utf-8"), str(path), line=1)
    except (FileError, UnicodeDecodeError):
        header = None
    if not isinstance(header, dict) or header.get("schema") != SIDECAR_SCHEMA:
        kind = binary_kind(first)
        if kind is not None:
            raise LoadError(f"{path}: a binary file ({kind}), not a cutin verdict sidecar")
        raise LoadError(
            f'{path}: not a cutin verdict sidecar (line 1 must have "schema": "{SIDECAR_SCHEMA}")'
        )
    if not isinstance(header.get("source"), str):
        raise LoadError(f'{path}: sidecar header has no "source" path')
    return header


def write_verdicts(path: Path, source: Path, trial: Trial, verdicts: list[Any]) -> None:
    """Append ``verdicts`` (model verdicts of ``trial``) to the sidecar at ``path``,
    creating it with its header first."""
    path = Path(path)
    if not path.exists():
        header = {
            "schema": SIDECAR_SCHEMA,
            "source": str(Path(source).resolve()),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        with path.open("x", encoding="utf-8") as fh:
            # inert_json: a path with undecodable bytes (lone surrogates) is escaped,
            # not an encoding error; C1 and DEL never go to the file raw.
            fh.write(inert_json(json.dumps(header, ensure_ascii=False)) + "\n")
    else:
        _header(path)
    events = []
    for v in verdicts:
        event = log_verdict(v, trial)
        events.append(LogVerdict.model_validate({**event.model_dump(), "trial": trial.id}))
    append_events(path, list(events))


def merge_sidecar(path: Path, trials: list[Trial]) -> list[str]:
    """Add the sidecar's verdicts to matching trials; returns warnings."""
    _header(path)
    by_id = {t.id: t for t in trials}
    warnings: list[str] = []
    try:
        lines = read_bytes(path).split(b"\n")
    except FileError as exc:
        raise LoadError(str(exc)) from None
    torn = bool(lines[-1])
    bad: list[int] = []
    for lineno, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        try:
            data = parse_json(raw.decode("utf-8"), str(path), line=lineno)
            event = LogVerdict.model_validate(data, strict=True)
        except (FileError, UnicodeDecodeError, ValidationError) as exc:
            if (
                lineno == len(lines)
                and torn
                and isinstance(exc, JsonSyntaxError | UnicodeDecodeError)
            ):
                warnings.append(f"{path}:{lineno}: truncated last line ignored")
            else:
                bad.append(lineno)
            continue
        trial = by_id.get(str(data.get("trial")))
        if trial is None:
            warnings.append(f"{path}:{lineno}: no trial {data.get('trial')!r} in the τ2 input")
            continue
        trial.verdicts.append(verdict_from_log(event, trial))
    if bad:
        shown = ", ".join(str(n) for n in bad[:5]) + (", …" if len(bad) > 5 else "")
        warnings.append(f"{path}: skipped {len(bad)} bad line(s) (line {shown})")
    return warnings


__all__ = [
    "SIDECAR_SCHEMA",
    "SIDECAR_SUFFIX",
    "default_sidecar",
    "is_sidecar",
    "merge_sidecar",
    "sidecar_source",
    "write_verdicts",
]
