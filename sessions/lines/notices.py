"""What a line says, the same way for every transport: its notices and its failures.

:class:`NoticeBoard` is a line's notice queue (thread-safe). Every detail on it is one
line, bounded, free of secrets (the line's :class:`~sessions.hostile.redact.Redactor`) and of
anything a terminal acts on; every string in its data too (cut to :data:`MAX_TEXT`,
the data bounded in entries and depth). Nothing an agent sends can grow the log without
bound: ERROR notices of one kind are shown :data:`ERRORS_PER_KIND` times, then only
counted, and of kinds named after the agent's words (``event:NAME``) at most
:data:`ERROR_KINDS` names; a line gives at most
:data:`NOTICES_PER_KIND` notices of one kind and :data:`NOTICE_BYTES` of notice text in
all. What was only counted is in :meth:`NoticeBoard.counts`, which the line's
``summary`` notice reports at its end.

:func:`connect_failure` words why a WebSocket could not be opened (one line naming the
redacted target), :func:`check_ws_url` refuses a URL that cannot be dialled.
"""

from __future__ import annotations

import math
import socket
import ssl
import threading
from collections import deque
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from sessions.hostile.inert_text import clean_text, terminal_line
from sessions.hostile.redact import Redactor
from sessions.lines.base import LineError, LineNotice, NoticeKind

ERRORS_PER_KIND = 3
"""How many ERROR notices of one kind are shown before the rest are only counted."""
ERROR_KINDS = 20
"""How many distinct names of one family of capped notices (``event:NAME``: an error
about an event the agent named, an unknown event) are shown; an agent invents its own
event names, so those past this are only counted."""
NOTICES_PER_KIND = 10_000
"""Notices of one :class:`NoticeKind` a line gives; the rest are only counted."""
NOTICE_BYTES = 4 << 20
"""The text all of a line's notices may hold (details and data); past it they are only
counted. The notices that say how the line opened and ended are always given."""
MAX_TEXT = 500
"""A notice's detail, and every string in its data, is cut to this many characters."""
MAX_ITEMS = 32
"""Entries of one dict or list kept in a notice's data (nested no deeper than 4)."""
COUNTED_KEYS = 30
"""Distinct kinds a line's summary counts one by one (the rest add up as ``other``)."""

_UNCAPPED = frozenset(
    {NoticeKind.OPEN, NoticeKind.FORMAT, NoticeKind.CLOSED, NoticeKind.FAILED, NoticeKind.SUMMARY}
)
_DEPTH = 4
_PRE_CUT = 8 * MAX_TEXT
"""Text is cut to this before redaction (so a megabyte is never scanned), and to
:data:`MAX_TEXT` after: a secret the first cut splits lies far past the second."""


