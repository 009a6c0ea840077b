"""The yield watch of a line call: every caller act's :class:`YieldWatch` over the
agent's frames, each stop settled (a short resumption, a stall the turn goes on
from), then reported as one ``agent_yield`` event.

A part the line far end owns: it is given the call's context, the agent's
:class:`~sessions.call.sound_tape.SoundTape`, what the ears have transcribed, where the
line's playout ran dry (a gap in delivery) and the agent turn in progress; it knows
nothing else of the far end.
"""

from __future__ import annotations

from collections.abc import Callable

from sessions.call.context import CallContext
from sessions.call.far_ends.yield_watch import SETTLE_S, STALL_S, YieldResult, YieldWatch
from sessions.call.line_parts import LineTurn
from sessions.call.sound_tape import SoundTape
from sessions.log.models import AgentYield
from sessions.speech.words import TimedWord

StallStart = Callable[[float, float], float | None]
"""Where the agent's audio ran out with no clear in [since, until), if it did."""


class YieldWatches:
    """Watches after the caller's acts, and the stops being settled (see the module)."""

    def __init__(
        self,
        ctx: CallContext,
        tape: SoundTape,
        words: Callable[[], list[TimedWord]],
        stall_start: StallStart,
        current_turn: Callable[[], LineTurn | None],
    ) -> None:
        self.ctx = ctx
        self.tape = tape
        self._words = words
        self.stall_start = stall_start
        self._current = current_turn
        self.watches: list[YieldWatch] = []
        self.settling_stops: list[tuple[YieldWatch, YieldResult, LineTurn | None, bool]] = []
        """Stops decided, waiting out :data:`SETTLE_S` for a short resumption (and whether
        the silence was a gap in delivery: then speech coming back is the turn going on)."""

    def start(self, turn: LineTurn, after: str, onset: float, window_s: float) -> None:
        """Watch the agent's turn after a caller act (``after``) whose sound began at
        ``onset`` on the line."""
        pauses = self.ctx.pauses
        silence = pauses.silence_start if not pauses.in_speech else None
        watch = YieldWatch(
            turn=turn.index,
            after=after,
            onset_t=onset,
            window_s=window_s,
            turn_end_s=self.ctx.config.turn_end_s,
            silence_start=silence,
        )
        self.watches.append(watch)

    def cleared(self, at: float, *, dropped: bool = False) -> None:
        """The agent emptied its playout (a ``clear``): the watches it answers; ``dropped``:
        the clear threw away audio it had sent (it had more to say)."""
        for watch in self.watches:
            if watch.clear_t is None and at >= watch.onset_t - 1e-9:
                watch.clear_t = at
                if dropped:
                    watch.flushed_t = at

    def frame(self, t0: float, t1: float, *, speaking: bool, caller_active: bool) -> None:
        """One frame of the agent (``speaking``: the VAD is inside its speech)."""
        if self.settling_stops:
            self.settle(t0, t1, speaking=speaking)
        if not self.watches:
            return
        still: list[YieldWatch] = []
        for watch in self.watches:
            if t1 < watch.onset_t:
                still.append(watch)
                continue
            result = watch.frame(t0, t1, speaking=speaking, caller_active=caller_active)
            if result is None:
                still.append(watch)
            elif result.yielded:  # wait a moment: a short resumption is part of the stop
                turn = self._current()
                mine = turn if turn is not None and turn.index == watch.turn else None
                gap = result.silence_start is not None and self._stalled(
                    result.silence_start, result.decided_t
                )
                self.settling_stops.append((watch, result, mine, gap))
            else:
                self._report(watch, result, None, t1)
        self.watches = still

    def settle(self, t0: float, t1: float, *, speaking: bool, force: bool = False) -> None:
        """Report the stops whose moment has passed; the VAD hearing speech again (a new
        turn) ends the search for a resumption just before it."""
        still = []
        for watch, result, turn, _ in self.settling_stops:
            # Asked again each frame: the line's buffer may run dry after the decision
            # (audio the agent sent ahead plays out first), and the gap is the stall.
            s = result.silence_start
            gap = None if s is None else self.stall_start(s, t0 if speaking else t1)
            stalled = gap is not None
            due = result.decided_t + SETTLE_S
            if gap is not None:  # the agent may go on: as long from where delivery stopped
                due = max(due, gap + STALL_S)
            due = min(due, watch.deadline)
            if stalled and speaking and not force and t0 < due - 1e-9:
                # Its audio came back after a gap in delivery, in time: it stalled and
                # went on with its turn; it did not stop (the watch goes on).
                watch.go_on()
                self.watches.append(watch)
            elif force or speaking or t1 >= due - 1e-9:
                until = min(t1, due) if not speaking else max(result.decided_t, t0 - 0.25)
                self._report(watch, result, turn, until)
            else:
                still.append((watch, result, turn, stalled))
        self.settling_stops = still

    def _stalled(self, since: float, until: float) -> bool:
        return self.stall_start(since, until) is not None

    def settling(self, turn: LineTurn) -> bool:
        """A stop of this turn is still being settled (its end waits for it)."""
        return any(t is turn for _, _, t, _ in self.settling_stops)

    def _report(
        self, watch: YieldWatch, result: YieldResult, turn: LineTurn | None, until: float
    ) -> None:
        stop_t = watch.stop_time(result, self.tape, self.ctx.config.frame_s, until)
        if stop_t is not None:
            stop_t = round(stop_t, 6)
        words = self._words()
        heard_by = stop_t if stop_t is not None else watch.deadline
        heard = " ".join(w.word for w in words if w.end <= heard_by + 1e-9)
        current = self._current()
        if turn is None and current is not None and current.index == watch.turn:
            turn = current
        if turn is not None and watch.after == "interruption":
            turn.stop_t = stop_t
        flushed = watch.flushed_stop(stop_t)
        if flushed is not None:  # it was pausing when the caller cut in and dropped the rest
            stop_t = round(flushed, 6)
        silent = watch.already_silent(stop_t)
        extra = {"already_silent": True} if silent else {}
        self.ctx.emit(
            AgentYield(
                t=round(max(result.decided_t, until), 6),
                turn=watch.turn,
                after=watch.after,
                onset_t=watch.onset_t,
                window_s=watch.window_s,
                yielded=result.yielded and not silent,
                stop_t=stop_t,
                latency_s=None if silent else watch.latency(stop_t),
                resumed=result.resumed,
                clear_t=watch.clear_t,
                heard=heard,
                talk_over_s=result.talk_over_s,
                **extra,
            )
        )
