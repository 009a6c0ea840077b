"""Raw PCM16 over a WebSocket, and the PCM16 plumbing of the lines built on it.

``--agent pcm:ws://HOST:PORT/PATH?rate=16000`` dials an agent that takes a plain
WebSocket of audio, the way many web and app clients reach one:

- **Audio, both ways**: binary messages of signed 16-bit little-endian mono PCM at the
  URL's ``rate`` (8000, 16000 or 24000; 16000 when absent; any other value is refused
  before anything is dialled). The URL is dialled as written, so an agent that reads
  ``rate`` itself sees the same value. cutin sends the caller's audio in real time as
  20 ms frames (640 bytes at 16 kHz), silence included, as a phone line carries it.
  What the agent sends is played as it comes, in messages of any size; a message with
  an odd number of bytes is reported, its last byte kept for the next message (a
  stream cut at any byte still plays), and a text message that is not a known command
  is reported too. Nothing an agent sends ends the call but a close.
- **No handshake**: the line is open once the socket is; either side may speak first.
- **How a yield is seen**: a raw PCM agent has no control channel, so when it stops
  talking its audio simply ends; what it had already sent still plays out from cutin's
  playout buffer, as it would from a client's. Optionally, the agent sends the text
  message ``{"type": "clear"}`` when it stops: cutin then empties the playout buffer at
  once (a ``clear`` in the log, the seconds it dropped), as a client honouring it would.
- **Hang-up**: cutin closes the socket (code 1000); the agent's close is the close-code
  rule of every line.

:class:`PcmLine` is also the base of the Vonage line, which carries the same binary
audio with JSON commands of its own. The PCM16 plumbing both ways (and Exotel's) is in
:mod:`sessions.lines.wire_audio`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sessions.hostile.redact import redact_url
from sessions.lines.base import LineError, LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.socket_line import SocketLine
from sessions.lines.wire_audio import Pcm16In, WireFrames, frame_bytes

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["PCM_RATES", "PcmLine", "make_line"]

PCM_RATES = (8000, 16000, 24000)
DEFAULT_RATE = 16000
FRAME_MS = 20


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``pcm:ws://HOST:PORT/PATH?rate=16000``."""
    assert spec.url is not None
    return PcmLine(spec.url, rate=spec.rate)


class PcmLine(SocketLine):
    """A :class:`~sessions.lines.base.Line` of raw PCM16 in binary WebSocket messages.

    Subclasses (Vonage) keep the binary audio and the socket, and speak their own
    text messages by overriding :meth:`_handshake`, :meth:`_on_text` and :meth:`_opened`.
    """

    name = "pcm"
    about = "raw PCM16"

    def __init__(
        self,
        url: str,
        *,
        rate: int = DEFAULT_RATE,
        playout: PlayoutBuffer | None = None,
        limits: LineLimits | None = None,
    ) -> None:
        if rate not in PCM_RATES:
            raise LineError(
                f"{self.name}: the sample rate must be 8000, 16000 or 24000, not {rate}"
            )
        super().__init__(redact_url(url), urls=[url], limits=limits, playout=playout)
        self._url = url
        self.rate = rate
        self.audio_format = f"audio/pcm;rate={rate}"
        self.frame_size = frame_bytes(rate, FRAME_MS)
        """Bytes of one frame cutin sends (20 ms)."""
        self._frames = WireFrames(rate, self.frame_size)
        self._in = Pcm16In(rate, self.playout)
        self.frames_sent = 0
        self.audio_received = 0
        """Binary messages of agent audio taken."""

    @property
    def bytes_received(self) -> int:
        return self._in.bytes_received

    # -- SocketLine hooks ----------------------------------------------------------

    def _connect(self, timeout_s: float) -> Any:
        return self._dial(self._url, timeout_s)

    def _handshake(self, deadline: float, timeout_s: float) -> None:
        self._ready.set()  # raw PCM has no hello: open once the socket is

    def _opened(self) -> None:
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; raw PCM16 {self.rate} Hz mono in binary messages",
            {"target": self.target, "rate": self.rate},
        )
        self._format_notice("raw PCM16: the rate the URL states")

    def _format_notice(self, source: str) -> None:
        self._format(f"PCM16 little-endian {self.rate} Hz mono ({source})", "pcm16", self.rate)

    def _write(self, item: tuple[str, Any]) -> None:
        kind, payload = item
        if kind == "media":
            for frame in payload:
                self._conn.send(frame)
                self.frames_sent += 1
        elif kind == "text":
            self._conn.send(json.dumps(payload))

    def _handle(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            self._on_audio(raw)
            return
        message = self._json_object(raw, "a text message")
        if message is not None:
            self._on_text(message, raw)

    # -- the agent's messages ------------------------------------------------------

    def _on_audio(self, data: bytes) -> None:
        if not data:
            self._error("audio_empty", "an empty binary message")
            return
        self.audio_received += 1
        if not self._in.play(data):
            self._error(
                "odd_bytes",
                f"a binary message of {len(data)} bytes: half a 16-bit sample is left over"
                " (kept for the next message)",
                {"bytes": len(data)},
            )

    def _on_text(self, message: dict[str, Any], raw: str) -> None:
        kind = message.get("type")
        if kind == "clear":
            self._clear("clear")
        elif isinstance(kind, str):
            self._error("unknown_type", f"an unknown message type {kind[:30]!r}", {"type": kind})
        else:
            self._error("no_type", f"a text message without a type: {raw[:60]!r}")

    def _clear(self, said: str) -> float:
        """Empty the playout (the agent's ``said``); a CLEAR notice; the seconds dropped."""
        return self._cleared(self._in.clear(), said)
