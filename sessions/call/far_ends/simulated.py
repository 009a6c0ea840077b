"""The simulated far end: an :class:`~sessions.agents.base.Agent` that streams text, spoken
by cutin with the call's :class:`~sessions.call.voice.voice.Voice` (the text clock, or
synthesized audio). cutin owns the agent's speech, so an interruption truncates it: the
words that had finished playing are spoken, the rest unspoken, and the agent's history
keeps only the spoken part, marked ``truncated``.

The caller's speech is placed on a voice track too (:mod:`.simulated_caller`); the
tester's microphone arrives as :class:`CallerSpeechStart` (the floor is taken, an agent
that is speaking is cut there) and :class:`CallerUtterance` (the words, once STT has them).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from controls.pauses import PauseEvent
from sessions.agents.base import Agent, Message
from sessions.call.adapt import words_seen
from sessions.call.commands import CallerSpeechStart, CallerUtterance, Command, SubmitText
from sessions.call.context import Heard
from sessions.call.far_ends.simulated_caller import CallState, Floor, SimulatedCaller
from sessions.call.far_ends.simulated_turn import Cut, SimulatedTurn
from sessions.call.voice.voice import Voice
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    Backchannel,
    ErrorEvent,
    Interruption,
    SpeechStart,
)
from sessions.speech.words import TimedWord

if TYPE_CHECKING:
    from sessions.call.context import CallContext
    from sessions.call.near_end.caller import Caller
    from sessions.lines.base import Line


class SimulatedFarEnd:
    """An agent whose speech cutin makes (see the module): the agent's side (its turns
    on the voice, cut or talked over) is this class; the caller's side is a part it owns,
    :attr:`mouth` (:class:`~.simulated_caller.SimulatedCaller`); the two share only the
    :attr:`floor` (:class:`~.simulated_caller.Floor`: who speaks, and when next)."""

    tick_s = 0.008
    line: Line | None = None

    ctx: CallContext
    near: Caller
    mouth: SimulatedCaller

    def __init__(self, agent: Agent, voice: Voice) -> None:
        self.agent = agent
        self._voice = voice
        self.floor = Floor()
        self._agent_turns = 0
        self._agent_done = False

    def bind(self, ctx: CallContext, caller: Caller) -> None:
        self.ctx = ctx
        self.near = caller

        def agent_done() -> bool:
            return self._agent_done

        self.mouth = SimulatedCaller(ctx, caller, self._voice, self.floor, agent_done=agent_done)
        self._voice.caller_hesitations = ctx.config.profile.style == "human"

    @property
    def voice(self) -> Voice:
        return self._voice

    @property
    def turn(self) -> SimulatedTurn | None:
        turn = self.floor.turn
        if turn is None or self.floor.state is not CallState.AGENT_SPEAKING:
            return None
        turn.onset = turn.voice_track.onset  # a voice may place the first word late
        return turn

    @property
    def turn_index(self) -> int | None:
        return self.floor.turn.index if self.floor.turn is not None else None

    def heard(self, t: float) -> Heard:
        turn = self.floor.turn
        if turn is None:
            return Heard(0, "")
        n, text = turn.heard_text(t)
        return Heard(n, text)

    # ---- the frame ----------------------------------------------------------------------

    def begin(self, t: float) -> None:
        self._voice.tick(t)

    def frame(self, t: float, t1: float) -> float:
        self._agent_frame(t)
        turn = self.floor.turn
        if turn is None or self.floor.state is not CallState.AGENT_SPEAKING:
            return 0.0
        return turn.voice_track.speech_prob(t, t1)

    def heard_frame(self, t: float, t1: float, speaking: bool) -> None:
        pass

    def after_pauses(self, t: float, t1: float) -> None:
        turn = self.floor.turn
        if (
            turn is not None
            and self.floor.state is CallState.AGENT_SPEAKING
            and not self.ctx.pauses.in_turn
            and turn.voice_track.finished(t - self.ctx.config.turn_end_s)
        ):
            # Audio the VAD never took for speech (a tone, a silent TTS reply) ends no turn
            # by itself: the turn is over once it has been played and a turn end has passed.
            self._finish_agent_turn(t)

    def speech_start(self, ev: PauseEvent) -> None:
        self.ctx.emit(SpeechStart(t=ev.t, speaker="agent", turn=self.turn_index))

    def short_pause(self, ev: PauseEvent) -> None:
        pass

    def before_decision(self, ev: PauseEvent) -> None:
        pass

    def turn_end(self, ev: PauseEvent) -> None:
        turn = self.floor.turn
        if (
            turn is not None
            and self.floor.state is CallState.AGENT_SPEAKING
            and turn.voice_track.finished(ev.t)
        ):
            talk_over = None
            yields = self.ctx.config.scenario.agent.yields_when_interrupted
            if turn.cut_t is not None and not yields:
                talk_over = round(turn.voice_track.talk_over(turn.cut_t), 4)
            self._finish_agent_turn(ev.t, talk_over_s=talk_over)

    def ready_to_act(self) -> bool:
        return True

    def caller_busy(self, t: float) -> bool:
        return self.floor.caller_busy(t)

    def caller_frame(self, t: float, t1: float) -> None:
        self.mouth.frame(t)

    def may_interrupt(self) -> bool:
        return True

    def apply(self, command: Command, t: float) -> None:
        if isinstance(command, SubmitText):
            self.mouth.submit_text(command, t)
        elif isinstance(command, CallerSpeechStart):
            self.mouth.speech_start(command.at, t)
        elif isinstance(command, CallerUtterance):
            self.mouth.utterance(command, t)

    # ---- the agent's turns ----------------------------------------------------------------

    def _request_agent_turn(self, t: float) -> None:
        e = self.ctx
        if self._agent_turns >= e.config.max_agent_turns:
            e.end("max_agent_turns")
            return
        try:
            stream = self.agent.reply(list(e.history))
        except Exception as exc:
            # The call goes on: the caller gets the floor back, as after a silent agent.
            e.emit(ErrorEvent(t=t, where="agent", message=str(exc) or type(exc).__name__))
            self.floor.state = CallState.WAIT_USER
            self.floor.user_due = t + e.config.scenario.user.response_latency_s
            return
        if stream is None:
            self._agent_done = True
            if self.near.user is not None:
                # Headless: a scripted or simulated caller does not talk to silence.
                e.end("agent_done")
                return
            self.floor.state = CallState.WAIT_USER
            self.floor.user_due = t + e.config.scenario.user.response_latency_s
            return
        index = self._agent_turns
        self._agent_turns += 1
        track = self._voice.track("agent", index, seed=e.config.seed * 1009 + index)
        self.floor.turn = SimulatedTurn(index=index, onset=None, stream=stream, track=track)
        self.floor.state = CallState.AGENT_PENDING

    def _agent_frame(self, t: float) -> None:
        if self.floor.state is CallState.AGENT_PENDING:
            if self.floor.mic_open is not None:
                return  # the tester is speaking: the agent waits for their words
            if self.floor.turn is None:
                if t + 1e-9 >= self.floor.agent_due:
                    self._request_agent_turn(t)
                if self.floor.turn is None:
                    return
            if t + 1e-9 < self.floor.agent_due:
                return
        turn = self.floor.turn
        if turn is None or self.floor.state not in (
            CallState.AGENT_PENDING,
            CallState.AGENT_SPEAKING,
        ):
            return
        track = turn.voice_track
        if turn.cut_t is not None and turn.interrupted and track.stopped_at is not None:
            return
        track.tick(t)
        self._take_text(turn, t)
        turn.onset = track.onset
        if not turn.started and track.words:
            turn.started = True
            self.floor.state = CallState.AGENT_SPEAKING
            self.ctx.emit(
                AgentTurnStart(
                    t=track.words[0].start,
                    turn=turn.index,
                    text=turn.full_text if track.stream_done else None,
                )
            )
        if turn.started:
            self._report_words(turn, t + self.ctx.config.frame_s)
        assert turn.stream is not None
        if turn.stream.done and not track.words and track.finished(t):
            # An empty reply: nothing to say this turn (nor still being synthesized).
            self._finish_agent_turn(t)

    def _take_text(self, turn: SimulatedTurn, t: float, *, cut: bool = False) -> None:
        error = turn.take_text(t, virtual=self.ctx.virtual, cut=cut)
        if error is not None and not cut:
            self.ctx.emit(ErrorEvent(t=t, where="agent", message=error))

    def _report_words(self, turn: SimulatedTurn, until: float) -> None:
        event = turn.words_heard(until)
        if event is not None:
            self.ctx.emit(event)

    def _finish_agent_turn(self, t: float, *, talk_over_s: float | None = None) -> None:
        turn = self.floor.turn
        if turn is None:
            return
        self._report_words(turn, t + 1.0)
        track = turn.voice_track
        text = " ".join(w.word for w in track.words) or turn.full_text.strip()
        self.ctx.emit(
            AgentTurnEnd(
                t=t,
                turn=turn.index,
                text=text,
                spoken=text,
                interrupted=turn.interrupted,
                cut_t=turn.cut_t,
                talk_over_s=talk_over_s,
            )
        )
        if text:
            self.ctx.history.append(Message("assistant", text))
        self.floor.turn = None
        self._observe_turn(turn.index, track.words, t)
        self.mouth.after_agent_turn(t)

    def _observe_turn(self, index: int, words: list[TimedWord], t: float) -> None:
        self.ctx.dials.observe_turn(words_seen(index, words, ended=True), t)

    # ---- cutting the agent ----------------------------------------------------------------

    def interrupt(
        self, t: float, *, trigger: str, text: str, typed: bool, at: float | None, mic: bool
    ) -> None:
        turn = self.floor.turn
        assert turn is not None
        yields = self.ctx.config.scenario.agent.yields_when_interrupted
        if yields:
            cut = self._stop_agent(turn, t, at)
        else:
            cut = turn.talked_over(t if at is None else min(at, t))
        turn.interrupted = True
        turn.cut_t = cut.cut_t
        extra = {"source": "mic"} if mic else {}
        self.ctx.emit(
            Interruption(
                t=t,
                turn=turn.index,
                trigger=trigger,
                cut_t=cut.cut_t,
                cut_word=cut.cut_word,
                text=text,
                **extra,
            )
        )
        if yields:
            self._cut_agent_turn(turn, t, cut)
            if mic:
                self.floor.state = CallState.USER_SPEAKING
            else:
                self.mouth.start_user_turn(text, t, source="interruption")
        elif not mic:
            # The agent talks over the caller: both speak; its turn ends on its own.
            self.mouth.start_user_turn(text, t, source="interruption", hold=True)

    def _stop_agent(self, turn: SimulatedTurn, t: float, at: float | None = None) -> Cut:
        return turn.stop(t, at)

    def _cut_agent_turn(
        self, turn: SimulatedTurn, t: float, cut: Cut, *, interrupted: bool = True
    ) -> None:
        # What the agent had generated but not said stays in the log as unspoken.
        self._take_text(turn, t, cut=True)
        self._report_words(turn, cut.cut_t)
        planned = turn.planned_words()
        self.ctx.emit(
            AgentTurnEnd(
                t=t,
                turn=turn.index,
                text=" ".join(planned),
                spoken=cut.spoken,
                unspoken=" ".join(planned[cut.cut_word :]),
                interrupted=interrupted,
                cut_t=cut.cut_t,
                cut_word=cut.cut_word,
                talk_over_s=cut.talk_over_s,
            )
        )
        self.ctx.history.append(Message("assistant", cut.spoken, truncated=True))
        self.floor.turn = None
        self.ctx.pauses.reset()
        # The whole turn as the agent planned it: measured up to the cut only, every cut
        # would end at the pause the rule fired at, and the rhythm would look pauseless.
        self._observe_turn(turn.index, turn.voice_track.words, t)

    def backchannel(self, t: float, *, trigger: str, token: str | None) -> None:
        turn = self.turn
        if turn is None:
            return
        e = self.ctx
        chosen = token or e.rng.choice(e.config.backchannel_tokens)
        n, _spoken = turn.heard_text(t)
        turn.backchannels += 1
        turn.words_at_last_backchannel = n
        duration = self._voice.backchannel(chosen, t)
        busy = e.config.backchannel_s if duration is None else duration
        self.floor.user_busy_until = max(self.floor.user_busy_until, t + busy)
        e.emit(Backchannel(t=t, turn=turn.index, trigger=trigger, token=chosen, words_heard=n))
        if e.config.scenario.agent.treats_backchannel_as_turn:
            # A faulty agent: it takes the "mm-hmm" as the caller taking the floor.
            turn.interrupted = True
            self._cut_agent_turn(turn, t, self._stop_agent(turn, t))
            e.history.append(Message("user", chosen))
            self.floor.state = CallState.AGENT_PENDING
            self.floor.agent_due = (
                self.floor.user_busy_until + self.ctx.config.scenario.agent.response_latency_s
            )

    # ---- ending -------------------------------------------------------------------------

    def hang_up(self, t: float) -> None:
        turn = self.floor.turn
        if turn is not None and self.floor.state is CallState.AGENT_SPEAKING:
            # Hung up mid-speech: the turn is cut, but not by an interruption.
            self._cut_agent_turn(turn, t, self._stop_agent(turn, t), interrupted=False)
        self.floor.state = CallState.ENDED
        # Closing must never hide the call's own outcome.
        with contextlib.suppress(Exception):
            self.agent.close()

    def abort(self) -> None:
        self.floor.state = CallState.ENDED
