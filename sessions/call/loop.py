"""The call loop: one frame (32 ms) at a time, on one clock.

Each frame: apply the tester's commands, take the agent's new text, speak it with
the call's voice (the text clock, or synthesized audio: :mod:`sessions.call.voice`),
feed the agent's speech probability to the pause detector, consult the policy at
short pauses (an *opportunity* when the caller is silent), execute what it decides,
and report every step as a session-log event to the listeners.

The tester's microphone arrives as two commands: :class:`CallerSpeechStart` (the
onset: the floor is taken, and an agent that is speaking is cut there) and
:class:`CallerUtterance` (the words, once STT has them).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from controls.disfluency import inject_disfluency
from controls.pauses import PauseDetector, PauseEvent, PauseEventKind
from controls.turn_taking import Action, Situation
from sessions.agents.base import Agent, Message, ReplyStream
from sessions.call.adapt import RuleAdapter, words_seen
from sessions.call.commands import (
    BackchannelNow,
    CallerSpeechStart,
    CallerUtterance,
    Command,
    EndCall,
    InterruptNow,
    SetAutos,
    SetTendencies,
    SubmitText,
)
from sessions.call.config import CallConfig
from sessions.call.loop_base import Listener, LoopCommands, mic_user_turn
from sessions.call.policy import PolicyContext, PolicyDecision, RulesPolicy, TurnTakingPolicy
from sessions.call.users import UserProvider
from sessions.call.voice import TextVoice, Voice, VoiceTrack
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    Backchannel,
    EndEvent,
    ErrorEvent,
    InsertionRecord,
    Interruption,
    Opportunity,
    ShortPause,
    SpeechStart,
    TurnEnd,
    UserTurn,
    WordTiming,
)
from sessions.speech_clock import TimedWord

InterruptionText = Callable[[str, list[Message]], str]


class CallState(StrEnum):
    AGENT_PENDING = "agent_pending"
    """Waiting for the agent's reply to start."""
    AGENT_SPEAKING = "agent_speaking"
    WAIT_USER = "wait_user"
    USER_SPEAKING = "user_speaking"
    ENDED = "ended"


@dataclass
class _AgentTurn:
    index: int
    stream: ReplyStream
    track: VoiceTrack
    started: bool = False
    words_reported: int = 0
    interrupted: bool = False
    cut_t: float | None = None
    backchannels: int = 0
    words_at_last_backchannel: int = 0
    full_text: str = ""

    @property
    def onset(self) -> float | None:
        return self.track.onset

    def heard_text(self, t: float) -> tuple[int, str]:
        n = self.track.heard(t)
        return n, " ".join(w.word for w in self.track.words[:n])


@dataclass(frozen=True, slots=True)
class _Cut:
    """Where an agent turn was cut: the words spoken by ``cut_t``, audio on until ``stop_t``."""

    cut_t: float
    stop_t: float
    cut_word: int
    spoken: str

    @property
    def talk_over_s(self) -> float:
        return round(max(0.0, self.stop_t - self.cut_t), 4)


@dataclass
class _Pending:
    """An action decided now but executed later (an LLM policy's latency)."""

    at: float
    decision: PolicyDecision
    turn: int


