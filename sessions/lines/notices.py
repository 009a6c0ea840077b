"""What a line says, the same way for every transport: its notices and its failures.

:class:`NoticeBoard` is a line's notice queue (thread-safe). Every detail on it is one
line, bounded, free of secrets (the line's :class:`~sessions.redact.Redactor`) and of
anything a terminal acts on; every string in its data has the secrets blanked. ERROR
notices of one kind are shown :data:`ERRORS_PER_KIND` times, then only counted, so an
agent repeating a bad message cannot flood the log.

:func:`connect_failure` words why a WebSocket could not be opened (one line naming the
redacted target), :func:`check_ws_url` refuses a URL that cannot be dialled.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from sessions.inert_text import terminal_line
from sessions.lines.base import LineError, LineNotice, NoticeKind
from sessions.redact import Redactor

ERRORS_PER_KIND = 3
"""How many ERROR notices of one kind are shown before the rest are only counted."""
MAX_TEXT = 500
"""A notice's detail is cut to this many characters."""


class NoticeBoard:
    """A line's notices, cleaned on the way in; drained by :meth:`drain`."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._lock = threading.Lock()
        self._notices: deque[LineNotice] = deque()
        self._error_counts: dict[str, int] = {}
        self._said_once: set[str] = set()

    def notify(
        self, kind: NoticeKind, detail: str = "", data: dict[str, Any] | None = None
    ) -> None:
        notice = LineNotice(kind, self.clean(detail), self.scrub(data or {}))
        with self._lock:
            self._notices.append(notice)

    def error(self, key: str, detail: str, data: dict[str, Any] | None = None) -> None:
        """An ERROR notice; past :data:`ERRORS_PER_KIND` of one ``key``, only counted."""
        with self._lock:
            count = self._error_counts.get(key, 0) + 1
            self._error_counts[key] = count
        if count <= ERRORS_PER_KIND:
            self.notify(NoticeKind.ERROR, detail, {"kind": key, **(data or {})})
        elif count == ERRORS_PER_KIND + 1:
            self.notify(
                NoticeKind.ERROR,
                f"more of the same ({key}); further ones are only counted",
                {"kind": key, "suppressed": True},
            )

    def once(self, key: str, kind: NoticeKind, detail: str, data: dict[str, Any]) -> None:
        """A notice given the first time ``key`` comes up, never again."""
        with self._lock:
            if key in self._said_once:
                return
            self._said_once.add(key)
        self.notify(kind, detail, data)

    def drain(self) -> list[LineNotice]:
        with self._lock:
            out = list(self._notices)
            self._notices.clear()
        return out

    def clean(self, text: str) -> str:
        """One line, bounded, no secrets, nothing a terminal would act on."""
        return terminal_line(self._redactor(" ".join(str(text).split())))[:MAX_TEXT]

    def scrub(self, value: Any) -> Any:
        """``value`` with secrets blanked in every string in it (nested too); the text
        itself is kept (a transcript delta's spaces matter), the log makes it inert."""
        if isinstance(value, str):
            return self._redactor(value)
        if isinstance(value, dict):
            return {k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value


def size_text(n: int) -> str:
    """1048576 → "1 MiB", 4096 → "4 KiB" (limits as the user reads them)."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} bytes"


def check_ws_url(url: str, name: str, shown: str) -> None:
    """:class:`LineError` (one line, naming ``shown``, the redacted URL) unless ``url``
    can be dialled as a WebSocket."""
    scheme = urlsplit(url).scheme.lower() if "://" in url else ""
    if scheme not in ("ws", "wss"):
        raise LineError(f"{name}: the agent URL must start with ws:// or wss:// (got {shown})")
    try:
        parts = urlsplit(url)
        valid = bool(parts.hostname) and (parts.port or 0) >= 0
    except ValueError:
        valid = False
    if not valid:
        raise LineError(f"{name}: {shown} is not a valid WebSocket URL (host, port?)")


def close_detail(target: str, code: int | None, reason: str, *, clean: bool) -> str:
    """How the agent's side of the socket ended, in words (``code`` None: no close frame)."""
    because = f": {reason}" if reason else ""
    if code is None:
        return f"connection to {target} lost: it dropped without a close frame"
    if clean:
        return f"the agent closed the line (code {code}{because})"
    return f"the agent closed the line abnormally (code {code}{because}) at {target}"


def why(exc: BaseException) -> str:
    """``Type: message`` (or the type alone) of an exception, for one line of text."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def handshake_failure(name: str, target: str, why_text: str, exc: BaseException) -> str:
    """Why the handshake after the upgrade failed, in one line (before redaction)."""
    from websockets.exceptions import ConnectionClosed

    if isinstance(exc, ConnectionClosed):
        code = exc.rcvd.code if exc.rcvd is not None else 1006
        return f"{name}: {target} closed the connection during the handshake (code {code})"
    return f"{name}: the handshake with {target} failed: {why_text}"


def connect_failure(
    name: str, target: str, exc: BaseException, timeout_s: float, key_hint: str = ""
) -> str:
    """Why the socket to ``target`` did not open, in one line (before redaction).

    ``key_hint`` is added when the agent refuses the upgrade with HTTP 401 or 403."""
    from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

    where = f"{name}: cannot connect to {target}"
    if isinstance(exc, InvalidStatus):
        status = exc.response.status_code
        hint = key_hint if status in (401, 403) else ""
        return f"{where} (HTTP {status}: the agent refused the WebSocket upgrade{hint})"
    if isinstance(exc, InvalidURI):
        return f"{name}: {target} is not a valid WebSocket URL"
    if isinstance(exc, TimeoutError):
        return f"{where} (no answer within {timeout_s:g} s)"
    if isinstance(exc, socket.gaierror):
        return f"{where} (host {urlsplit(target).hostname!r} not found)"
    if isinstance(exc, ConnectionRefusedError):
        return f"{where} (connection refused: nothing listens there)"
    if isinstance(exc, ssl.SSLError):
        return f"{where} (TLS failed: {why(exc)})"
    if isinstance(exc, InvalidHandshake):
        return f"{where} (not a WebSocket server: {why(exc)})"
    if isinstance(exc, OSError):
        return f"{where} ({exc.strerror or why(exc)})"
    return f"{where} ({why(exc)})"
