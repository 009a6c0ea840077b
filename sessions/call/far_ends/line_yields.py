"""A line call's caller acts, and what the agent did about them: an interruption puts the
caller's speech on the line, a backchannel plays a token, a vocal tic or side talk plays
a sound not meant as a turn, and a :class:`~.yield_watch.YieldWatch` (τ-Voice's windows)
reads off the agent's audio whether and when it stopped (``agent_yield`` events); a tic
or side talk while the agent is silent is watched for an answer within 2.0 s instead."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future

import numpy as np

from sessions.call.context import CallContext
from sessions.call.far_ends.agent_ears import AgentEars, Audio
from sessions.call.far_ends.yield_watches import YieldWatches
from sessions.call.line_parts import LineTurn
from sessions.call.near_end.caller_line import SoundKind, Utterance
from sessions.call.near_end.line_caller import CallerMouth, CurrentTurn
from sessions.call.response_clock import ResponseClock
from sessions.call.sound_tape import SoundTape
from sessions.log.models import (
    AgentYield,
    Backchannel,
    CallerSound,
    ErrorEvent,
    Interruption,
)
from sessions.speech import SAMPLE_RATE
from sessions.speech.tts import Speech

Backchannels = Callable[[str], Audio]
"""A backchannel token's audio, prepared before the call."""

SIDE_TALK = "Hold on, I am just asking my wife where she put the letter."
"""What the caller says to someone else in the room (τ-Voice's non-directed speech)."""
SIDE_TALK_DB = -12.0
"""Side talk is this much quieter than the caller's speech to the agent."""
VOCAL_TIC_DB = -6.0
SELECTIVITY_WINDOW_S = 1.0
"""τ-Voice: stopping within this of a tic or aside during agent speech is an error."""
RESPONSE_WINDOW_S = 2.0
"""τ-Voice: starting to talk within this of a tic or aside during silence is an error."""


def vocal_tic(seed: int = 7) -> Audio:
    """A cough: 180 ms of low-passed noise under a fast attack and a decay (no words)."""
    rng = np.random.default_rng(seed)
    n = int(0.18 * SAMPLE_RATE)
    noise = rng.standard_normal(n + 8)
    smooth = np.convolve(noise, np.ones(8) / 8, mode="valid")[:n]
    t = np.arange(n) / SAMPLE_RATE
    envelope = np.minimum(1.0, t / 0.01) * np.exp(-t / 0.06)
    audio = smooth * envelope
    audio *= 0.3 * 10 ** (VOCAL_TIC_DB / 20) / (np.abs(audio).max() + 1e-9)
    return np.asarray(audio, dtype=np.float32)


