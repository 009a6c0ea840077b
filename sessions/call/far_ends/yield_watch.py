"""Did a black-box agent stop after the caller barged in or backchannelled? How fast?

Pure logic over the agent's per-frame speech state (what the pause detector tracks)
plus a :class:`SoundTape` of the agent's audio for sample-exact times. Definitions
follow τ-Voice's interaction metrics (tau2-bench ``docs/interaction-metrics.md``):

* after an **interruption** the agent *yields* if it falls silent within 2.0 s of the
  caller's onset; the yield latency is the time from the onset to its silence;
* after a **backchannel**, stopping within 1.0 s is a *false yield* (an error).

"Falls silent" here is a silence that grows into a turn end (500 ms by default): a
speaker's ordinary 200–400 ms mid-turn pauses are not a stop. The stop time is the
end of the agent's last sound before the watch could tell, found on the audio itself,
so it is exact to the sample rather than to the 32 ms VAD frame, and a short burst the
VAD does not call speech (a 50 ms resumption after a pause) still counts as sound.

A stop cannot answer a sound that had not started: when the agent's last sound ended
before the caller's onset and it made none after it, it had finished on its own (the
rule fired in the silence after its answer), so the act is *already silent*, not a
yield, and not scored (τ-Voice scores only acts that start during agent speech) —
unless the agent flushed audio it had sent (a ``clear`` that dropped some) after the
onset: then it was pausing inside its turn when the caller cut in and dropped the rest,
a yield whose stop is the flush.
"""

from __future__ import annotations

from dataclasses import dataclass

from sessions.call.sound_tape import SoundTape

SETTLE_S = 0.5
"""After a watch decides the agent stopped, short sounds this long after (within the act's
window, and before anything the VAD calls speech) still belong to the stop."""
STALL_S = 1.0
"""A stop decided on a gap in the agent's delivery (its audio ran dry with no clear) waits
this long from where its delivery stopped for the agent to go on with its turn: a stall of
up to ~0.8 s (the 400–700 ms Pipecat showed, plus the jitter depth and the VAD's onset)
is the turn going on, not a stop; see docs/agent-measures.md "Stalls are not stops"."""


@dataclass(frozen=True, slots=True)
class YieldResult:
    yielded: bool
    silence_start: float | None
    """Frame-accurate start of the stopping silence (refine it with a :class:`SoundTape`)."""
    resumed: bool
    talk_over_s: float
    decided_t: float
    """When the watch could tell (frame end)."""


class YieldWatch:
    """Watches one caller action until the agent's response to it is known.

    Feed every frame after the action with the detector's state at the end of that
    frame (``speaking``, ``silence_start``) and whether the caller's audio was playing.
    """

    def __init__(
        self,
        *,
        turn: int,
        after: str,
        onset_t: float,
        window_s: float,
        turn_end_s: float = 0.5,
        silence_start: float | None = None,
    ) -> None:
        self.turn = turn
        self.after = after
        self.onset_t = onset_t
        self.window_s = window_s
        self.turn_end_s = turn_end_s
        self._silence_start = silence_start
        """Start of the silence in progress (None while the agent speaks)."""
        self.resumed = False
        self.talk_over_s = 0.0
        self.clear_t: float | None = None
        self.flushed_t: float | None = None
        """A clear after the onset that threw away audio the agent had sent."""
        self.result: YieldResult | None = None

    @property
    def deadline(self) -> float:
        return self.onset_t + self.window_s

    def frame(
        self,
        t0: float,
        t1: float,
        *,
        speaking: bool,
        caller_active: bool,
    ) -> YieldResult | None:
        """One frame [t0, t1) of the agent; returns the result once it is known."""
        if self.result is not None:
            return self.result
        if speaking:
            if t1 > self.onset_t + 1e-9:
                self.resumed = True
                if caller_active:
                    self.talk_over_s += t1 - max(t0, self.onset_t)
            self._silence_start = None
        elif self._silence_start is None:
            self._silence_start = t0
        s = self._silence_start
        if s is not None and s <= self.deadline + 1e-9 and t1 - s >= self.turn_end_s - 1e-9:
            self.result = YieldResult(True, s, self.resumed, round(self.talk_over_s, 4), t1)
        elif t1 > self.deadline + 1e-9 and (s is None or s > self.deadline + 1e-9):
            self.result = YieldResult(False, None, self.resumed, round(self.talk_over_s, 4), t1)
        return self.result

    def go_on(self) -> None:
        """The silence it decided on was a stall the agent's turn went on from (its audio
        came back within the settle window): watch on, as if it had not fallen silent."""
        self.result = None
        self._silence_start = None
        self.resumed = True

    def stop_time(
        self, result: YieldResult, tape: SoundTape, frame_s: float, until: float | None = None
    ) -> float | None:
        """Sample-exact end of the agent's last sound before ``until`` (default: when the
        watch decided).

        The VAD's silence starts up to ~2 frames after the sound really ends, and
        sound it does not call speech (a short resumption, a breath) can follow inside
        the silence or just after it: every sample over the level up to ``until`` is the
        agent's (the line's watch settles a moment after deciding, see
        :data:`SETTLE_S`).
        """
        if not result.yielded or result.silence_start is None:
            return None
        s = result.silence_start
        end_at = result.decided_t if until is None else until
        end = tape.last_sound(s - 0.3, max(end_at, s + 2 * frame_s))
        return end if end is not None else s

    def already_silent(self, stop_t: float | None) -> bool:
        """The agent's sound had ended before the onset: it finished on its own.

        Not when it flushed audio it had sent (a ``clear`` that dropped some) after the
        onset and inside the window: it was in a pause of its turn when the caller cut in
        (where the rules cut in) and dropped the rest, so it yielded; see
        :meth:`flushed_stop`. A clear that dropped nothing says nothing (some agents clear
        on every caller sound)."""
        before = stop_t is not None and stop_t < self.onset_t - 1e-6
        return before and self.flushed_stop(stop_t) is None

    def flushed_stop(self, stop_t: float | None) -> float | None:
        """When a stop inside a pause is the flush: the ``clear`` after the onset (within
        the window) that dropped audio, if the agent's last sound ended before the onset,
        else None."""
        t = self.flushed_t
        if stop_t is None or stop_t >= self.onset_t - 1e-6 or t is None:
            return None
        if not self.onset_t - 1e-9 <= t <= self.deadline + 1e-9:
            return None
        return t

    def latency(self, stop_t: float | None) -> float | None:
        if stop_t is None:
            return None
        return round(max(0.0, stop_t - self.onset_t), 4)
