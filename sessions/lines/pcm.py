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

The rest of the module is what the PCM16 lines share (Exotel and Vonage carry the same
samples in their own envelopes): :class:`Pcm16Out` cuts the caller's audio into
fixed-size frames at the wire rate, :class:`Pcm16In` plays the agent's at 16 kHz, and
:class:`PlayedMarks` holds the markers a provider echoes once the audio before them
has played (Exotel's ``mark``, Vonage's ``notify``).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sessions.lines.base import LINE_RATE, Audio, LineError, LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.codec import StreamResampler
from sessions.lines.notices import check_ws_url
from sessions.lines.socket_line import SocketLine
from sessions.redact import redact_url
from sessions.speech.wav import float_to_pcm16, pcm16_to_float

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = [
    "PCM_RATES",
    "Pcm16In",
    "Pcm16Out",
    "PcmLine",
    "PlayedMarks",
    "frame_bytes",
    "make_line",
]

PCM_RATES = (8000, 16000, 24000)
DEFAULT_RATE = 16000
FRAME_MS = 20
RESAMPLE_SLICE = 4096
"""Samples resampled at a time: a burst of audio never becomes one big filter matrix."""
MAX_MARKS = 256
"""Markers waiting for their audio to play; more is an agent gone wrong (reported)."""

T = TypeVar("T")


def frame_bytes(rate: int, ms: int) -> int:
    """Bytes of ``ms`` of mono PCM16 at ``rate`` (640 for 20 ms at 16 kHz)."""
    return rate * ms // 1000 * 2


class Pcm16Out:
    """The caller's 16 kHz audio as PCM16 frames of ``size`` bytes at the wire rate.

    Not thread-safe: the line calls it under its send lock and posts the frames under
    the same lock, so frames leave in audio order.
    """

    def __init__(self, rate: int, size: int) -> None:
        self.rate = rate
        self.size = size
        self._down = StreamResampler(LINE_RATE, rate)
        self._pending = bytearray()

    def frames(self, samples: Audio) -> list[bytes]:
        self._pending += float_to_pcm16(self._down.process(samples))
        whole = len(self._pending) - len(self._pending) % self.size
        out = [bytes(self._pending[i : i + self.size]) for i in range(0, whole, self.size)]
        del self._pending[:whole]
        return out


class Pcm16In:
    """The agent's PCM16 at the wire rate, resampled to 16 kHz into the playout buffer.

    With ``carry``, messages are a byte stream: an odd byte left at the end of one is
    the first byte of the next one's first sample (binary frames: a stream cut at any
    byte still plays). Without it (a payload that stands alone, as Exotel's), the odd
    byte is dropped, so one bad payload cannot shift every later sample.
    :attr:`split_samples` counts the messages that left half a sample.
    """

    def __init__(self, rate: int, playout: PlayoutBuffer, *, carry: bool = True) -> None:
        self.rate = rate
        self.playout = playout
        self.carry = carry
        self._up = StreamResampler(rate, LINE_RATE)
        self._carry = b""
        self.bytes_received = 0
        self.split_samples = 0

    def play(self, data: bytes) -> bool:
        """Queue ``data``; False when it left half a sample over (the caller reports it)."""
        self.bytes_received += len(data)
        if self._carry:
            data = self._carry + data
        whole = len(data) - len(data) % 2
        self._carry = data[whole:]
        samples = pcm16_to_float(data[:whole])
        for i in range(0, samples.size, RESAMPLE_SLICE):
            self.playout.push(self._up.process(samples[i : i + RESAMPLE_SLICE]))
        if not self._carry:
            return True
        self.split_samples += 1
        if not self.carry:
            self._carry = b""
        return False

    def clear(self) -> int:
        """Drop everything queued (the agent's clear); returns the samples dropped."""
        self._carry = b""
        self._up.reset()
        return self.playout.clear()


class PlayedMarks(Generic[T]):
    """Markers an agent put after its audio, due once the audio before them has played.

    A marker is due when the playout has played (or cleared) every sample queued
    before it arrived; a clear makes every waiting marker due at once, as the
    providers send them back when their buffer is flushed. Thread-safe.
    """

    def __init__(self, playout: PlayoutBuffer, limit: int = MAX_MARKS) -> None:
        self.playout = playout
        self.limit = limit
        self._lock = threading.Lock()
        self._waiting: deque[tuple[int, T]] = deque()

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def add(self, mark: T) -> bool:
        """Wait for the audio queued so far; False (not kept) when :attr:`limit` wait."""
        position = self.playout.received - self.playout.dropped
        with self._lock:
            if len(self._waiting) >= self.limit:
                return False
            self._waiting.append((position, mark))
            return True

    def due(self, *, cleared: bool = False) -> list[T]:
        """The markers whose audio has played (all of them when ``cleared``), in order."""
        done = self.playout.played + self.playout.cleared
        out: list[T] = []
        with self._lock:
            while self._waiting and (cleared or self._waiting[0][0] <= done):
                out.append(self._waiting.popleft()[1])
        return out

    def drop(self) -> None:
        with self._lock:
            self._waiting.clear()


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``pcm:ws://HOST:PORT/PATH?rate=16000``."""
    from sessions.lines.registry import transport

    assert spec.url is not None
    return PcmLine(spec.url, rate=transport(spec.kind).rate_of(spec.url))


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
        self._send_lock = threading.Lock()
        self._out = Pcm16Out(rate, self.frame_size)
        self._in = Pcm16In(rate, self.playout)
        self.frames_sent = 0
        self.audio_received = 0
        """Binary messages of agent audio taken."""

    @property
    def bytes_received(self) -> int:
        return self._in.bytes_received

    # -- the Line protocol -------------------------------------------------------

    def send(self, samples: Audio) -> None:
        if not self.is_open:
            return
        with self._send_lock:
            frames = self._out.frames(samples)
            if frames:
                self._post(("audio", frames))  # under the lock: frames leave in order

    # -- SocketLine hooks ----------------------------------------------------------

    def _connect(self, timeout_s: float) -> Any:
        check_ws_url(self._url, self.name, self.target)
        from websockets.sync.client import connect

        conn = connect(self._url, close_timeout=2.0, **self.socket_options(timeout_s))
        return conn.__enter__()  # the line closes it itself

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
        self._notify(
            NoticeKind.FORMAT,
            f"PCM16 little-endian {self.rate} Hz mono ({source})",
            {"encoding": "pcm16", "rate": self.rate, "channels": 1, "stated": True},
        )

    def _write(self, item: tuple[str, Any]) -> None:
        kind, payload = item
        if kind == "audio":
            for frame in payload:
                self._conn.send(frame)
                self.frames_sent += 1
        elif kind == "text":
            self._conn.send(json.dumps(payload))

    def _handle(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            self._on_audio(raw)
            return
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError):
            self._error("not_json", f"a text message that is not JSON: {raw[:60]!r}")
            return
        if not isinstance(message, dict):
            self._error("not_object", f"a JSON message that is not an object: {raw[:60]!r}")
            return
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
        dropped = self._in.clear()
        seconds = dropped / LINE_RATE
        self._notify(
            NoticeKind.CLEAR,
            f"the agent cleared {seconds:.2f} s of queued audio ({said})",
            {"dropped_s": seconds, "dropped_samples": dropped},
        )
        return seconds