class BargeIns:
    """The caller's sound is on the line over the agent's turn (a
    :class:`~sessions.call.near_end.line_caller.BargeIn`): the ``interruption`` event,
    and a watch on whether the agent yields."""

    def __init__(
        self, ctx: CallContext, ears: AgentEars, watches: YieldWatches, window_s: float
    ) -> None:
        self.ctx = ctx
        self.ears = ears
        self.watches = watches
        self.window_s = window_s

    def __call__(
        self, turn: LineTurn, onset: float, trigger: str, text: str, decided_t: float, **extra: str
    ) -> None:
        turn.interrupted = True
        turn.cut_t = onset
        heard, estimated = self.ears.heard_by(onset)
        self.ctx.emit(
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
        self.watches.start(turn, "interruption", onset, self.window_s)


class LineYields:
    """A line call's caller acts beside its turns — backchannels, tics, asides — and what
    the agent did about them and about barge-ins (see the module). A part the line far
    end owns: it is handed the call's context, the caller's mouth (to sound the acts),
    the agent's ears and sound tape, the yield watches, the response clock and the agent
    turn in progress."""

    def __init__(
        self,
        ctx: CallContext,
        mouth: CallerMouth,
        ears: AgentEars,
        tape: SoundTape,
        watches: YieldWatches,
        responses: ResponseClock,
        *,
        backchannels: Backchannels,
        side_talk: Future[Speech],
        current_turn: CurrentTurn,
        backchannel_window_s: float,
    ) -> None:
        self.ctx = ctx
        self.mouth = mouth
        self.ears = ears
        self.tape = tape
        """The agent's audio as it came off the line."""
        self.watches = watches
        self.responses = responses
        self.backchannels = backchannels
        self._side_talk = side_talk
        """Synthesized before the call, long before it is asked for."""
        self._current = current_turn
        self.backchannel_window_s = backchannel_window_s
        self._answer_watches: list[tuple[str, float, float]] = []
        """Tics and asides during the agent's silence: (kind, onset, end of the sound)."""

    def backchannel(self, t: float, *, trigger: str, token: str | None) -> None:
        turn = self._current()
        if turn is None or self.mouth.caller_active:
            return
        e = self.ctx
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
        utt = Utterance(SoundKind.BACKCHANNEL, np.asarray(audio, dtype=np.float32), chosen)
        onset, _end = self.mouth.overlay(utt)
        e.emit(
            Backchannel(
                t=onset, turn=turn.index, trigger=trigger, token=chosen, words_heard=n, decided_t=t
            )
        )
        self.watches.start(turn, "backchannel", onset, self.backchannel_window_s)

    def caller_sound(self, t: float, kind: str) -> None:
        """A vocal tic or side talk now, over the agent's speech or into its silence."""
        e = self.ctx
        try:
            if kind == "non_directed":
                speech = self._side_talk.result(timeout=0) if self._side_talk.done() else None
                if speech is None:
                    raise RuntimeError("the side talk is still being synthesized")
                audio = np.asarray(speech.audio, dtype=np.float32) * 10 ** (SIDE_TALK_DB / 20)
                text, level = SIDE_TALK, SIDE_TALK_DB
            elif kind == "vocal_tic":
                audio, text, level = vocal_tic(), "", VOCAL_TIC_DB
            else:
                raise ValueError(f"no caller sound {kind!r} (vocal_tic | non_directed)")
        except Exception as exc:
            e.emit(ErrorEvent(t=round(t, 6), where="caller_sound", message=str(exc)))
            return
        utt = Utterance(SoundKind.SOUND, audio, text)
        onset, end = self.mouth.overlay(utt)
        turn = self._current()
        e.emit(
            CallerSound(
                t=onset,
                kind=kind,
                turn=turn.index if turn is not None else None,
                end_t=end,
                level_db=level,
                text=text,
            )
        )
        if turn is not None:
            self.watches.start(turn, kind, onset, SELECTIVITY_WINDOW_S)
        elif self._unambiguous_silence(t):
            self._answer_watches.append((kind, onset, end))

    def _unambiguous_silence(self, t: float) -> bool:
        """Whether an agent turn soon after a sound now could only answer the sound: the
        agent made no sound in the last 0.3 s (a turn the VAD has not opened yet), owes
        the caller no answer, and no caller turn is playing."""
        return (
            self.tape.last_sound(t - 0.3, t) is None
            and not self.responses.owed()
            and not self.mouth.channel.busy
        )

    def answered_sound(self, onset: float | None, t: float) -> None:
        """Tics and asides in the agent's silence: answered (an agent turn began at
        ``onset`` within the window) or not (the window passed by ``t``)."""
        still = []
        for kind, at, end in self._answer_watches:
            deadline = end + RESPONSE_WINDOW_S
            answered = onset is not None and at <= onset <= deadline
            span = self.mouth.turn_span
            if span is not None and span[0] < deadline and span[1] > at:
                continue  # the caller spoke in the window: an answer would be to it
            if answered or t >= deadline:
                self.ctx.emit(
                    AgentYield(
                        t=round(t, 6),
                        turn=-1,
                        after=kind,
                        onset_t=at,
                        window_s=RESPONSE_WINDOW_S,
                        yielded=False,
                        responded=answered,
                    )
                )
            else:
                still.append((kind, at, end))
        self._answer_watches = still

    # ---- watching the agent after a caller act ------------------------------------------

    def frame(self, t0: float, t1: float, *, speaking: bool, caller_active: bool) -> None:
        """One frame of the agent (``speaking``: the VAD is inside its speech): the tics'
        and asides' answer windows, then the yield watches."""
        if self._answer_watches:
            self.answered_sound(None, t1)
        self.watches.frame(t0, t1, speaking=speaking, caller_active=caller_active)
