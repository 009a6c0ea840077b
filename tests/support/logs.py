"""Writing crafted session logs with the real :class:`~sessions.log.SessionWriter`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sessions.log import Event, Header, SessionWriter


def write_log(path: Path, head: Header, events: Iterable[Event]) -> Path:
    """Write ``head`` and then ``events`` to ``path`` as a session log; returns ``path``."""
    with SessionWriter(path, head) as writer:
        for event in events:
            writer.write(event)
    return path
