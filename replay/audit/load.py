"""Paths → audit conversations (the file reading; the counting is elsewhere).

A cutin session log is read with :func:`sessions.log.read_session` (the audit needs
its raw events: opportunities, pause indices, turn ends). Everything τ2 goes through
:func:`replay.load.load_path`. A directory holding ``results.json`` is a τ2 results
folder; any other directory is searched for session logs (``*.jsonl``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from replay.audit.sessions import Conversation, from_session
from replay.audit.tau2 import from_trial
from replay.audit.texts import split_conversations
from replay.errors import LoadError
from sessions.hostile.safe_files import (
    FileError,
    clean_strings,
    exists,
    is_dir,
    is_file,
    read_head,
    read_text,
    shown_name,
    terminal_line,
)


def _is_session_log(path: Path) -> bool:
    from replay.tau2.sidecar import is_sidecar

    if path.suffix != ".jsonl" or is_sidecar(path):
        return False
    return b'"cutin.session/' in read_head(path)


def load_conversations(
    paths: Iterable[Path | str], *, skip_bad: bool = False
) -> tuple[list[Conversation], list[str]]:
    """Conversations of every path, in order, and the loaders' warnings.
    Raises :class:`replay.errors.LoadError` (one line naming the path)."""
    from replay.load import load_path, session_files
    from replay.tau2 import RESULTS_FILE
    from sessions.log import LogError, read_session

    convs: list[Conversation] = []
    warnings: list[str] = []

    def read_log(log: Path) -> None:
        try:
            session = read_session(log, skip_bad=skip_bad)
        except LogError as exc:
            if not skip_bad:
                raise LoadError(str(exc)) from None
            warnings.append(f"skipped: {exc}")
            return
        warnings.extend(f"{shown_name(log)}: {w}" for w in session.warnings)
        # A log keeps its exact text (ids, names); what the audit prints, JSON
        # included, never carries a control character from it or from the file name.
        convs.append(clean_strings(from_session(session)))

    for raw in paths:
        path = Path(raw)
        if not exists(path):
            raise LoadError(f"{path}: no such file or directory")
        if is_dir(path) and not is_file(path / RESULTS_FILE):
            unlisted: list[str] = []
            logs = session_files(path, unlisted=unlisted if skip_bad else None)
            warnings.extend(f"skipped: {u}" for u in unlisted)
            if not logs and unlisted:
                raise LoadError(unlisted[0])
            if not logs:
                raise LoadError(f"{path}: no session logs (*.jsonl) and no {RESULTS_FILE} here")
            for log in logs:
                read_log(log)
        elif is_file(path) and _is_session_log(path):
            read_log(path)
        else:
            batch = load_path(path, skip_bad=skip_bad)
            warnings.extend(batch.warnings)
            convs.extend(clean_strings(from_trial(t)) for t in batch.trials if t.kind == "tau2")
    # Warnings name files; they reach the audit's JSON and tables as well as stderr.
    return convs, [terminal_line(w) for w in warnings]


def read_texts(path: Path | str) -> list[list[str]]:
    """A text file of user turns: one per line, a blank line between conversations."""
    p = Path(path)
    try:
        text = read_text(p)
    except FileError as exc:
        raise LoadError(str(exc)) from None
    conversations = split_conversations(text.splitlines())
    if not conversations:
        raise LoadError(f"{p}: no user turns (one per line, blank line between conversations)")
    return conversations


__all__ = ["load_conversations", "read_texts"]
