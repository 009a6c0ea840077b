"""Both sides of a call as audio on the call clock: what is played and what is recorded.

Sample ``k`` of the timeline is call time ``k / 16 kHz``. Speech is *placed* on a
channel (agent or caller) at a sample position, possibly ahead of time; a cut
shortens what was placed. Two readers take from it:

- the output device (:class:`~sessions.call.voice.audio_out.TimelinePlayer`) renders the
  audible clips block by block; ``rendered`` is how far it got, so nothing before it
  can change any more (a cut in real time happens there: playback stops at once);
- the recording takes each channel's final samples in order (:meth:`take`).

Every method holds one short lock, so the audio callback never waits for long.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE

Audio = npt.NDArray[np.float32]

AGENT = 0
CALLER = 1
CHANNELS = 2


def to_sample(t: float) -> int:
    """The timeline sample at call time ``t`` seconds."""
    return round(t * SAMPLE_RATE)


@dataclass(eq=False)
class Clip:
    """Audio placed on one channel from sample ``start``; ``end`` drops when it is cut."""

    channel: int
    start: int
    audio: Audio
    audible: bool = True
    """Played on the device (the tester's own microphone audio is only recorded)."""
    end: int = field(init=False)

    def __post_init__(self) -> None:
        self.end = self.start + self.audio.size


def _add(out: Audio, start: int, clip: Clip) -> None:
    """Add the part of ``clip`` inside [start, start + out.size) into ``out``."""
    a = max(start, clip.start)
    b = min(start + out.size, clip.end)
    if a < b:
        out[a - start : b - start] += clip.audio[a - clip.start : b - clip.start]


class CallTimeline:
    """Placed clips of both channels, rendered to the device and taken for the recording."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clips: list[Clip] = []
        self.device = False
        """Set when an output device renders the timeline (then the past is fixed)."""
        self.rendered = 0
        """Timeline samples handed to the device so far."""
        self.written = 0
        """Samples taken for the recording so far (both channels)."""

    def place(
        self, channel: int, start: int, audio: npt.NDArray[np.float32], *, audible: bool = True
    ) -> Clip:
        """Put ``audio`` on ``channel`` from sample ``start`` (mixed with what is there)."""
        clip = Clip(channel, start, np.asarray(audio, dtype=np.float32).reshape(-1), audible)
        with self._lock:
            self._clips.append(clip)
        return clip

    def cut(self, clips: list[Clip], at: int) -> int:
        """End ``clips`` at sample ``at`` -- with a device, at once: where it has rendered.

        Returns the sample where the audio really ends.
        """
        with self._lock:
            if self.device:
                at = self.rendered
            for clip in clips:
                clip.end = max(clip.start, min(clip.end, at))
        return at

    def render(self, start: int, n: int) -> Audio:
        """The audible mix of samples [start, start + n), for the output device."""
        out = np.zeros(n, dtype=np.float32)
        with self._lock:
            for clip in self._clips:
                if clip.audible and clip.end > start and clip.start < start + n:
                    _add(out, start, clip)
            self.rendered = start + n
        np.clip(out, -1.0, 1.0, out=out)
        return out

    def take(self, until: int) -> tuple[Audio, Audio]:
        """Each channel's samples from :attr:`written` up to ``until`` (then forgotten)."""
        with self._lock:
            start = self.written
            n = max(0, until - start)
            agent = np.zeros(n, dtype=np.float32)
            caller = np.zeros(n, dtype=np.float32)
            for clip in self._clips:
                if clip.end > start and clip.start < start + n:
                    _add(agent if clip.channel == AGENT else caller, start, clip)
            self.written = start + n
            # A clip is done when it is recorded and (with a device) played.
            done = min(self.written, self.rendered) if self.device else self.written
            self._clips = [c for c in self._clips if c.end > done]
        np.clip(agent, -1.0, 1.0, out=agent)
        np.clip(caller, -1.0, 1.0, out=caller)
        return agent, caller

    def latest_end(self) -> int:
        """The end of the last placed audio (0 when nothing is left)."""
        with self._lock:
            return max((c.end for c in self._clips), default=self.written)
