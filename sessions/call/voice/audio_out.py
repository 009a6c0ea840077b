"""The output device of a voice call, and the clock the call loop follows with it.

:class:`TimelinePlayer` is a :class:`~sessions.speech.audio.Player` whose callback
renders a :class:`~sessions.call.timeline.CallTimeline`: output-stream sample ``i``
is timeline sample ``i + offset``, the offset fixed once (:meth:`align`) so that a
timeline sample at call time ``t`` reaches the speaker at ``t`` after call start.
The callback only slices arrays under the timeline's short lock.

:class:`LeadClock` runs the loop ``lead`` seconds ahead of what is heard: the loop
processes a moment of the call just before the device needs its samples, so audio
the loop places "now" (a backchannel at a pause, the caller's words) is heard at
the call time it was placed at, the output latency already absorbed. The lead is
the device latency plus two blocks.

Lost time: when the callback runs late for a while (an underrun: the device played
silence instead), the samples it would have played are skipped, so what is heard
stays at its call time; a :class:`LatenessWatch` tells a steady lateness from one
late callback. A sound card whose clock runs 50 ppm off the monotonic clock is
caught the same way, once it adds up to the threshold.
"""

from __future__ import annotations

import time
from typing import Any

from sessions.call.timeline import CallTimeline
from sessions.speech import SAMPLE_RATE
from sessions.speech.audio import Player
from sessions.speech.devices import AudioUnavailable


class LatenessWatch:
    """How late a stream runs against its schedule, judged by the *least* late block of a
    window: blocks can arrive late in a burst, but never early, so only lateness that
    every block of the window shares is stream time that was lost."""

    def __init__(self, window_s: float = 0.5, threshold_s: float = 0.03) -> None:
        self.window_s = window_s
        self.threshold_s = threshold_s
        self._start: float | None = None
        self._least = float("inf")

    def update(self, stream_t: float, lateness: float) -> float:
        """Add a block (its stream time, seconds late); returns the lost seconds to skip
        (0.0 while the stream keeps its schedule)."""
        if self._start is None:
            self._start = stream_t
        self._least = min(self._least, lateness)
        if stream_t - self._start < self.window_s:
            return 0.0
        least, self._start, self._least = self._least, None, float("inf")
        return least if least > self.threshold_s else 0.0


class LeadClock:
    """Seconds since ``t0`` (monotonic) plus ``lead``; :meth:`heard` drops the lead."""

    def __init__(self, t0: float, lead: float) -> None:
        self.t0 = t0
        self.lead = lead

    def now(self) -> float:
        return time.monotonic() - self.t0 + self.lead

    def heard(self) -> float:
        """Call time now at the tester's ear (the microphone's clock)."""
        return time.monotonic() - self.t0


class TimelinePlayer(Player):
    """Plays a call timeline on an output device (start it, then :meth:`align` it)."""

    def __init__(
        self,
        timeline: CallTimeline,
        device: int | str | None = None,
        *,
        blocksize: int = 256,
        latency: float | str = "low",
    ) -> None:
        super().__init__(device, blocksize=blocksize, latency=latency)
        self.timeline = timeline
        self._index = 0
        self._offset: int | None = None
        self._t0 = 0.0
        self._latency = 0.0
        self._watch = LatenessWatch()
        self.skipped_s = 0.0
        """Seconds of the timeline skipped because the device fell behind."""

    def _callback(self, outdata: Any, frames: int, _time: Any, status: Any) -> None:
        if status.output_underflow:
            self.underflows += 1
        now = time.monotonic()
        # One tuple assignment: readers on other threads see a consistent pair.
        self._anchor = (self._index, now)
        offset = self._offset
        if offset is None:
            outdata.fill(0)
        else:
            sample = self._index + offset
            due = self._t0 + sample / SAMPLE_RATE - self._latency
            lost = self._watch.update(sample / SAMPLE_RATE, now - due)
            if lost:
                skip = round(lost * SAMPLE_RATE)
                self._offset = offset = offset + skip
                sample += skip
                self.skipped_s += lost
            outdata[:, 0] = self.timeline.render(sample, frames)
        self._index += frames
        self.started.set()

    def open(self, timeout: float = 10.0) -> TimelinePlayer:
        """Start the stream (silence until aligned); :class:`AudioUnavailable` if it won't run."""
        self.start()
        if not self.started.wait(timeout):
            self.close()
            raise AudioUnavailable(f"the output device did not start within {timeout:g} s")
        return self

    def align(self, t0: float) -> None:
        """From now on, render the timeline so call time 0 is heard at monotonic ``t0``."""
        anchor = self._anchor
        if anchor is None:
            raise AudioUnavailable("the output stream has not started")
        index, at = anchor
        self._latency = self.output_latency_s
        self._t0 = t0
        offset = round((at - t0 + self._latency) * SAMPLE_RATE) - index
        self.timeline.device = True  # before the first render: cuts now happen where it is
        self._offset = offset

    @property
    def latency_s(self) -> float:
        """The device's output latency the timeline was aligned with (0 before :meth:`align`)."""
        return self._latency

    @property
    def lead_s(self) -> float:
        """How far ahead of the speaker the loop must run (latency plus two blocks)."""
        return self.output_latency_s + 2 * self.blocksize / SAMPLE_RATE
