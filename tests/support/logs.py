"""The one way tests build session logs: a header and events, written with the real
:class:`~sessions.log.SessionWriter` (so a crafted log is a log cutin could have written).

    path = write_log(tmp_path / "one.jsonl", events)                 # header("one")
    path = write_log(tmp_path / "a.jsonl", events, header("a", policy="rules"))
    head = header("k", agent=AgentInfo(kind="twilio", name="bot"), seeds={"seed": 1})
    path = write_log(tmp_path / "x.jsonl", [])                       # a header alone

:func:`header` fills what every header needs (a fixed ``started_at``), a scenario and
tendencies; any field given replaces its default, and a field given as ``None`` is left
out (``scenario=None, tendencies=None``: a header with neither).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sessions.log import Event, Header, SessionWriter
from sessions.log.models import TendencyValues

STARTED_AT = "2026-01-01T10:00:00+00:00"
"""Every crafted header's start unless a test gives its own."""


def tendencies(alpha: float = 0.5, beta: float = 0.7, gamma: float = 0.3) -> TendencyValues:
    return TendencyValues(alpha=alpha, beta=beta, gamma=gamma)


def header(session_id: str = "crafted01", **fields: Any) -> Header:
    """A header for ``session_id``: ``started_at`` :data:`STARTED_AT`, scenario
    ``crafted`` and :func:`tendencies`' defaults, each replaced by ``fields`` (with any
    other header field)."""
    values: dict[str, Any] = {
        "started_at": STARTED_AT,
        "scenario": "crafted",
        "tendencies": tendencies(),
        **fields,
    }
    return Header(session_id=session_id, **{k: v for k, v in values.items() if v is not None})


def write_log(path: Path, events: Iterable[Event] = (), head: Header | None = None) -> Path:
    """``head`` (by default :func:`header` named for the file) and then ``events`` as a
    session log at ``path`` (its folder made, the file new); returns ``path``."""
    with SessionWriter(path, head if head is not None else header(path.stem)) as writer:
        for event in events:
            writer.write(event)
    return path
