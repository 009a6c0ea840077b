"""A run folder → the calls a check evaluates (the only file reading of a check).

Every session log below the folder is read (:func:`sessions.log.read_session`); a
folder with none, or a log that cannot be read, is one line (:class:`LoadError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from replay.errors import LoadError
from sessions.hostile.safe_files import exists, is_dir, is_file, shown_name

if TYPE_CHECKING:
    from replay.audit.agent_measures import AgentCall
    from replay.model import Trial


@dataclass(slots=True)
class RunCall:
    """One logged call of a run, as a check needs it."""

    name: str
    scenario: str | None
    trial: Trial
    """The call's turns (the agent's as cutin's ears transcribed them) and verdicts."""
    agent: AgentCall | None
    """Its agent-under-test counts (None: not a call to a black-box agent)."""
    lag_p99_s: float | None
    """The frame lag its ``end`` event logged (p99, seconds), if any."""


def load_run(folder: Path | str) -> list[RunCall]:
    """The calls of a run folder (or of one session log), in path order."""
    from replay.audit.agent_measures import call_of_trial
    from replay.cutin_log.session_import import trial_from_session
    from replay.load import session_files
    from sessions.log import LogError, read_session
    from sessions.log.models import EndEvent

    path = Path(folder)
    if not exists(path):
        raise LoadError(f"{shown_name(path)}: no such file or directory")
    if is_dir(path):
        logs = session_files(path)
        if not logs:
            raise LoadError(f"{shown_name(path)}: no session logs (*.jsonl) here: not a run folder")
    elif is_file(path):
        logs = [path]
    else:
        raise LoadError(f"{shown_name(path)}: not a run folder or a session log")
    calls: list[RunCall] = []
    for log in logs:
        try:
            session = read_session(log)
        except LogError as exc:
            raise LoadError(str(exc)) from None
        trial = trial_from_session(session)
        ends = session.of(EndEvent)
        lag = ends[-1].frame_lag if ends else None
        calls.append(
            RunCall(
                name=shown_name(log.stem),
                scenario=session.header.scenario,
                trial=trial,
                agent=call_of_trial(trial),
                lag_p99_s=None if lag is None else lag.p99_s,
            )
        )
    return calls


__all__ = ["RunCall", "load_run"]
