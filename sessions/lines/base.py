"""The protocol every line to a black-box agent implements, and what it shares.

A line exchanges mono float32 audio at :data:`LINE_RATE` (16 kHz, the rate of VAD and
STT) with the call loop; converting to the wire format (8 kHz μ-law, 24 kHz PCM16) and
back is the transport's job. The loop drives time: every 32 ms frame it calls
:meth:`Line.send` with the caller's audio for that frame (silence included, as a phone
line carries it) and :meth:`Line.take` for the agent audio to "play" in that frame.

Agent audio arrives in network bursts; the transport pushes it into a
:class:`PlayoutBuffer`, which the loop drains at real time. A ``clear`` from the agent
(Twilio) or the server's speech-started signal (Realtime) empties it, as the real
far end would. Everything else the line has to say comes as :class:`LineNotice`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

LINE_RATE = 16_000
Audio = npt.NDArray[np.float32]


class LineError(RuntimeError):
    """A line cannot be opened or has failed; the message is one line for the user."""


class LineState(StrEnum):
    CONNECTING = "connecting"
    OPEN = "open"
    CLOSED = "closed"
    """Ended normally (by us or by the agent)."""
    FAILED = "failed"
    """Dropped or broken; the notice says why. Never reconnected silently."""


class NoticeKind(StrEnum):
    OPEN = "open"
    """Connected and the handshake is done; ``detail`` names the agent's audio format."""
    FORMAT = "format"
    """The agent's audio format, detected or stated (``data``: encoding, rate, channels)."""
    CLEAR = "clear"
    """The agent flushed its queued audio (Twilio ``clear``; Realtime speech_started)."""
    MARK = "mark"
    """A Twilio ``mark`` came back (``data["name"]``)."""
    AGENT_EVENT = "agent_event"
    """Something the agent said that is not audio, worth logging (``data``: the event)."""
    ERROR = "error"
    """A malformed or error event; the call goes on."""
    CLOSED = "closed"
    """The line ended (``data["by"]``: "agent" | "cutin"; ``data["code"]``)."""
    FAILED = "failed"
    """The line dropped (connection lost, refused, timed out)."""
    NOTE = "note"
    """Something the line did that the user should know, not an error: agent audio
    dropped beyond the playout buffer, a notice cap reached (``data["kind"]`` says which)."""
    SUMMARY = "summary"
    """Given once, just before the line's CLOSED or FAILED, when anything was held back:
    ``data`` counts the notices only counted, the messages and audio dropped."""
    DTMF = "dtmf"
    """Keypad digits went to the agent (SIP, RFC 4733; ``data["digits"]``)."""


