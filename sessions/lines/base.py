"""The protocol every line to a black-box agent implements, and what it shares.

A line exchanges mono float32 audio at :data:`LINE_RATE` (16 kHz, the rate of VAD and
STT) with the call loop; converting to the wire format (8 kHz μ-law, 24 kHz PCM16) and
back is the transport's job. The loop drives time: every 32 ms frame it calls
:meth:`Line.send` with the caller's audio for that frame (silence included, as a phone
line carries it) and :meth:`Line.take` for the agent audio to "play" in that frame.

Agent audio arrives in network bursts; the transport pushes it into a
:class:`PlayoutBuffer`, which the loop drains at real time, with a provider's jitter
depth (:data:`DEFAULT_DEPTH_S`). A ``clear`` from the agent (Twilio's, Telnyx's...) or
the server's speech-started signal (Realtime) empties it at the instant it is applied,
as the real far end would. Everything else the line has to say comes as :class:`LineNotice`.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
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

    A message over ``max_message_bytes`` (counted as sent: a deflated frame by what it
    inflates to) fails the line: an ERROR notice names the limit, then FAILED, code 1009.
    A frame over twice the limit is refused by the socket before its payload is read
    (``socket_line.WIRE_ALLOWANCE``: that also bounds how far a frame may inflate), so a
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


DEFAULT_DEPTH_S = 0.06
"""The playout (jitter) buffer's depth: after running dry, the agent's next audio plays
this long after it arrived, so delivery gaps shorter than it are never heard. 60 ms is
the minimum of Telnyx's adaptive jitter buffer by default (60–200 ms, its SIP trunking
docs), within Asterisk's fixed default (200 ms max) and under the ~250 ms at which
Twilio says a conference's jitter buffer is heard as latency; docs/agent-measures.md."""


