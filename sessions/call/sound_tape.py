"""The agent's (or the caller's) audio by call time: what the line far end and the
near end both read sample-exact times from, so it lives below both."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE

Audio = npt.NDArray[np.float32]

SOUND_LEVEL = 0.02
"""|sample| at or above this (−34 dBFS) is sound; below is silence (μ-law silence is 0)."""


class SoundTape:
    """The last ``keep_s`` seconds of one channel, addressable by call time."""

    def __init__(self, keep_s: float = 30.0, level: float = SOUND_LEVEL) -> None:
        # A ring: appending a frame is one slice copy, not a copy of the whole tape
        # (the remote loop appends two channels every 32 ms).
        self._ring = np.zeros(int(keep_s * SAMPLE_RATE), dtype=np.float32)
        self._end = 0
        """Absolute sample index one past the newest sample."""
        self.level = level

    @property
    def end_index(self) -> int:
        return self._end

    @property
    def _start(self) -> int:
        return max(0, self._end - self._ring.size)

    def append(self, samples: Audio) -> None:
        new = np.asarray(samples, dtype=np.float32).reshape(-1)[-self._ring.size :]
        size = self._ring.size
        at = self._end % size
        head = min(new.size, size - at)
        self._ring[at : at + head] = new[:head]
        self._ring[: new.size - head] = new[head:]
        self._end += np.asarray(samples).size

    def _window(self, t0: float, t1: float) -> tuple[int, Audio]:
        i0 = max(self._start, round(t0 * SAMPLE_RATE))
        i1 = min(self._end, round(t1 * SAMPLE_RATE))
        if i1 <= i0:
            return i0, self._ring[:0]
        return i0, self._ring[np.arange(i0, i1) % self._ring.size]

    def last_sound(self, t0: float, t1: float) -> float | None:
        """End (call time) of the last sample at or above the level in [t0, t1)."""
        i0, seg = self._window(t0, t1)
        loud = np.flatnonzero(np.abs(seg) >= self.level)
        if loud.size == 0:
            return None
        return (i0 + int(loud[-1]) + 1) / SAMPLE_RATE

    def first_sound(self, t0: float, t1: float) -> float | None:
        """Start (call time) of the first sample at or above the level in [t0, t1)."""
        i0, seg = self._window(t0, t1)
        loud = np.flatnonzero(np.abs(seg) >= self.level)
        if loud.size == 0:
            return None
        return (i0 + int(loud[0])) / SAMPLE_RATE


def first_sound_offset(audio: Audio, level: float = SOUND_LEVEL) -> float:
    """Seconds into ``audio`` of its first sample at or above ``level`` (0 if none)."""
    loud = np.flatnonzero(np.abs(np.asarray(audio)) >= level)
    return float(loud[0]) / SAMPLE_RATE if loud.size else 0.0