class CallLoop(LoopCommands):
    """Runs one call. Not thread-safe except for :meth:`submit`."""

    def __init__(
        self,
        config: CallConfig,
        agent: Agent,
        *,
        user: UserProvider | None = None,
        listeners: Iterable[Listener] = (),
        policy: TurnTakingPolicy | None = None,
        shadow: TurnTakingPolicy | None = None,
        interruption_text: InterruptionText | None = None,
        virtual: bool = True,
        voice: Voice | None = None,
        adapter: RuleAdapter | None = None,
    ) -> None:
        self.config = config
        self.adapter = adapter
        """``--adapt``: the rule's thresholds follow the agent's rhythm (None: the paper's)."""
        self.voice: Voice = voice if voice is not None else TextVoice(config.style)
        self.voice.caller_hesitations = config.profile.style == "human"
        self.agent = agent
        self.user = user
        self.listeners: list[Listener] = list(listeners)
        self.policy: TurnTakingPolicy = policy or RulesPolicy()
        self.shadow = shadow
        self.interruption_text = interruption_text
        self.virtual = virtual
        self.tendencies = config.tendencies
        self.auto_interrupt = config.auto_interrupt
        self.auto_backchannel = config.auto_backchannel
        self.t = 0.0
        self.state = CallState.AGENT_PENDING
        self.history: list[Message] = []
        self.detector = PauseDetector(
            frame_s=config.frame_s,
            short_pause_s=config.short_pause_s,
            turn_end_s=config.turn_end_s,
        )
        self._init_commands()
        self._rng = random.Random(config.seed)
        self._agent_turns = 0
        self._agent_due = 0.0
        self._turn: _AgentTurn | None = None
        self._user_busy_until = -1.0
        self._user_turns = 0
        self._user_due: float | None = None
        self._queued_text: list[tuple[str, str]] = []
        self._held_user_message: Message | None = None
        self._opportunities = 0
        self._pending: _Pending | None = None
        self._agent_done = False
        self._mic_open: float | None = None
        """Onset of the tester's microphone utterance in progress (they hold the floor)."""
        self._mic_cut = False
        """That utterance interrupted the agent."""
        self.end_reason: str | None = None

    # ---- running ----------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self.state is CallState.ENDED

    def run_virtual(self, max_seconds: float | None = None) -> None:
        self._run_virtual(self.config.max_seconds if max_seconds is None else max_seconds)

    def step(self) -> None:
        """Process the frame [t, t + frame_s)."""
        t = self.t
        frame = self.config.frame_s
        self._apply_commands(t)
        if self.ended:
            return
        if self.adapter is not None and self.adapter.current is None:
            self._rule_params(t)
        self.voice.tick(t)
        if self._pending is not None and t >= self._pending.at:
            pending, self._pending = self._pending, None
            self._execute(pending.decision, t, trigger="auto", turn=pending.turn)
        self._agent_frame(t)
        turn = self._turn
        prob = (
            turn.track.speech_prob(t, t + frame)
            if turn is not None and self.state is CallState.AGENT_SPEAKING
            else 0.0
        )
        for ev in self.detector.feed(t, prob):
            self._on_pause_event(ev)
            if self.ended:
                return
        turn = self._turn
        if (
            turn is not None
            and self.state is CallState.AGENT_SPEAKING
            and not self.detector.in_turn
            and turn.track.finished(t - self.config.turn_end_s)
        ):
            # Audio the VAD never took for speech (a tone, a silent TTS reply) ends no turn
            # by itself: the turn is over once it has been played and a turn end has passed.
            self._finish_agent_turn(t)
        self._poll_policies(t + frame)
        self._user_frame(t)
        self.t = round(t + frame, 9)

    # ---- commands ---------------------------------------------------------------

    def _apply(self, command: Command, t: float) -> None:
        if isinstance(command, SubmitText):
            text = command.text.strip()
            if not text:
                return
            if self.state in (CallState.WAIT_USER,) and t >= self._user_busy_until:
                self._start_user_turn(text, t, source=command.source)
            else:
                self._queued_text.append((text, command.source))
        elif isinstance(command, InterruptNow):
            if self.state is CallState.AGENT_SPEAKING and self._turn is not None:
                decision = PolicyDecision(Action.INTERRUPT)
                self._interrupt(t, decision, trigger="manual", text=command.text, at=command.at)
            elif command.text.strip():
                self._apply(SubmitText(command.text), t)
        elif isinstance(command, CallerSpeechStart):
            self._caller_speech_start(command.at, t)
        elif isinstance(command, CallerUtterance):
            self._caller_utterance(command, t)
        elif isinstance(command, BackchannelNow):
            if self.state is CallState.AGENT_SPEAKING and self._turn is not None:
                self._backchannel(t, trigger="manual", token=command.token)
        elif isinstance(command, SetTendencies | SetAutos):
            self._set_dials(command, t)
        elif isinstance(command, EndCall):
            self._end(command.reason)

    # ---- the agent side ---------------------------------------------------------

    def _request_agent_turn(self, t: float) -> None:
        if self._agent_turns >= self.config.max_agent_turns:
            self._end("max_agent_turns")
            return
        try:
            stream = self.agent.reply(list(self.history))
        except Exception as exc:
            # The call goes on: the caller gets the floor back, as after a silent agent.
            self.emit(ErrorEvent(t=t, where="agent", message=str(exc) or type(exc).__name__))
            self.state = CallState.WAIT_USER
            self._user_due = t + self.config.scenario.user.response_latency_s
            return
        if stream is None:
            self._agent_done = True
            if self.user is not None:
                # Headless: a scripted or simulated caller does not talk to silence.
                self._end("agent_done")
                return
            self.state = CallState.WAIT_USER
            self._user_due = t + self.config.scenario.user.response_latency_s
            return
        index = self._agent_turns
        self._agent_turns += 1
        track = self.voice.track("agent", index, seed=self.config.seed * 1009 + index)
        self._turn = _AgentTurn(index=index, stream=stream, track=track)
        self.state = CallState.AGENT_PENDING

    def _agent_frame(self, t: float) -> None:
        if self.state is CallState.AGENT_PENDING:
            if self._mic_open is not None:
                return  # the tester is speaking: the agent waits for their words
            if self._turn is None:
                if t + 1e-9 >= self._agent_due:
                    self._request_agent_turn(t)
                if self._turn is None:
                    return
            if t + 1e-9 < self._agent_due:
                return
        turn = self._turn
        if turn is None or self.state not in (CallState.AGENT_PENDING, CallState.AGENT_SPEAKING):
            return
        if turn.cut_t is not None and turn.interrupted and turn.track.stopped_at is not None:
            return
        turn.track.tick(t)
        self._take_text(turn, t)
        if not turn.started and turn.track.words:
            turn.started = True
            self.state = CallState.AGENT_SPEAKING
            self.emit(
                AgentTurnStart(
                    t=turn.track.words[0].start,
                    turn=turn.index,
                    text=turn.full_text if turn.track.stream_done else None,
                )
            )
        if turn.started:
            self._report_words(turn, t + self.config.frame_s)
        if turn.stream.done and not turn.track.words and turn.track.finished(t):
            # An empty reply: nothing to say this turn (nor still being synthesized).
            self._finish_agent_turn(t)

    def _take_text(self, turn: _AgentTurn, t: float) -> None:
        stream = turn.stream
        if turn.track.stream_done:
            return
        # On the virtual clock an LLM is "infinitely fast": wait for text when the
        # voice has nothing left to say; in real time, take what has arrived.
        must_wait = self.virtual and t + 1e-9 >= (turn.track.end if turn.track.words else t)
        chunks = stream.poll(block=must_wait, timeout=60.0 if must_wait else None)
        for chunk in chunks:
            turn.full_text += chunk
            turn.track.add_text(chunk, t)
        if stream.done:
            turn.track.finish(t)
            if stream.error is not None:
                self.emit(ErrorEvent(t=t, where="agent", message=str(stream.error)))

    def _report_words(self, turn: _AgentTurn, until: float) -> None:
        words = turn.track.words
        n = turn.track.heard(until)
        if turn.track.stopped_at is not None:
            n = min(n, turn.track.heard(turn.track.stopped_at))
        if n > turn.words_reported:
            new = words[turn.words_reported : n]
            self.emit(
                AgentWords(
                    t=new[-1].end,
                    turn=turn.index,
                    first_index=turn.words_reported,
                    words=[
                        WordTiming(word=w.word, start=round(w.start, 4), end=round(w.end, 4))
                        for w in new
                    ],
                )
            )
            turn.words_reported = n

    def _finish_agent_turn(self, t: float, *, talk_over_s: float | None = None) -> None:
        turn = self._turn
        if turn is None:
            return
        self._report_words(turn, t + 1.0)
        text = " ".join(w.word for w in turn.track.words) or turn.full_text.strip()
        self.emit(
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
            self.history.append(Message("assistant", text))
        self._turn = None
        self._observe_turn(turn.index, turn.track.words, t, ended=True)
        self._after_agent_turn(t)

    def _after_agent_turn(self, t: float) -> None:
        if self._held_user_message is not None:
            # The caller spoke over an agent that kept going: their words follow its turn.
            self.history.append(self._held_user_message)
            self._held_user_message = None
            self.state = CallState.AGENT_PENDING
            self._agent_due = max(t, self._user_busy_until) + self._agent_latency()
            return
        self.state = CallState.WAIT_USER
        self._user_due = (
            max(t, self._user_busy_until) + self.config.scenario.user.response_latency_s
        )
        if self._queued_text:
            text, source = self._queued_text.pop(0)
            self._start_user_turn(text, max(t, self._user_busy_until), source=source)

    def _agent_latency(self) -> float:
        return self.config.scenario.agent.response_latency_s

    # ---- pauses and opportunities ----------------------------------------------

    def _on_pause_event(self, ev: PauseEvent) -> None:
        # One rounding for every time derived from frames, so equal moments compare equal.
        ev.t = round(ev.t, 6)
        if ev.silence_start is not None:
            ev.silence_start = round(ev.silence_start, 6)
        turn = self._turn
        turn_index = turn.index if turn is not None else None
        if ev.kind is PauseEventKind.SPEECH_START:
            self.emit(SpeechStart(t=ev.t, speaker="agent", turn=turn_index))
            return
        if ev.kind is PauseEventKind.SHORT_PAUSE:
            assert ev.silence_start is not None
            self.emit(
                ShortPause(
                    t=round(ev.t, 6),
                    index=ev.index,
                    silence_start=round(ev.silence_start, 6),
                    turn=turn_index,
                )
            )
            if (
                turn is not None
                and self.state is CallState.AGENT_SPEAKING
                and not self._user_busy(ev.t)
            ):
                self._opportunity(ev, turn)
            return
        assert ev.silence_start is not None
        self.emit(
            TurnEnd(
                t=round(ev.t, 6),
                silence_start=round(ev.silence_start, 6),
                turn=turn_index,
                short_pause_index=ev.short_pause_index,
            )
        )
        if (
            turn is not None
            and self.state is CallState.AGENT_SPEAKING
            and turn.track.finished(ev.t)
        ):
            talk_over = None
            if turn.cut_t is not None and not self.config.scenario.agent.yields_when_interrupted:
                talk_over = round(turn.track.talk_over(turn.cut_t), 4)
            self._finish_agent_turn(ev.t, talk_over_s=talk_over)

    def _user_busy(self, t: float) -> bool:
        return self._mic_open is not None or t < self._user_busy_until - 1e-9

    def _situation(self, turn: _AgentTurn, t: float) -> Situation:
        n, text = turn.heard_text(t)
        onset = turn.onset if turn.onset is not None else t
        return Situation(
            agent_speaking_seconds=round(t - onset, 4),
            agent_words=n,
            agent_text=text,
            agent_turn_index=turn.index,
            interrupted_this_turn=turn.interrupted,
            backchannels_this_turn=turn.backchannels,
            words_at_last_backchannel=turn.words_at_last_backchannel,
        )

    def _observe_turn(self, index: int, words: list[TimedWord], t: float, *, ended: bool) -> None:
        if self.adapter is not None and self.adapter.observe(words_seen(index, words, ended=ended)):
            self.emit(self.adapter.recalibrate(self._effective_tendencies(), t, "turn"))

    def _opportunity(self, ev: PauseEvent, turn: _AgentTurn) -> None:
        situation = self._situation(turn, ev.t)
        ctx = PolicyContext(
            t=ev.t,
            situation=situation,
            tendencies=self._effective_tendencies(),
            history=list(self.history),
            turn_onset=turn.onset or ev.t,
            pause_index=ev.index,
            virtual=self.virtual,
            rule_params=self._rule_params(ev.t),
        )
        index = self._opportunities
        self._opportunities += 1
        decision = self.policy.at_pause(ctx)
        if decision is not None:
            will_act = decision.action is not Action.NOTHING and self._pending is None
            self._log_opportunity(
                index, ev, turn, decision, self.policy.name, "auto", situation, executed=will_act
            )
            if will_act:
                if decision.delay_s > 0:
                    self._pending = _Pending(ev.t + decision.delay_s, decision, turn.index)
                else:
                    self._execute(decision, ev.t, trigger="auto", turn=turn.index)
        # The shadow sees the same moment (ctx is a snapshot) but runs after the acting
        # policy, so a slow shadow (an LLM) never delays what the caller actually does.
        if self.shadow is not None:
            shadow = self.shadow.at_pause(ctx)
            if shadow is not None:
                self._log_opportunity(
                    index, ev, turn, shadow, self.shadow.name, "shadow", situation, executed=False
                )

    def _poll_policies(self, t: float) -> None:
        """Give polling policies (τ-Voice's fixed schedule) their per-frame look."""
        turn = self._turn
        if turn is None or self.state is not CallState.AGENT_SPEAKING or turn.onset is None:
            return
        t = round(t, 6)
        for policy, mode in ((self.shadow, "shadow"), (self.policy, "auto")):
            if policy is None or not getattr(policy, "polls", True):
                continue
            ctx = PolicyContext(
                t=t,
                situation=self._situation(turn, t),
                tendencies=self._effective_tendencies(),
                history=list(self.history),
                turn_onset=turn.onset,
                virtual=self.virtual,
                user_busy=self._user_busy(t),
                rule_params=self._rule_params(t),
            )
            decision = policy.at_frame(ctx)
            if decision is None:
                continue
            index = self._opportunities
            self._opportunities += 1
            acting = mode == "auto"
            will_act = acting and decision.action is not Action.NOTHING and self._pending is None
            self._log_opportunity(
                index,
                None,
                turn,
                decision,
                policy.name,
                mode,
                ctx.situation,
                executed=will_act,
                t=t,
            )
            if will_act:
                if decision.delay_s > 0:
                    self._pending = _Pending(t + decision.delay_s, decision, turn.index)
                else:
                    self._execute(decision, t, trigger="auto", turn=turn.index)
            if self._turn is not turn:
                return

    def _log_opportunity(
        self,
        index: int,
        ev: PauseEvent | None,
        turn: _AgentTurn,
        decision: PolicyDecision,
        policy: str,
        mode: str,
        situation: Situation,
        *,
        executed: bool,
        t: float | None = None,
    ) -> None:
        at = ev.t if ev is not None else (t if t is not None else self.t)
        self.emit(
            Opportunity(
                t=round(at, 6),
                index=index,
                pause_index=ev.index if ev is not None else None,
                turn=turn.index,
                decision=str(decision.action),
                checks=[c.as_dict() for c in decision.checks],
                executed=executed,
                mode=mode,
                policy=policy,
                situation=situation.as_dict(),
                llm=decision.llm,
                autos={"interrupt": self.auto_interrupt, "backchannel": self.auto_backchannel},
            )
        )

    def _execute(self, decision: PolicyDecision, t: float, *, trigger: str, turn: int) -> None:
        current = self._turn
        if current is None or current.index != turn or self.state is not CallState.AGENT_SPEAKING:
            return
        if decision.action is Action.INTERRUPT:
            self._interrupt(t, decision, trigger=trigger)
        elif decision.action is Action.BACKCHANNEL:
            self._backchannel(t, trigger=trigger, token=decision.token)

    # ---- actions ----------------------------------------------------------------

    def _interruption_line(self, turn: _AgentTurn, t: float) -> str:
        _, heard = turn.heard_text(t)
        if self.interruption_text is not None:
            try:
                line = self.interruption_text(heard, list(self.history)).strip()
                if line:
                    return line
            except Exception as exc:
                self.emit(ErrorEvent(t=t, where="interruption_text", message=str(exc)))
        opener = self._rng.choice(self.config.scenario.user.interruptions)
        # A headless caller may say what they came to say after the opener (so a call
        # at β = 1 still moves forward); see ScriptedUser(barge_in_with_next_line=...).
        more = getattr(self.user, "barge_in_content", None)
        content = more(list(self.history)) if callable(more) else None
        return f"{opener} {content}" if content else opener

    def _interrupt(
        self,
        t: float,
        decision: PolicyDecision,
        *,
        trigger: str,
        text: str = "",
        at: float | None = None,
        mic: bool = False,
    ) -> None:
        """Cut the agent for the caller. ``at``: when the caller began (≤ t); ``mic``: the
        caller is speaking into the microphone, so their words come later (STT)."""
        turn = self._turn
        assert turn is not None
        line = "" if mic else text.strip() or self._interruption_line(turn, t)
        yields = self.config.scenario.agent.yields_when_interrupted
        if yields:
            cut = self._stop_agent(turn, t, at)
        else:
            cut_t = t if at is None else min(at, t)
            n, spoken = turn.heard_text(cut_t)
            cut = _Cut(cut_t, cut_t, n, spoken)
        turn.interrupted = True
        turn.cut_t = cut.cut_t
        extra = {"source": "mic"} if mic else {}
        self.emit(
            Interruption(
                t=t,
                turn=turn.index,
                trigger=trigger,
                cut_t=cut.cut_t,
                cut_word=cut.cut_word,
                text=line,
                **extra,
            )
        )
        if yields:
            self._cut_agent_turn(turn, t, cut)
            if mic:
                self.state = CallState.USER_SPEAKING
            else:
                self._start_user_turn(line, t, source="interruption")
        elif not mic:
            # The agent talks over the caller: both speak; its turn ends on its own.
            self._start_user_turn(line, t, source="interruption", hold=True)

    def _stop_agent(self, turn: _AgentTurn, t: float, at: float | None = None) -> _Cut:
        """Stop the agent's playback now; the words it had finished by the cut are spoken.

        The cut is at ``at`` (the caller's onset) or where the audio really stopped,
        whichever is earlier; audio played after the cut is the agent's talk-over.
        """
        stop_t = turn.track.stopped_at
        if stop_t is None:
            stop_t = turn.track.stop(t)
        cut_t = stop_t if at is None else min(at, stop_t)
        n, spoken = turn.heard_text(cut_t)
        return _Cut(cut_t, stop_t, n, spoken)

    def _cut_agent_turn(
        self, turn: _AgentTurn, t: float, cut: _Cut, *, interrupted: bool = True
    ) -> None:
        # What the agent had generated but not said stays in the log as unspoken. On the
        # virtual clock the agent is "infinitely fast", so its whole reply is taken; in
        # real time, what has arrived so far.
        while not turn.track.stream_done:
            chunks = turn.stream.poll(block=self.virtual, timeout=60.0)
            for chunk in chunks:
                turn.full_text += chunk
                turn.track.add_text(chunk, t)
            if turn.stream.done:
                turn.track.finish(t)
            elif not self.virtual or not chunks:
                break
        self._report_words(turn, cut.cut_t)
        planned = [w.word for w in turn.track.words]
        pending = turn.track.pending_text
        if pending.strip():
            planned.extend(pending.split())
        unspoken = " ".join(planned[cut.cut_word :])
        self.emit(
            AgentTurnEnd(
                t=t,
                turn=turn.index,
                text=" ".join(planned),
                spoken=cut.spoken,
                unspoken=unspoken,
                interrupted=interrupted,
                cut_t=cut.cut_t,
                cut_word=cut.cut_word,
                talk_over_s=cut.talk_over_s,
            )
        )
        self.history.append(Message("assistant", cut.spoken, truncated=True))
        self._turn = None
        self.detector.reset()
        # The whole turn as the agent planned it: measured up to the cut only, every cut
        # would end at the pause the rule fired at, and the rhythm would look pauseless.
        self._observe_turn(turn.index, turn.track.words, t, ended=True)

    def _backchannel(self, t: float, *, trigger: str, token: str | None = None) -> None:
        turn = self._turn
        assert turn is not None
        chosen = token or self._rng.choice(self.config.backchannel_tokens)
        n, _spoken = turn.heard_text(t)
        turn.backchannels += 1
        turn.words_at_last_backchannel = n
        duration = self.voice.backchannel(chosen, t)
        busy = self.config.backchannel_s if duration is None else duration
        self._user_busy_until = max(self._user_busy_until, t + busy)
        self.emit(Backchannel(t=t, turn=turn.index, trigger=trigger, token=chosen, words_heard=n))
        if self.config.scenario.agent.treats_backchannel_as_turn:
            # A faulty agent: it takes the "mm-hmm" as the caller taking the floor.
            turn.interrupted = True
            self._cut_agent_turn(turn, t, self._stop_agent(turn, t))
            self.history.append(Message("user", chosen))
            self.state = CallState.AGENT_PENDING
            self._agent_due = self._user_busy_until + self._agent_latency()

    # ---- the caller side --------------------------------------------------------

    def _start_user_turn(self, text: str, t: float, *, source: str, hold: bool = False) -> None:
        result = inject_disfluency(text, self.tendencies.alpha, self.config.profile)
        index = self._user_turns
        self._user_turns += 1
        track = self.voice.track("caller", index, seed=self.config.seed * 7919 + index)
        track.add_text(result.rendered, t, final=True)
        end = track.end if track.words else t
        self._user_busy_until = max(self._user_busy_until, end)
        self.emit(
            UserTurn(
                t=t,
                turn=index,
                source=source,
                original=text,
                rendered=result.rendered,
                insertions=[
                    InsertionRecord(index=i.index, kind=i.kind.value, token=i.token)
                    for i in result.insertions
                ],
                alpha=result.alpha,
                end_t=round(end, 4),
                words=[
                    WordTiming(word=w.word, start=round(w.start, 4), end=round(w.end, 4))
                    for w in track.words
                ],
            )
        )
        message = Message("user", text)
        if hold:
            self._held_user_message = message
            return
        self.history.append(message)
        self.state = CallState.USER_SPEAKING

    def _user_frame(self, t: float) -> None:
        if self.state is CallState.USER_SPEAKING and not self._user_busy(t):
            if self._queued_text:
                # The caller typed while the agent spoke; they keep the floor and say it.
                text, source = self._queued_text.pop(0)
                self._start_user_turn(text, t, source=source)
                return
            self.state = CallState.AGENT_PENDING
            self._turn = None
            self._agent_due = t + self._agent_latency()
            return
        if self.state is CallState.WAIT_USER and not self._user_busy(t):
            if self._queued_text:
                text, source = self._queued_text.pop(0)
                self._start_user_turn(text, t, source=source)
                return
            if self.user is not None and self._user_due is not None and t >= self._user_due:
                self._user_due = None
                reply = self.user.next_turn(list(self.history))
                if reply is None:
                    self._end("user_hangup")
                    return
                self._start_user_turn(reply, t, source="scenario")
            elif self.user is None and self._agent_done and self.virtual:
                self._end("script_complete")

    # ---- the caller's microphone ------------------------------------------------

    def _caller_speech_start(self, at: float, t: float) -> None:
        if self._mic_open is not None:
            return
        at = min(at, t)
        self._mic_open = at
        self._mic_cut = False
        if self.state is CallState.AGENT_SPEAKING and self._turn is not None:
            self._mic_cut = True
            # A tester's own action, counted like a key press (the user turn says "mic").
            self._interrupt(t, PolicyDecision(Action.INTERRUPT), trigger="manual", at=at, mic=True)
        elif self.state is CallState.WAIT_USER:
            self.state = CallState.USER_SPEAKING

    def _caller_utterance(self, command: CallerUtterance, t: float) -> None:
        if self._mic_open is None:
            self._caller_speech_start(command.start, t)
        start = self._mic_open if self._mic_open is not None else min(command.start, t)
        interrupted, self._mic_cut = self._mic_cut, False
        self._mic_open = None
        text = " ".join(command.text.split())
        if not text:
            # Noise, or nothing STT could make out. After a cut the agent takes the floor
            # back (as after any caller turn); otherwise nothing happened.
            if self.state is CallState.USER_SPEAKING and not interrupted:
                self.state = CallState.WAIT_USER
            return
        end = max(start, min(command.end, t))
        index = self._user_turns
        self._user_turns += 1
        self._user_busy_until = max(self._user_busy_until, end)
        self.emit(mic_user_turn(command, index, text, start, end))
        message = Message("user", text)
        if self.state is CallState.AGENT_SPEAKING and self._turn is not None:
            # An agent that does not yield is still talking: the words follow its turn.
            self._held_user_message = message
            return
        self.history.append(message)
        self.state = CallState.USER_SPEAKING

    # ---- ending -----------------------------------------------------------------

    def _end(self, reason: str) -> None:
        if self.ended:
            return
        turn = self._turn
        if turn is not None and self.state is CallState.AGENT_SPEAKING:
            # Hung up mid-speech: the turn is cut, but not by an interruption.
            self._cut_agent_turn(turn, self.t, self._stop_agent(turn, self.t), interrupted=False)
        self.state = CallState.ENDED
        self.end_reason = reason
        self.emit(EndEvent(t=round(self.t, 6), reason=reason))
        # Closing must never hide the call's own outcome.
        with contextlib.suppress(Exception):
            self.agent.close()

    def _crash(self, exc: BaseException) -> None:
        if self.ended:
            return
        try:
            self.emit(
                ErrorEvent(
                    t=round(self.t, 6), where="call_loop", message=f"{type(exc).__name__}: {exc}"
                )
            )
            self.state = CallState.ENDED
            self.emit(EndEvent(t=round(self.t, 6), reason="crash"))
        except Exception:
            pass
