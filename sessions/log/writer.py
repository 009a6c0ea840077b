"""Append-only JSONL writer: one event per line, flushed as it happens.

A crash loses at most the line being written. Turn ends and the end of the call
are also fsync'ed, so a power cut keeps every finished turn.
"""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from pydantic import BaseModel

from sessions.log.models import AgentTurnEnd, EndEvent, Event, Header, TurnEnd

_SYNC_TYPES = (AgentTurnEnd, TurnEnd, EndEvent)


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def _unset_fields(model: BaseModel) -> dict[str, Any]:
    """Declared fields that hold None (recursively): left out of the line to keep it short.

    Unlike ``exclude_none`` this never drops an *unknown* field, so a null the
    reader did not understand is written back unchanged."""
    spec: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        if value is None:
            spec[name] = True
        elif isinstance(value, BaseModel):
            inner = _unset_fields(value)
            if inner:
                spec[name] = inner
    return spec


def dump_line(model: Header | Event) -> str:
    """One log line (with its newline) for a header or an event."""
    return model.model_dump_json(by_alias=True, exclude=_unset_fields(model)) + "\n"


def _ends_torn(path: Path) -> bool:
    """True when a non-empty file does not end with a newline (a crash cut its last line)."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except FileNotFoundError:
        return False


class SessionWriter:
    """Writes one session log. Safe to call from several threads.

    ``header_later``: the file is created now but its header line waits for
    :meth:`write_header` (a call's header is written when its clock starts, with the
    instant of t = 0); an event or :meth:`close` before that writes ``header`` as given."""

    def __init__(
        self, path: Path, header: Header, *, append: bool = False, header_later: bool = False
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._fh: IO[str] | None
        self._header_due = False
        if append:
            torn = _ends_torn(self.path)
            self._fh = self.path.open("a", encoding="utf-8")
            if torn:
                # A crash left a partial last line; start ours on a fresh one.
                self._fh.write("\n")
        else:
            self._fh = self.path.open("x", encoding="utf-8")
            if header_later:
                self._header_due = True
            else:
                self._fh.write(dump_line(header))
                self._fh.flush()
        self.header = header
        self.count = 0

    def write_header(self, header: Header) -> bool:
        """Write the waiting header line as ``header``; False (and nothing written) when
        the header is already in the file or the log is closed."""
        with self._lock:
            if self._fh is None or not self._header_due:
                return False
            self.header = header
            self._put_header()
            return True

    def _put_header(self) -> None:
        assert self._fh is not None
        self._header_due = False
        self._fh.write(dump_line(self.header))
        self._fh.flush()

    @property
    def closed(self) -> bool:
        return self._fh is None

    def write(self, event: Event) -> None:
        line = dump_line(event)
        with self._lock:
            if self._fh is None:
                raise ValueError(f"session log {self.path} is closed")
            if self._header_due:
                self._put_header()
            self._fh.write(line)
            self._fh.flush()
            self.count += 1
            if isinstance(event, _SYNC_TYPES):
                os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            if self._fh is None:
                return
            if self._header_due:
                self._put_header()
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def append_events(path: Path, events: list[Event]) -> None:
    """Append events to an existing log without touching earlier lines (e.g. verdicts)."""
    path = Path(path)
    needs_newline = _ends_torn(path)
    with path.open("a", encoding="utf-8") as out:
        if needs_newline:
            # A crash left a partial last line; start ours on a fresh one.
            out.write("\n")
        for event in events:
            out.write(dump_line(event))
        out.flush()
        os.fsync(out.fileno())