class PlayoutBuffer:
    """Agent audio waiting to be played: pushed in bursts, taken at real time.

    Thread-safe. Audio sits on a timeline of :data:`LINE_RATE` samples whose sample ``i``
    plays at call time ``i / LINE_RATE``; the loop takes it a frame at a time, just after
    the frame's end (:attr:`taken`). ``take`` pads with zeros where the agent has sent
    nothing (an underrun is the agent being silent, not an error).

    Once it :meth:`follow`\\s the call's clock (a real-time call), it plays as a
    provider's buffer does: audio that arrives while queued audio still plays follows it
    without a gap; audio that arrives after the queue ran dry (the start of a talkspurt,
    or the end of a delivery stall) plays :attr:`depth_s` after it arrived, so a delivery
    gap shorter than the depth is never heard; a :meth:`clear` takes effect at the
    instant it is applied: what had played by then stays played (the frame in progress
    keeps its first part), the rest is dropped. While the loop runs late (a loaded
    machine) audio is on time if it comes before the loop takes it, as without a clock:
    cutin's lateness is not the agent's gap. Without a clock (the virtual one) audio
    plays from the next frame taken and a clear drops all that is queued.
    Counts what arrived, played and was cleared.
    """

    def __init__(self, max_seconds: float = 120.0, depth_s: float = DEFAULT_DEPTH_S) -> None:
        self._lock = threading.Lock()
        self._chunks: deque[tuple[int, Audio]] = deque()
        """(timeline position of its first sample, samples), in order, not overlapping."""
        self._buffered = 0
        self._max = int(max_seconds * LINE_RATE)
        self.max_s = max_seconds
        self.depth_s = 0.0
        self._depth = 0
        self.set_depth(depth_s)
        self._clock: Callable[[], float] | None = None
        self.taken = 0
        """Timeline samples handed to the loop (the next frame starts here)."""
        self._frame = round(0.032 * LINE_RATE)
        """The loop's frame (the last ``take``)."""
        self._end = 0
        """Timeline position where the queued audio ends."""
        self._cleared_at: int | None = None
        """Where the last clear took effect, while no audio came after it."""
        self.received = 0
        self.played = 0
        self.cleared = 0
        self.dropped = 0
        """Samples refused because the buffer was full (an agent far ahead of real time)."""
        self.gaps: deque[tuple[int, int]] = deque(maxlen=64)
        """The latest gaps in delivery: (where the audio ran dry, where it went on), with
        no clear before them (a stall, or the agent silent between turns)."""

    def set_depth(self, depth_s: float) -> None:
        """Change the jitter depth (see the class; 0 to 2 s)."""
        if not (math.isfinite(depth_s) and 0.0 <= depth_s <= 2.0):
            raise ValueError(f"a playout depth of {depth_s!r} s (0 to 2 s)")
        with self._lock:
            self.depth_s = depth_s
            self._depth = round(depth_s * LINE_RATE)

    def follow(self, clock: Callable[[], float]) -> None:
        """Play on the call's clock (call seconds now), as a provider's buffer does."""
        with self._lock:
            self._clock = clock

    def _now(self, *, loop: bool = False) -> int | None:
        """The timeline position playing now (None without a clock); lock held.

        With ``loop``, at most one frame past what the loop has taken: when the loop runs
        late (a loaded machine), audio that comes before the loop needs it is on time (an
        agent paced by the caller's audio, which the late loop has not sent yet, is not
        made to run dry by cutin's lateness)."""
        if self._clock is None:
            return None
        now = self._clock()
        if not math.isfinite(now):
            return self.taken
        now_i = max(self.taken, int(now * LINE_RATE))
        return min(now_i, self.taken + self._frame) if loop else now_i

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
            now = self._now()
            late = now is not None and now > self.taken + self._frame
            if now is None or late or self._end >= now:
                # In time (or the loop is behind real time: it takes this when it comes
                # to it, as before it fell behind; its lateness is not the agent's gap).
                start = max(self._end, self.taken)
            else:  # it ran dry: a talkspurt or a stall, played ``depth`` after it came
                start = now + self._depth
            ran = self._cleared_at is None and self.played + self._buffered > 0
            if ran and start > self._end:
                self.gaps.append((self._end, start))
            self._cleared_at = None
            self._chunks.append((start, chunk.copy()))
            self._end = start + chunk.size
            self._buffered += chunk.size

    def take(self, n: int) -> Audio:
        out = np.zeros(n, dtype=np.float32)
        filled = 0
        with self._lock:
            lo, hi = self.taken, self.taken + n
            while self._chunks and self._chunks[0][0] < hi:
                start, head = self._chunks[0]
                a = max(start, lo)
                b = min(start + head.size, hi)
                out[a - lo : b - lo] = head[a - start : b - start]
                filled += b - a
                if start + head.size <= hi:
                    self._chunks.popleft()
                else:
                    self._chunks[0] = (hi, head[hi - start :])
            self.taken = hi
            self._frame = n
            self._buffered -= filled
            self.played += filled
        return out

    def clear(self) -> int:
        """Drop what has not played by now (everything queued, without a clock); returns
        how many samples were dropped. :attr:`cleared_at` says where it took effect."""
        with self._lock:
            now = self._now()
            keep = self.taken if now is None else now
            kept: deque[tuple[int, Audio]] = deque()
            for start, audio in self._chunks:
                if start < keep:
                    kept.append((start, audio[: keep - start]))
            self._chunks = kept
            still = sum(a.size for _, a in kept)
            dropped = self._buffered - still
            self._buffered = still
            self._end = min(self._end, keep)
            self._cleared_at = keep
            self.cleared += dropped
        return dropped

    def gap_in(self, t0: float, t1: float) -> bool:
        """Whether delivery ran dry (no clear before it) anywhere in call times [t0, t1):
        a gap the agent's audio went on after, or one still in progress by ``t1``."""
        return self.gap_start(t0, t1) is not None

    def gap_start(self, t0: float, t1: float) -> float | None:
        """Where (call time) the first gap in delivery overlapping [t0, t1) began, if any
        (see :meth:`gap_in`)."""
        i0, i1 = round(t0 * LINE_RATE), round(t1 * LINE_RATE)
        with self._lock:
            gaps = list(self.gaps)
            now = self._now(loop=True)
            ran = self.played + self._buffered > 0
            if now is not None and ran and self._cleared_at is None and self._end < now:
                gaps.append((self._end, now))
        starts = [a for a, b in gaps if a < i1 and b > i0]
        return min(starts) / LINE_RATE if starts else None

    def dry_since(self) -> int | None:
        """Where the agent's audio ran out, if it has (by now, on the call's clock) with
        no clear: a delivery gap in progress, or the agent done; None otherwise."""
        with self._lock:
            now = self._now(loop=True)
            if now is None or self._cleared_at is not None or self.played + self._buffered == 0:
                return None
            return self._end if self._end < now else None
