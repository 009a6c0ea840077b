"""A line call's caller acts, and what the agent did about them: an interruption puts the
caller's speech on the line, a backchannel plays a token, and a
:class:`~.yield_watch.YieldWatch` (τ-Voice's windows) reads off the agent's audio
whether and when it stopped (``agent_yield`` events)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sessions.call.far_ends.agent_ears import AgentEars, Audio
from sessions.call.far_ends.line_parts import LineTurn, RemoteConfig
from sessions.call.far_ends.yield_watch import YieldResult, YieldWatch
from sessions.call.near_end.caller_line import Synthesizer, Utterance
from sessions.call.near_end.line_caller import LineCaller
from sessions.log.models import AgentYield, Backchannel, ErrorEvent, Interruption

Backchannels = Callable[[str], Audio]
"""A backchannel token's audio, prepared before the call."""


class YieldWatching(LineCaller):
    """Caller acts on a line and the agent's yields (a part of the line far end)."""

    ears: AgentEars

    def __init__(
        self,
        synthesizer: Synthesizer,
        backchannels: Backchannels,
        remote: RemoteConfig,
        user_source: str,
    ) -> None:
        super().__init__(synthesizer, remote, user_source)
        self.backchannels = backchannels
        self._watches: list[YieldWatch] = []
        self._turn = None

    def may_interrupt(self) -> bool:
        return not any(p.kind == "interruption" for p in self._pending)

    def interrupt(
        self, t: float, *, trigger: str, text: str, typed: bool, at: float | None, mic: bool
    ) -> None:
        source = "typed" if typed else "interruption"
        self._say("interruption", text, source, t, trigger)

    def _barge_in(
        self, turn: LineTurn, onset: float, trigger: str, text: str, decided_t: float, **extra: str
    ) -> None:
        """The caller's sound is on the line over the agent (from ``onset``): log the
        interruption and watch whether the agent yields."""
        turn.interrupted = True
        turn.cut_t = onset
        heard, estimated = self.ears.heard_by(onset)
        self.e.emit(
            Interruption(
                t=onset,
                turn=turn.index,
                trigger=trigger,
                cut_t=onset,
                cut_word=len(heard) + estimated,
                text=text,
                decided_t=round(decided_t, 6),
                reaction_s=round(onset - decided_t, 4),
                **extra,
            )
        )
        self._watch(turn, "interruption", onset, self.remote.interruption_window_s)

    def backchannel(self, t: float, *, trigger: str, token: str | None) -> None:
        turn = self._turn
        if turn is None or self.caller_active:
            return
        e = self.e
        chosen = token or e.rng.choice(e.config.backchannel_tokens)
        try:
            audio = self.backchannels(chosen)
        except Exception as exc:
            e.emit(ErrorEvent(t=round(t, 6), where="backchannel", message=str(exc)))
            return
        words, estimated = self.ears.heard_by(t)
        n = len(words) + estimated
        turn.backchannels += 1
        turn.words_at_last_backchannel = n
        utt = Utterance("backchannel", np.asarray(audio, dtype=np.float32), chosen)
        self.caller.overlay(utt)
        onset = self._onset_of(utt)
        e.emit(
            Backchannel(
                t=onset, turn=turn.index, trigger=trigger, token=chosen, words_heard=n, decided_t=t
            )
        )
        self._watch(turn, "backchannel", onset, self.remote.backchannel_window_s)

    # ---- watching the agent after a caller act ------------------------------------------

    def _watch(self, turn: LineTurn, after: str, onset: float, window_s: float) -> None:
        detector = self.e.detector
        silence = detector.silence_start if not detector.in_speech else None
        watch = YieldWatch(
            turn=turn.index,
            after=after,
            onset_t=onset,
            window_s=window_s,
            turn_end_s=self.e.config.turn_end_s,
            silence_start=silence,
        )
        self._watches.append(watch)
        turn.watches.append(watch)

    def _cleared(self, at: float) -> None:
        """The agent emptied its playout (a ``clear``): the watches it answers."""
        for watch in self._watches:
            if watch.clear_t is None and at >= watch.onset_t - 1e-9:
                watch.clear_t = at

    def _watch_frame(self, t0: float, t1: float, *, speaking: bool, caller_active: bool) -> None:
        if not self._watches:
            return
        still: list[YieldWatch] = []
        for watch in self._watches:
            if t1 < watch.onset_t:
                still.append(watch)
                continue
            result = watch.frame(t0, t1, speaking=speaking, caller_active=caller_active)
            if result is None:
                still.append(watch)
            else:
                self._report_yield(watch, result)
        self._watches = still

    def _report_yield(self, watch: YieldWatch, result: YieldResult) -> None:
        stop_t = watch.stop_time(result, self.tape, self.e.config.frame_s)
        if stop_t is not None:
            stop_t = round(stop_t, 6)
        words = self.ears.words()
        until = stop_t if stop_t is not None else watch.deadline
        heard = " ".join(w.word for w in words if w.end <= until + 1e-9)
        turn = self._turn
        if turn is not None and turn.index == watch.turn and watch.after == "interruption":
            turn.stop_t = stop_t
        silent = watch.already_silent(stop_t)
        extra = {"already_silent": True} if silent else {}
        self.e.emit(
            AgentYield(
                t=round(result.decided_t, 6),
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
