"""The Vonage Voice API WebSocket, with cutin as Vonage's side of the call.

``--agent vonage:ws://HOST:PORT/PATH[?rate=16000]`` dials the agent as Vonage's
``connect`` action with a ``websocket`` endpoint does: the first message is the text
``{"event": "websocket:connected", "content-type": "audio/l16;rate=16000"}`` (plus
any headers the call was given), then the caller's audio goes out as binary messages
of 16-bit little-endian linear PCM (L16), one per 20 ms: 640 bytes at 16 kHz, 320 at
8 kHz (``rate=8000``). The URL is dialled as written.

From the agent it takes binary audio at the same rate, played as it comes (Vonage asks
for 20 ms messages; other sizes are played too and noted once, with a count), and JSON
text commands:

- ``{"action": "clear"}``, Vonage's barge-in: the playout buffer is emptied at once (a
  ``clear`` in the log) and cutin answers ``{"event": "websocket:cleared"}``;
- ``{"action": "notify", "payload": {...}}``: answered with ``{"event":
  "websocket:notify", "payload": {...}}`` once the audio sent before it has played (or
  was cleared), Vonage's equivalent of a mark. A payload is kept as its compact JSON
  text, bounded like a mark's name (:meth:`SocketLine._mark_fits`): one over
  ``max_mark_chars`` characters is refused (``notify_too_long``, not echoed), and at
  most ``max_marks`` wait at once (``notify_limit``), so waiting payloads hold at most
  ``max_marks × max_mark_chars`` characters (256 KiB by default) however they nest.

Anything else is reported (bounded), never a crash. A hang-up closes the socket (code
1000), as Vonage does when the call ends. Binary audio, the socket and the byte
plumbing are :class:`~sessions.lines.pcm.PcmLine`'s; this module is the protocol.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sessions.lines.base import Audio, LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.pcm import PcmLine
from sessions.lines.wire_audio import PlayedMarks

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["VONAGE_RATES", "VonageLine", "make_line"]

VONAGE_RATES = (16000, 8000)
"""What Vonage streams (``audio/l16;rate=16000`` or ``8000``); the first is the default."""


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``vonage:ws://HOST:PORT/PATH[?rate=16000]``."""
    assert spec.url is not None
    return VonageLine(spec.url, rate=spec.rate)


class VonageLine(PcmLine):
    """A :class:`~sessions.lines.base.Line` to an agent behind Vonage's WebSocket."""

    name = "vonage"
    about = "Vonage Voice WebSocket"

    def __init__(
        self,
        url: str,
        *,
        rate: int = VONAGE_RATES[0],
        headers: dict[str, str] | None = None,
        playout: PlayoutBuffer | None = None,
        limits: LineLimits | None = None,
    ) -> None:
        super().__init__(url, rate=rate, playout=playout, limits=limits)
        self.content_type = f"audio/l16;rate={rate}"
        self.headers = dict(headers or {})
        """The call's custom headers, sent in ``websocket:connected``."""
        self._notifies: PlayedMarks[str] = PlayedMarks(self.playout, self.limits.max_marks)
        """Waiting payloads as their compact JSON text (never the parsed object: a 1 MB
        ``[[],[],…]`` is 16 MB of Python lists)."""
        self.off_size_frames = 0
        """Agent audio messages that were not one 20 ms frame."""

    def take(self, n: int) -> Audio:
        out = self.playout.take(n)
        if self._notifies:
            self._answer_notifies()
        return out

    # -- SocketLine hooks ----------------------------------------------------------

    def _handshake(self, deadline: float, timeout_s: float) -> None:
        # Vonage speaks first and waits for nothing: ready before the hello goes (as
        # JsonStreamLine), so an answer the agent sends at once is held until the line is
        # open, never handled (and the line ended) while open still decides.
        self._ready.set()
        hello = {**self.headers, "event": "websocket:connected", "content-type": self.content_type}
        self._conn.send(json.dumps(hello))

    def _opened(self) -> None:
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Vonage WebSocket, {self.content_type} mono",
            {"target": self.target, "content_type": self.content_type},
        )
        self._format_notice("stated in websocket:connected")

    def _ended(self) -> None:
        self._notifies.drop()

    # -- the agent's messages ------------------------------------------------------

    def _on_audio(self, data: bytes) -> None:
        if data and len(data) != self.frame_size:
            self.off_size_frames += 1
            count = self.off_size_frames
            self._counted(
                "frame_size",
                count,
                f"{count} audio message{'s' if count > 1 else ''} not of 20 ms"
                f" ({self.frame_size} bytes); the last was {len(data)} bytes; played"
                " as they come",
                {"bytes": len(data)},
            )
        super()._on_audio(data)
        if self._notifies:
            self._answer_notifies()

    def _on_text(self, message: dict[str, Any], raw: str) -> None:
        action = message.get("action")
        if action == "clear":
            self._clear("Vonage clear")
            self._post(("text", {"event": "websocket:cleared"}))
            self._answer_notifies(cleared=True)
        elif action == "notify":
            text = _compact(message.get("payload", {}), self.limits.max_mark_chars)
            if self._mark_fits(text, len(self._notifies), "notify"):
                self._notifies.add(text)
            self._answer_notifies()
        elif isinstance(action, str):
            self._error("unknown_action", f"an unknown action {action[:30]!r}", {"action": action})
        else:
            self._error("no_action", f"a text message without an action: {raw[:60]!r}")

    def _answer_notifies(self, *, cleared: bool = False) -> None:
        for text in self._notifies.due(cleared=cleared):
            payload = json.loads(text)
            shown = json.dumps(payload)[:80]
            how = "cleared" if cleared else "played"
            # Said before it is sent: the agent's answer to it can come at once.
            self._notify(
                NoticeKind.MARK,
                f"notify {shown} {how}",
                {"name": shown, "cleared": cleared},
            )
            self._post(("text", {"event": "websocket:notify", "payload": payload}))


def _compact(payload: Any, limit: int) -> str:
    """``payload`` as compact JSON text (at most the 1 MiB message it came in, for a
    moment); one that cannot be written back is a string just over ``limit``, so that
    it is refused like one too long."""
    try:
        return json.dumps(payload, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        return "?" * (limit + 1)