class NoticeBoard:
    """A line's notices, cleaned and bounded on the way in; drained by :meth:`drain`.

    Every detail is one line of at most :data:`MAX_TEXT` characters with no secret and
    nothing a terminal acts on; every string in the data has the same treatment (newlines
    and tabs kept), and the data is bounded in size and depth (non-finite numbers become
    ``None``). What is held back is counted: :meth:`counts` for the line's summary.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._lock = threading.Lock()
        self._notices: deque[LineNotice] = deque()
        self._key_counts: dict[tuple[str, str], int] = {}
        self._family_names: dict[tuple[str, str], int] = {}
        self._kind_counts: dict[str, int] = {}
        self._bytes = 0
        self._said_once: set[str] = set()
        self._suppressed: dict[str, int] = {}
        self.truncated = 0
        """Strings cut to :data:`MAX_TEXT` (details and data)."""

    def notify(
        self, kind: NoticeKind, detail: str = "", data: dict[str, Any] | None = None
    ) -> bool:
        """Give a notice (False: over a cap, only counted)."""
        text = self.clean(detail)
        fitted, size = self._fit(data or {}, 0)
        with self._lock:
            if kind not in _UNCAPPED and not self._admit(kind, size + len(text)):
                return False
            self._notices.append(LineNotice(kind, text, fitted))
        return True

    def error(self, key: str, detail: str, data: dict[str, Any] | None = None) -> None:
        """An ERROR notice; past :data:`ERRORS_PER_KIND` of one ``key``, only counted."""
        self.capped(key, NoticeKind.ERROR, detail, {"kind": key, **(data or {})})

    def capped(
        self,
        key: str,
        kind: NoticeKind,
        detail: str,
        data: dict[str, Any] | None = None,
        per_key: int = ERRORS_PER_KIND,
    ) -> None:
        """A notice shown ``per_key`` times per ``key``, then only counted (saying so once).

        A key ``family:NAME`` names the agent's own words (``event:teleport``): of one
        family and notice kind only :data:`ERROR_KINDS` distinct names are shown, the
        rest counted together (``error:event:*``), so invented names cannot crowd out
        the line's fixed kinds (``rate``, ``mark_too_long``...), which are always shown."""
        key = terminal_line(key[:60])
        slot = (str(kind), key)
        family = key.partition(":")[0] if ":" in key else ""
        with self._lock:
            count = self._key_counts.get(slot)
            if count is None and family:
                names = self._family_names.get((str(kind), family), 0)
                if names >= ERROR_KINDS:
                    self._count(f"{kind}:{family}:*")
                    if f"family:{kind}:{family}" not in self._said_once:
                        self._said_once.add(f"family:{kind}:{family}")
                        self._append(
                            kind,
                            f"the agent sent {kind} notices of over {ERROR_KINDS} {family}"
                            " kinds; further ones are only counted (see the line's summary)",
                            {"kind": f"{family}:*", "suppressed": True, "limit": ERROR_KINDS},
                        )
                    return
                self._family_names[(str(kind), family)] = names + 1
            count = (count or 0) + 1
            self._key_counts[slot] = count
            if count > per_key:
                self._count(f"{kind}:{key}")
        if count <= per_key:
            self.notify(kind, detail, data)
        elif count == per_key + 1:
            self.notify(
                kind,
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

    def counts(self) -> dict[str, Any]:
        """What was held back so far: notices only counted (by kind), strings cut."""
        with self._lock:
            suppressed = dict(self._suppressed)
        out: dict[str, Any] = {}
        if suppressed:
            out["suppressed"] = suppressed
            out["suppressed_total"] = sum(suppressed.values())
        if self.truncated:
            out["truncated_texts"] = self.truncated
        return out

    def summarize(self, dropped: Iterable[tuple[str, int | float, str]]) -> None:
        """The line's SUMMARY notice, given before its last one if anything was held
        back: the board's own counts plus each ``(key, amount, phrase)`` the line
        dropped (``amount`` non-zero; ``phrase`` already holds the number, or is empty
        for a figure that only goes in the data)."""
        data = self.counts()
        parts = []
        if "suppressed" in data:
            parts.append(f"{data['suppressed_total']} notices only counted")
        if "truncated_texts" in data:
            parts.append(f"{data['truncated_texts']} texts cut")
        for key, amount, phrase in dropped:
            if amount:
                data[key] = amount
                if phrase:
                    parts.append(phrase)
        if parts:
            self.notify(NoticeKind.SUMMARY, "held back: " + ", ".join(parts), data)

    def clean(self, text: str) -> str:
        """One line, bounded, no secrets, nothing a terminal would act on."""
        text = str(text)
        if len(text) > _PRE_CUT:
            text = text[:_PRE_CUT]
        out = terminal_line(self._redactor(" ".join(text.split())))
        if len(out) > MAX_TEXT:
            self.truncated += 1
            out = out[: MAX_TEXT - 1] + "…"
        return out

    def scrub(self, value: Any) -> Any:
        """``value`` as a notice's data holds it (see :class:`NoticeBoard`)."""
        return self._fit(value, 0)[0]

    # -- inside ------------------------------------------------------------------------

    def _admit(self, kind: NoticeKind, size: int) -> bool:
        """Under the lock: whether a notice fits its kind's count and the byte budget."""
        count = self._kind_counts.get(str(kind), 0) + 1
        self._kind_counts[str(kind)] = count
        if count <= NOTICES_PER_KIND and self._bytes + size <= NOTICE_BYTES:
            self._bytes += size
            return True
        self._count(str(kind))
        over = "count" if count > NOTICES_PER_KIND else "bytes"
        if f"over:{over}:{kind}" not in self._said_once:
            self._said_once.add(f"over:{over}:{kind}")
            limit = f"{NOTICES_PER_KIND}" if over == "count" else size_text(NOTICE_BYTES)
            self._append(
                NoticeKind.NOTE,
                f"the line's {kind} notices reached {limit}; further ones are only counted"
                " (see the line's summary)",
                {"kind": "notice_cap", "notice": str(kind), "limit": over},
            )
        return False

    def _append(self, kind: NoticeKind, detail: str, data: dict[str, Any]) -> None:
        """Under the lock: a notice of cutin's own words, past every cap."""
        self._notices.append(LineNotice(kind, detail, data))

    def _count(self, key: str) -> None:
        if key not in self._suppressed and len(self._suppressed) >= COUNTED_KEYS:
            key = "other"
        self._suppressed[key] = self._suppressed.get(key, 0) + 1

    def _text(self, text: str) -> str:
        if len(text) > _PRE_CUT:
            text = text[:_PRE_CUT]
        out = clean_text(self._redactor(text))
        if len(out) > MAX_TEXT:
            self.truncated += 1
            out = out[: MAX_TEXT - 1] + "…"
        return out

    def _fit(self, value: Any, depth: int) -> tuple[Any, int]:
        """``value`` bounded (strings, entries, depth), cleaned and redacted; its size."""
        if isinstance(value, str):
            text = self._text(value)
            return text, len(text) + 2
        if isinstance(value, bool) or value is None:
            return value, 5
        if isinstance(value, int):
            return (value if abs(value) < 1 << 63 else self._text(str(value)[:40])), 20
        if isinstance(value, float):
            return (value if math.isfinite(value) else None), 20
        if depth >= _DEPTH:
            return "…", 3
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            size = 2
            for i, (k, v) in enumerate(value.items()):
                if i >= MAX_ITEMS:
                    out["…"] = f"{len(value) - MAX_ITEMS} more"
                    break
                fitted, n = self._fit(v, depth + 1)
                key = self._text(str(k)[:100])
                out[key] = fitted
                size += n + len(key) + 4
            return out, size
        if isinstance(value, list | tuple):
            items: list[Any] = []
            size = 2
            for v in list(value[:MAX_ITEMS]):
                fitted, n = self._fit(v, depth + 1)
                items.append(fitted)
                size += n + 1
            if len(value) > MAX_ITEMS:
                items.append(f"… {len(value) - MAX_ITEMS} more")
            return items, size
        text = self._text(str(value)[:_PRE_CUT])
        return text, len(text) + 2


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