@dataclass(frozen=True, slots=True)
class LineNotice:
    kind: NoticeKind
    detail: str = ""
    """One line for the user (already free of secrets)."""
    data: dict[str, Any] = field(default_factory=dict)
    mono: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` when it happened (the loop maps it onto the call clock)."""


class Line(Protocol):
    """A connection to a black-box agent. ``send``/``take``/``notices`` are thread-safe."""

    name: str
    """Transport: twilio | realtime."""
    target: str
    """Where it goes, for the header and the status line (no secrets, no tokens)."""
    audio_format: str
    """The wire format, e.g. ``audio/x-mulaw;rate=8000`` (stated, or detected once known)."""

    @property
    def state(self) -> LineState: ...

    def open(self, timeout_s: float = 10.0) -> None:
        """Connect and handshake. Raises :class:`LineError` (one clear line) on failure."""

    def send(self, samples: Audio) -> None:
        """Caller audio (16 kHz float32, any length) to send now; no-op once closed."""

    def take(self, n: int) -> Audio:
        """The next ``n`` samples of agent audio to play (zeros where none has arrived)."""

    def notices(self) -> list[LineNotice]:
        """Everything that happened since the last call (non-blocking)."""

    def close(self) -> None:
        """Hang up (Twilio ``stop``; close the socket). Idempotent."""


@dataclass(frozen=True, slots=True)
class LineLimits:
    """What one agent may send; every byte from it is hostile until proven otherwise.

    A message over ``max_message_bytes`` is refused by the socket before its payload is
    read (the line fails: an ERROR notice names the limit, then FAILED, code 1009), so a
    3 MB "media" message never gets buffered, decoded or resampled. Beyond
    ``max_bytes_per_s`` in one second, messages are dropped unread (ERROR notices, the
    call goes on). Both are far above any real agent: 1 MiB holds over a minute of
    base64 μ-law and 20 s of 24 kHz PCM16; Realtime bursts audio faster than real time,
    hence the generous rate. A marker (Twilio's ``mark``) named with over
    ``max_mark_chars`` characters is refused (ERROR, not echoed), and at most
    ``max_marks`` wait for their audio at once, so waiting marks hold at most a few MiB.
    What a line then logs of it is bounded by :mod:`sessions.lines.notices`.
    """

    max_message_bytes: int = 1 << 20
    max_bytes_per_s: int = 4 << 20
    max_mark_chars: int = 1024
    max_marks: int = 256


class ByteRate:
    """Bytes an agent sent in the current one-second window, against a limit."""

    def __init__(self, per_s: int) -> None:
        self.per_s = per_s
        self._start = float("-inf")
        self._bytes = 0

    def admit(self, size: int, now: float) -> bool:
        """Count ``size`` bytes at ``now`` (monotonic s); False once over the limit."""
        if now - self._start >= 1.0:
            self._start, self._bytes = now, 0
        self._bytes += size
        return self._bytes <= self.per_s


CLEAN_CLOSE_CODES = frozenset({1000, 1001, 1005})
"""WebSocket close codes of a hang-up (normal, going away, no status)."""


def is_clean_close(code: int | None) -> bool:
    """A close the agent meant: 1000/1001/1005 or its own application code (4000-4999).

    Everything else (1002 protocol error, 1006 dropped, 1009 too big, 1011 internal
    error, the 3000s of libraries...) is a failure of the line, never a clean hang-up.
    """
    return code is not None and (code in CLEAN_CLOSE_CODES or 4000 <= code <= 4999)


class PlayoutBuffer:
    """Agent audio waiting to be played: pushed in bursts, taken at real time.

    Thread-safe. ``take`` pads with zeros when the agent has sent nothing (an underrun is
    the agent being silent, not an error). Counts what arrived, played and was cleared.
    """

    def __init__(self, max_seconds: float = 120.0) -> None:
        self._lock = threading.Lock()
        self._chunks: deque[Audio] = deque()
        self._head = 0
        """Samples of ``_chunks[0]`` already taken."""
        self._buffered = 0
        self._max = int(max_seconds * LINE_RATE)
        self.max_s = max_seconds
        self.received = 0
        self.played = 0
        self.cleared = 0
        self.dropped = 0
        """Samples refused because the buffer was full (an agent far ahead of real time)."""

    @property
    def buffered_s(self) -> float:
        return self._buffered / LINE_RATE

    def push(self, samples: Audio) -> None:
        chunk = np.asarray(samples, dtype=np.float32).reshape(-1)
        if chunk.size == 0:
            return
        with self._lock:
            self.received += chunk.size
            room = self._max - self._buffered
            if room <= 0:
                self.dropped += chunk.size
                return
            if chunk.size > room:
                self.dropped += chunk.size - room
                chunk = chunk[:room]
            self._chunks.append(chunk.copy())
            self._buffered += chunk.size

    def take(self, n: int) -> Audio:
        out = np.zeros(n, dtype=np.float32)
        filled = 0
        with self._lock:
            while filled < n and self._chunks:
                head = self._chunks[0]
                k = min(n - filled, head.size - self._head)
                out[filled : filled + k] = head[self._head : self._head + k]
                filled += k
                self._head += k
                if self._head >= head.size:
                    self._chunks.popleft()
                    self._head = 0
            self._buffered -= filled
            self.played += filled
        return out

    def clear(self) -> int:
        """Drop everything queued; returns how many samples were dropped."""
        with self._lock:
            dropped = self._buffered
            self._chunks.clear()
            self._head = 0
            self._buffered = 0
            self.cleared += dropped
        return dropped
