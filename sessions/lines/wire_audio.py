"""The audio on a line's wire, both ways, and the markers that wait for it to play.

What the WebSocket lines share between the call's 16 kHz audio and their wire format:

- :class:`WireFrames` cuts the caller's audio into fixed-size frames at the wire rate,
  in the wire's encoding (PCM16 by default; G.711 with :func:`~sessions.lines.codec.
  encode_ulaw` or ``encode_alaw``);
- :class:`G711In` and :class:`Pcm16In` play the agent's audio (8 kHz G.711, or PCM16 at
  the wire rate) into the line's playout buffer at 16 kHz; both empty it on a clear;
- :class:`PlayedMarks` holds the markers a provider sends back once the audio before
  them has played (Twilio's, Telnyx's and Exotel's ``mark``, Plivo's ``checkpoint``,
  Vonage's ``notify``);
- :func:`looks_like_pcm16` tells 16-bit PCM sent where G.711 was due.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from sessions.lines.base import LINE_RATE, Audio, PlayoutBuffer
from sessions.lines.codec import StreamResampler
from sessions.speech.wav import float_to_pcm16, pcm16_to_float

__all__ = [
    "G711In",
    "Pcm16In",
    "PlayedMarks",
    "WireFrames",
    "frame_bytes",
    "looks_like_pcm16",
]


T = TypeVar("T")


def frame_bytes(rate: int, ms: int) -> int:
    """Bytes of ``ms`` of mono PCM16 at ``rate`` (640 for 20 ms at 16 kHz)."""
    return rate * ms // 1000 * 2


def looks_like_pcm16(payload: bytes) -> bool:
    """Whether bytes sent as μ-law are more likely 16-bit little-endian PCM.

    Quiet PCM16 has high bytes near 0x00 / 0xFF at every odd position; as μ-law, 0x00
    is full-scale negative and 0xFF is silence, so half the "samples" would sit at one
    of the two extremes while the other half vary: nothing a μ-law voice does.
    """
    if len(payload) < 80 or len(payload) % 2:
        return False
    data = np.frombuffer(payload, dtype=np.uint8)
    extreme = _EXTREME[data[1::2]].mean()
    low_extreme = _EXTREME[data[0::2]].mean()
    return bool(extreme > 0.9 and low_extreme < 0.5)


_EXTREME = np.isin(np.arange(256), (0x00, 0x01, 0xFE, 0xFF))
"""Whether each byte is at one of μ-law's two extremes (a lookup: this runs on every
message of every call)."""


class WireFrames:
    """The caller's 16 kHz audio as frames of ``size`` bytes at the wire ``rate``,
    encoded by ``encode`` (float samples to bytes; PCM16 little-endian by default).

    Not thread-safe: the line calls it under its send lock and posts the frames under
    the same lock, so frames leave in audio order.
    """

    def __init__(
        self, rate: int, size: int, encode: Callable[[Audio], bytes] = float_to_pcm16
    ) -> None:
        self.rate = rate
        self.size = size
        self._encode = encode
        self._down = StreamResampler(LINE_RATE, rate)
        self._pending = bytearray()

    def frames(self, samples: Audio) -> list[bytes]:
        self._pending += self._encode(self._down.process(samples))
        whole = len(self._pending) - len(self._pending) % self.size
        out = [bytes(self._pending[i : i + self.size]) for i in range(0, whole, self.size)]
        del self._pending[:whole]
        return out


class G711In:
    """The agent's 8 kHz G.711, decoded by ``decode`` and resampled to 16 kHz into the
    playout buffer. One byte a sample: no message splits one."""

    def __init__(self, decode: Callable[[bytes], Audio], playout: PlayoutBuffer) -> None:
        self.playout = playout
        self._decode = decode
        self._up = StreamResampler(8000, LINE_RATE)

    def play(self, data: bytes) -> bool:
        """Queue ``data`` (always whole: True)."""
        self.playout.push(self._up.process(self._decode(data)))
        return True

    def clear(self) -> int:
        """Drop everything queued (the agent's clear); returns the samples dropped."""
        dropped = self.playout.clear()
        self._up.reset()
        return dropped


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
        # The resampler bounds its own working memory, however long the message.
        self.playout.push(self._up.process(pcm16_to_float(data[:whole])))
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

    def __init__(self, playout: PlayoutBuffer, limit: int) -> None:
        self.playout = playout
        self.limit = limit
        self._lock = threading.Lock()
        self._waiting: deque[tuple[int, T]] = deque()

    def __len__(self) -> int:
        return len(self._waiting)

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
