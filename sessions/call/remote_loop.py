"""The call loop for a black-box agent on a :class:`~sessions.lines.base.Line`.

Unlike :class:`~sessions.call.loop.CallLoop`, cutin does not own the agent's speech:
its audio arrives from the line and it decides for itself when to stop. Each 32 ms
frame on one clock:

1. apply the tester's commands; turn the line's notices into log events;
2. take the agent's audio for the frame from the line and the caller's from
   :class:`~sessions.call.caller_line.CallerChannel`; send the caller's; record both;
3. Silero VAD on the agent's audio feeds the pause detector: a speech start opens an
   agent turn, a short pause (200 ms) is an opportunity for the rule engine (exactly
   as in a simulated call), a turn end (500 ms) closes the turn with its transcript;
4. an interruption makes the *caller start speaking* over the agent and a backchannel
   plays a token; a :class:`~sessions.call.yield_watch.YieldWatch` then measures
   whether and how fast the agent stopped (``agent_yield`` events).

The same listeners, commands and events as the simulated loop, so the call screen,
the log, replay and the audit need nothing special.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from controls.disfluency import inject_disfluency
from controls.pauses import PauseDetector, PauseEvent, PauseEventKind
from controls.turn_taking import Action, Situation
from sessions.agents.base import Message
from sessions.call.adapt import line_turn_seen
from sessions.call.agent_ears import AgentEars, Audio
from sessions.call.caller_line import CallerChannel, Synthesizer, Utterance
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

if TYPE_CHECKING:
    from sessions.call.line_monitor import LineMonitor
    from sessions.call.mic import MicInput
from sessions.call.policy import PolicyContext, RulesPolicy, TurnTakingPolicy
from sessions.call.recording import CallRecording
from sessions.call.users import UserProvider
from sessions.call.yield_watch import (
    BACKCHANNEL_WINDOW_S,
    INTERRUPTION_WINDOW_S,
    SoundTape,
    YieldResult,
    YieldWatch,
)
from sessions.clock import Clock
from sessions.lines.base import Line, LineNotice, LineState, NoticeKind, PlayoutBuffer
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    AgentYield,
    Backchannel,
    EndEvent,
    ErrorEvent,
    InsertionRecord,
    Interruption,
    LineEvent,
    Opportunity,
    ShortPause,
    SpeechStart,
    TurnEnd,
    UserTurn,
    WordTiming,
)
from sessions.speech import FRAME_SAMPLES, SAMPLE_RATE
from sessions.speech.tts import Speech
from sessions.speech.words import TimedWord

Backchannels = Callable[[str], Audio]


@dataclass
class RemoteConfig:
    """What shapes a call to a black-box agent beyond :class:`CallConfig`."""

    interruption_window_s: float = INTERRUPTION_WINDOW_S
    backchannel_window_s: float = BACKCHANNEL_WINDOW_S
    silent_agent_s: float = 15.0
    """Say so (once) when the agent has sent no audio for this long since the call began."""
    caller_first_s: float = 4.0
    """A headless caller speaks first if the agent has not spoken by then."""
    user_hangup_s: float = 3.0
    """A headless caller with nothing left to say hangs up this long after the agent's turn."""
    caller_patience_s: float = 10.0
    """A headless caller whose turn the agent has not answered by then goes on (the wait is
    logged as a ``line`` event of kind ``no_response``)."""


@dataclass
class _Turn:
    index: int
    onset: float
    response_latency_s: float | None
    interrupted: bool = False
    cut_t: float | None = None
    stop_t: float | None = None
    backchannels: int = 0
    words_at_last_backchannel: int = 0
    words_reported: int = 0
    talk_over_s: float = 0.0
    watches: list[YieldWatch] = field(default_factory=list)
    pauses: list[tuple[float, float]] = field(default_factory=list)
    """Each short pause the VAD reported: (when it was reported, when its silence began)."""


@dataclass
class _Closing:
    """An agent turn that has ended, waiting for its final transcript."""

    turn: _Turn
    t: float
    end_t: float
    speech_s: float
    words: Future[list[TimedWord]]


@dataclass
class _Pending:
    """Caller speech waiting for its synthesis (and, for a turn, for the floor)."""

    kind: str
    future: Future[Speech]
    original: str
    rendered: str
    insertions: list[InsertionRecord]
    source: str
    trigger: str = "auto"
    token: str = ""
    decided_t: float = 0.0


class RemoteCallLoop(LoopCommands):
    """Runs one call with a black-box agent. Not thread-safe except for :meth:`submit`."""

    def __init__(
        self,
        config: CallConfig,
        line: Line,
        ears: AgentEars,
        synthesizer: Synthesizer,
        backchannels: Backchannels,
        *,
        remote: RemoteConfig | None = None,
        user: UserProvider | None = None,
        listeners: Iterable[Listener] = (),
        policy: TurnTakingPolicy | None = None,
        recording: CallRecording | None = None,
        virtual: bool = False,
        user_source: str = "scenario",
    ) -> None:
        self.config = config
        self.remote = remote or RemoteConfig()
        self.line = line
        self.ears = ears
        self.synth = synthesizer
        self.backchannels = backchannels
        self.user = user
        self.user_source = user_source
        """How the caller's own turns are logged: scenario | simulator."""
        self.listeners: list[Listener] = list(listeners)
        self.policy: TurnTakingPolicy = policy or RulesPolicy()
        self.shadow: TurnTakingPolicy | None = None
        self.recording = recording
        self.monitor: LineMonitor | None = None
        """The tester's speaker, when they listen in (``--listen``)."""
        self.virtual = virtual
        self.voice = _LineVoice(self)
        self.tendencies = config.tendencies
        self.auto_interrupt = config.auto_interrupt
        self.auto_backchannel = config.auto_backchannel
        self.t = 0.0
        self.history: list[Message] = []
        self.detector = PauseDetector(
            frame_s=config.frame_s,
            short_pause_s=config.short_pause_s,
            turn_end_s=config.turn_end_s,
        )
        self.caller = CallerChannel()
        self.tape = SoundTape()
        self.caller_tape = SoundTape()
        """What cutin sent into the line (the microphone's onsets are read off it)."""
        self.mic_audio: PlayoutBuffer | None = None
        """The tester's microphone, sent into the line as it is captured (``--input mic``)."""
        self.mic: MicInput | None = None
        self._mic_open: float | None = None
        """The tester's utterance in progress began here (mic clock), if any."""
        self._mic_cut = False
        """It began over an agent turn: an interruption, once its sound is on the line."""
        self._init_commands()
        self._rng = random.Random(config.seed)
        self._turn: _Turn | None = None
        self._agent_turns = 0
        self._user_turns = 0
        self._opportunities = 0
        self._pending: list[_Pending] = []
        self._closing: list[_Closing] = []
        self._queued: list[tuple[str, str]] = []
        self._watches: list[YieldWatch] = []
        self._last_caller_end: float | None = None
        self._answered_at: float | None = None
        """The caller turn end the agent answered (or was given up on)."""
        self._caller_due: float | None = None
        self._reply: Future[str | None] | None = None
        self._user_pool: ThreadPoolExecutor | None = None
        self._heard_agent = False
        self._warned_silent = False
        self._clear_t: float | None = None
        self._mono0 = time.monotonic()
        self._lead = np.zeros(0, dtype=np.float32)
        self.end_reason: str | None = None
        self._ended = False
        self.max_frame_lag_s = 0.0

    # ---- running --------------------------------------------------------------------

    TICK_S = 0.004

    @property
    def ended(self) -> bool:
        return self._ended

    def run_virtual(self, max_seconds: float) -> None:
        self._run_virtual(max_seconds)

    def _on_realtime(self, clock: Clock) -> None:
        self._mono0 = time.monotonic() - clock.now()

    def _frame_lag(self, lag_s: float) -> None:
        self.max_frame_lag_s = max(self.max_frame_lag_s, lag_s)

    def run_for(self, seconds: float) -> None:
        """Run in real time until the call ends or ``seconds`` have passed (then hang up);
        the loop's parts (line, STT worker, recording) are closed afterwards."""
        stop = threading.Event()
        timer = threading.Timer(seconds, stop.set)
        clock = self.voice.start(self.submit)
        timer.start()
        try:
            self.run_realtime(clock, stop)
        finally:
            timer.cancel()
            self.voice.close()

    def step(self) -> None:
        """Process the frame [t, t + frame_s)."""
        t = self.t
        frame_s = self.config.frame_s
        t1 = round(t + frame_s, 9)
        self._apply_commands(t)
        if self.ended:
            return
        self._line_notices(t)
        if self.ended:
            return
        self._start_ready_speech(t)
        agent = self.line.take(FRAME_SAMPLES)
        caller_was_active = self._caller_active
        caller, finished = self.caller.take(FRAME_SAMPLES)
        if self.mic_audio is not None:
            caller = np.clip(caller + self.mic_audio.take(FRAME_SAMPLES), -1.0, 1.0)
        self.caller_tape.append(caller)
        self.line.send(caller)
        if self.recording is not None:
            self.recording.push(agent, caller)
        if self.monitor is not None:
            self.monitor.push(agent, caller)
        self.tape.append(agent)
        self._mic_onset(t1)
        for utt in finished:
            self._caller_finished(utt, t1)
        if not self._heard_agent and np.abs(agent).max(initial=0.0) > 0:
            self._heard_agent = True
        prob = self.ears.prob(agent)
        events = self.detector.feed(t, prob)
        speaking = self.detector.in_speech
        if self._turn is not None:
            self.ears.push(agent, speaking=speaking, frame_s=frame_s)
            if self.ears.word_count() > self._turn.words_reported:  # a segment came back
                self._report_words(self._turn, self.ears.words())
            if speaking and caller_was_active:
                self._turn.talk_over_s += frame_s
        elif not speaking:
            self._lead = np.concatenate([self._lead, agent])[-FRAME_SAMPLES * 4 :]
        for ev in events:
            self._on_pause_event(ev, agent)
            if self.ended:
                return
        self._watch_frame(t, t1, speaking=speaking, caller_active=caller_was_active)
        if self._closing:
            self._flush_closing()
        self._caller_frame(t1)
        self._silence_watchdog(t1)
        self.t = t1

    # ---- commands ---------------------------------------------------------------------

    def _apply(self, command: Command, t: float) -> None:
        if isinstance(command, SubmitText):
            text = command.text.strip()
            if text:
                self._queued.append((text, command.source))
        elif isinstance(command, InterruptNow):
            if self._turn is not None:
                self._interrupt(t, trigger="manual", text=command.text)
            elif command.text.strip():
                self._queued.append((command.text.strip(), "typed"))
        elif isinstance(command, BackchannelNow):
            if self._turn is not None:
                self._backchannel(t, trigger="manual", token=command.token)
        elif isinstance(command, SetTendencies | SetAutos):
            self._set_dials(command, t)
        elif isinstance(command, CallerSpeechStart):
            if self._mic_open is None:
                self._mic_open = min(command.at, t)
                self._mic_cut = self._turn is not None
        elif isinstance(command, CallerUtterance):
            self._mic_utterance(command, t)
        elif isinstance(command, EndCall):
            self._end(command.reason)

    # ---- the line ---------------------------------------------------------------------

    def _notice_t(self, notice: LineNotice, t: float) -> float:
        return round(min(t, max(0.0, notice.mono - self._mono0)), 6) if not self.virtual else t

    def _line_notices(self, t: float) -> None:
        for notice in self.line.notices():
            at = self._notice_t(notice, t)
            self.emit(
                LineEvent(t=at, kind=str(notice.kind), detail=notice.detail, data=notice.data)
            )
            if notice.kind is NoticeKind.CLEAR:
                self._clear_t = at
                for watch in self._watches:
                    if watch.clear_t is None and at >= watch.onset_t - 1e-9:
                        watch.clear_t = at
            elif notice.kind is NoticeKind.ERROR:
                self.emit(ErrorEvent(t=at, where="line", message=notice.detail))
            elif notice.kind is NoticeKind.FAILED:
                self.emit(ErrorEvent(t=at, where="line", message=notice.detail))
                self._end("line_failed")
                return
            elif notice.kind is NoticeKind.CLOSED:
                self._end("agent_hangup" if notice.data.get("by") == "agent" else "hangup")
                return

    def _silence_watchdog(self, t: float) -> None:
        if self._heard_agent or self._warned_silent or t < self.remote.silent_agent_s:
            return
        self._warned_silent = True
        self.emit(
            ErrorEvent(
                t=round(t, 6),
                where="line",
                message=(
                    f"the agent has sent no audio in {self.remote.silent_agent_s:.0f} s "
                    f"({self.line.target}); is it the right URL, and does it speak?"
                ),
            )
        )

    # ---- the agent's turns ------------------------------------------------------------

    def _on_pause_event(self, ev: PauseEvent, agent: np.ndarray) -> None:
        ev.t = round(ev.t, 6)
        if ev.silence_start is not None:
            ev.silence_start = round(ev.silence_start, 6)
        if ev.kind is PauseEventKind.SPEECH_START:
            self._open_turn(ev, agent)
            return
        turn = self._turn
        index = turn.index if turn is not None else None
        assert ev.silence_start is not None
        if ev.kind is PauseEventKind.SHORT_PAUSE:
            self.emit(
                ShortPause(t=ev.t, index=ev.index, silence_start=ev.silence_start, turn=index)
            )
            if turn is not None:
                turn.pauses.append((ev.t, ev.silence_start))
            if turn is not None and not self._caller_active:
                self._opportunity(ev, turn)
            return
        self.emit(
            TurnEnd(
                t=ev.t,
                silence_start=ev.silence_start,
                turn=index,
                short_pause_index=ev.short_pause_index,
            )
        )
        if turn is not None:
            self._close_turn(turn, ev.t, ev.silence_start)

    def _open_turn(self, ev: PauseEvent, agent: np.ndarray) -> None:
        if self._turn is not None:
            return
        found = self.tape.first_sound(ev.t - 0.25, ev.t + self.config.frame_s)
        onset = round(found if found is not None else ev.t, 6)
        latency = None
        if self._last_caller_end is not None and not self.caller.active:
            latency = round(max(0.0, onset - self._last_caller_end), 4)
        index = self._agent_turns
        self._agent_turns += 1
        self._answered_at = self._last_caller_end
        self._turn = _Turn(index=index, onset=onset, response_latency_s=latency)
        self.ears.start_turn(ev.t, np.concatenate([self._lead, agent]) if self._lead.size else None)
        self._lead = np.zeros(0, dtype=np.float32)
        self.emit(SpeechStart(t=ev.t, speaker="agent", turn=index))
        self.emit(AgentTurnStart(t=onset, turn=index, response_latency_s=latency))

    def _report_words(self, turn: _Turn, words: list[TimedWord]) -> None:
        new = words[turn.words_reported :]
        if not new:
            return
        self.emit(
            AgentWords(
                t=round(new[-1].end, 4),
                turn=turn.index,
                first_index=turn.words_reported,
                words=[
                    WordTiming(word=w.word, start=round(w.start, 4), end=round(w.end, 4))
                    for w in new
                ],
            )
        )
        turn.words_reported += len(new)

    def _close_turn(self, turn: _Turn, t: float, silence_start: float) -> None:
        # Watches still waiting on this silence are decided by it (it is a turn end).
        self._watch_frame(t, t, speaking=False, caller_active=self.caller.active)
        end = self.tape.last_sound(silence_start - 0.3, silence_start + 0.064)
        closing = _Closing(
            turn,
            round(t, 6),
            round(end if end is not None else silence_start, 6),
            round(self.ears.turn_speech_s, 4),
            self.ears.close_turn(),
        )
        self._closing.append(closing)
        self._turn = None
        if self.user is not None and not self._queued and not self._pending:
            self._caller_due = t + self.config.scenario.user.response_latency_s
        self._flush_closing()

    def _flush_closing(self, *, wait: bool = False) -> None:
        """Log the turns whose final transcript is ready (all of them with ``wait``)."""
        while self._closing and (wait or self._closing[0].words.done()):
            c = self._closing.pop(0)
            try:
                words = c.words.result()
            except Exception as exc:
                self.emit(ErrorEvent(t=c.t, where="stt", message=str(exc)))
                words = []
            for err in self.ears.errors:
                self.emit(ErrorEvent(t=c.t, where="stt", message=err))
            self.ears.errors.clear()
            turn = c.turn
            self._report_words(turn, words)
            text = " ".join(w.word for w in words)
            cut_word = None
            if turn.cut_t is not None:
                cut_word = sum(1 for w in words if w.end <= turn.cut_t + 1e-9)
            self.emit(
                AgentTurnEnd(
                    t=c.t,
                    turn=turn.index,
                    text=text,
                    spoken=text,
                    interrupted=turn.interrupted,
                    cut_t=turn.cut_t,
                    cut_word=cut_word,
                    stop_t=turn.stop_t,
                    talk_over_s=round(turn.talk_over_s, 4),
                    speech_s=c.speech_s,
                    end_t=c.end_t,
                )
            )
            if text:
                self.history.append(Message("assistant", text, truncated=turn.interrupted))
            self._observe_turn(turn, words, c)

    # ---- --adapt ------------------------------------------------------------------------

    def _observe_turn(self, turn: _Turn, words: list[TimedWord], closing: _Closing) -> None:
        """An ended turn's rhythm for ``--adapt``, as the line gave it (recalibrates)."""
        adapter = self.adapter
        if adapter is None:
            return
        seen = line_turn_seen(
            turn.index,
            turn.onset,
            [(w.word, w.end) for w in words],
            turn.pauses,
            cut_t=turn.cut_t,
            end_t=closing.end_t,
            pause_s=self.config.short_pause_s,
        )
        if adapter.observe(seen):
            self.emit(adapter.recalibrate(self._effective_tendencies(), closing.t, "turn"))

    # ---- decisions --------------------------------------------------------------------

    def _situation(self, turn: _Turn, t: float) -> tuple[Situation, dict[str, object]]:
        words, estimated = self.ears.heard_by(t)
        text = " ".join(w.word for w in words)
        situation = Situation(
            agent_speaking_seconds=round(t - turn.onset, 4),
            agent_words=len(words) + estimated,
            agent_text=text,
            agent_turn_index=turn.index,
            interrupted_this_turn=turn.interrupted,
            backchannels_this_turn=turn.backchannels,
            words_at_last_backchannel=turn.words_at_last_backchannel,
        )
        return situation, {"words_transcribed": len(words), "words_estimated": estimated}

    def _opportunity(self, ev: PauseEvent, turn: _Turn) -> None:
        # The segment that just ended goes to STT (inline on the virtual clock).
        self.ears.segment(ev.silence_start if ev.silence_start is not None else ev.t)
        situation, heard = self._situation(turn, ev.t)
        ctx = PolicyContext(
            t=ev.t,
            situation=situation,
            tendencies=self._effective_tendencies(),
            history=list(self.history),
            turn_onset=turn.onset,
            pause_index=ev.index,
            virtual=self.virtual,
            rule_params=self._rule_params(ev.t),
        )
        index = self._opportunities
        self._opportunities += 1
        decision = self.policy.at_pause(ctx)
        if decision is None:
            return
        busy = bool(self._pending) or self._caller_active
        will_act = decision.action is not Action.NOTHING and not busy
        self.emit(
            Opportunity(
                t=ev.t,
                index=index,
                pause_index=ev.index,
                turn=turn.index,
                decision=str(decision.action),
                checks=[c.as_dict() for c in decision.checks],
                executed=will_act,
                mode="auto",
                policy=self.policy.name,
                situation={**situation.as_dict(), **heard},
                autos={"interrupt": self.auto_interrupt, "backchannel": self.auto_backchannel},
            )
        )
        if not will_act:
            return
        if decision.action is Action.INTERRUPT:
            self._interrupt(ev.t, trigger="auto")
        elif decision.action is Action.BACKCHANNEL:
            self._backchannel(ev.t, trigger="auto", token=decision.token)

    # ---- caller actions ---------------------------------------------------------------

    def _render(self, text: str) -> tuple[str, list[InsertionRecord]]:
        result = inject_disfluency(text, self.tendencies.alpha, self.config.profile)
        insertions = [
            InsertionRecord(index=i.index, kind=i.kind.value, token=i.token)
            for i in result.insertions
        ]
        return result.rendered, insertions

    def _say(self, kind: str, text: str, source: str, t: float, trigger: str = "auto") -> None:
        rendered, insertions = self._render(text)
        future = self.synth.submit(rendered)
        self._pending.append(
            _Pending(kind, future, text, rendered, insertions, source, trigger, decided_t=t)
        )
        self._start_ready_speech(t)

    def interruption_openers(self) -> list[str]:
        """The scenario's barge-in openers as they will be said (α-rendered), to prepare."""
        return [self._render(o)[0] for o in self.config.scenario.user.interruptions]

    def _interruption_line(self) -> str:
        opener = self._rng.choice(self.config.scenario.user.interruptions)
        more = getattr(self.user, "barge_in_content", None)
        content = more(list(self.history)) if callable(more) else None
        return f"{opener} {content}" if content else opener

    def _interrupt(self, t: float, *, trigger: str, text: str = "") -> None:
        if any(p.kind == "interruption" for p in self._pending):
            return
        line = text.strip() or self._interruption_line()
        source = "typed" if text.strip() else "interruption"
        self._say("interruption", line, source, t, trigger)

    def _backchannel(self, t: float, *, trigger: str, token: str | None = None) -> None:
        turn = self._turn
        if turn is None or self._caller_active:
            return
        chosen = token or self._rng.choice(self.config.backchannel_tokens)
        try:
            audio = self.backchannels(chosen)
        except Exception as exc:
            self.emit(ErrorEvent(t=round(t, 6), where="backchannel", message=str(exc)))
            return
        words, estimated = self.ears.heard_by(t)
        n = len(words) + estimated
        turn.backchannels += 1
        turn.words_at_last_backchannel = n
        utt = Utterance("backchannel", np.asarray(audio, dtype=np.float32), chosen)
        self.caller.overlay(utt)
        onset = self._onset_of(utt)
        self.emit(
            Backchannel(
                t=onset, turn=turn.index, trigger=trigger, token=chosen, words_heard=n, decided_t=t
            )
        )
        self._watch(turn, "backchannel", onset, self.remote.backchannel_window_s)

    def _onset_of(self, utt: Utterance) -> float:
        assert utt.start_index is not None
        return round(utt.start_index / SAMPLE_RATE + utt.lead_s, 6)

    def _watch(self, turn: _Turn, after: str, onset: float, window_s: float) -> None:
        silence = self.detector.silence_start if not self.detector.in_speech else None
        watch = YieldWatch(
            turn=turn.index,
            after=after,
            onset_t=onset,
            window_s=window_s,
            turn_end_s=self.config.turn_end_s,
            silence_start=silence,
        )
        self._watches.append(watch)
        turn.watches.append(watch)

    def _start_ready_speech(self, t: float) -> None:
        """Put synthesized caller speech on the line when it is ready and may be said."""
        while self._pending:
            p = self._pending[0]
            future = p.future
            if not future.done():
                return
            if p.kind == "turn" and (self._turn is not None or self.caller.busy):
                return  # a caller turn waits for the agent's turn to end
            self._pending.pop(0)
            try:
                speech = future.result()
            except Exception as exc:
                self.emit(ErrorEvent(t=round(t, 6), where="tts", message=str(exc)))
                continue
            if p.kind == "interruption" and self._turn is None:
                p.kind, p.source = "turn", "typed" if p.source == "typed" else "interruption"
            self._start_utterance(p, speech, t)

    def _start_utterance(self, p: _Pending, speech: Speech, t: float) -> None:
        audio = np.asarray(speech.audio, dtype=np.float32)
        words = list(speech.words)
        utt = Utterance(p.kind, audio, p.rendered)
        self.caller.play(utt)
        onset = self._onset_of(utt)
        start = utt.start_index / SAMPLE_RATE if utt.start_index is not None else t
        index = self._user_turns
        self._user_turns += 1
        turn = self._turn
        if p.kind == "interruption" and turn is not None:
            self._barge_in(turn, onset, p.trigger, p.original, p.decided_t)
        self.emit(
            UserTurn(
                t=onset,
                turn=index,
                source=p.source,
                original=p.original,
                rendered=p.rendered,
                insertions=p.insertions,
                alpha=self.tendencies.alpha,
                end_t=round(start + utt.duration, 4),
                words=[
                    WordTiming(
                        word=w.word, start=round(start + w.start, 4), end=round(start + w.end, 4)
                    )
                    for w in words
                ],
            )
        )
        self.history.append(Message("user", p.original))

    @property
    def _caller_active(self) -> bool:
        """The caller is producing audio: cutin's speech, a token, or the tester's mic."""
        return self.caller.active or self._mic_open is not None

    def _mic_onset(self, t: float) -> None:
        """A microphone utterance over the agent: once its sound is on the line, that is
        the onset of a manual interruption (watched like any other)."""
        if not self._mic_cut or self._mic_open is None:
            return
        onset = self.caller_tape.first_sound(self._mic_open - 0.05, t)
        turn = self._turn
        if onset is None:
            if t - self._mic_open > 1.0:
                self._mic_cut = False  # nothing audible reached the line: no cut
            return
        self._mic_cut = False
        if turn is None:
            return
        self._barge_in(turn, round(onset, 6), "manual", "", self._mic_open, source="mic")

    def _barge_in(
        self, turn: _Turn, onset: float, trigger: str, text: str, decided_t: float, **extra: str
    ) -> None:
        """The caller's sound is on the line over the agent (from ``onset``): log the
        interruption and watch whether the agent yields."""
        turn.interrupted = True
        turn.cut_t = onset
        heard, estimated = self.ears.heard_by(onset)
        self.emit(
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

    def _mic_utterance(self, command: CallerUtterance, t: float) -> None:
        start = self._mic_open if self._mic_open is not None else min(command.start, t)
        self._mic_open = None
        self._mic_cut = False
        text = " ".join(command.text.split())
        if not text:
            return  # noise, or nothing STT could make out
        end = max(start, min(command.end, t))
        index = self._user_turns
        self._user_turns += 1
        self._last_caller_end = round(end, 6)
        self.emit(mic_user_turn(command, index, text, start, end))
        self.history.append(Message("user", text))

    def _caller_finished(self, utt: Utterance, t: float) -> None:
        if utt.kind == "backchannel" or utt.start_index is None:
            return
        tail = utt.audio[::-1]
        loud = np.flatnonzero(np.abs(tail) >= self.tape.level)
        trailing = float(loud[0]) / SAMPLE_RATE if loud.size else 0.0
        self._last_caller_end = round(utt.start_index / SAMPLE_RATE + utt.duration - trailing, 6)

    def _caller_frame(self, t: float) -> None:
        if self._turn is not None or self.caller.busy or self._mic_open is not None:
            return
        if self._queued and not any(p.kind == "turn" for p in self._pending):
            text, source = self._queued.pop(0)
            self._say("turn", text, source, t)
            return
        if self.user is None or self._pending:
            return
        first = self._agent_turns == 0 and self._user_turns == 0
        if self._reply is None:
            if first and self._caller_due is None and t >= self.remote.caller_first_s:
                self._caller_due = t
            self._impatient(t)
            if self._caller_due is not None and t >= self._caller_due:
                self._caller_due = None
                self._reply = self._ask_user()
        if self._reply is None or not self._reply.done():
            return
        job, self._reply = self._reply, None
        try:
            reply = job.result()
        except Exception as exc:  # an LLM caller that fails: say so, and hang up
            self.emit(ErrorEvent(t=round(t, 6), where="user", message=str(exc) or repr(exc)))
            reply = None
        if reply is None:
            self.user = None  # nothing left to say: hang up after a moment
            self.schedule(t + self.remote.user_hangup_s, EndCall("user_hangup"))
            return
        self._say("turn", reply, self.user_source, t)

    def _impatient(self, t: float) -> None:
        """The caller spoke and the agent has not answered for a while: go on."""
        last = self._last_caller_end
        if self._caller_due is not None or last is None or self._answered_at == last:
            return
        if t - last < self.remote.caller_patience_s:
            return
        self._answered_at = last
        self.emit(
            LineEvent(
                t=round(t, 6),
                kind="no_response",
                detail=f"the agent did not answer within {self.remote.caller_patience_s:g} s",
                data={"caller_end_t": last},
            )
        )
        self._caller_due = t

    def _ask_user(self) -> Future[str | None]:
        """The caller's next line: inline on the virtual clock, else on a worker (an LLM
        simulator takes a second; the frame clock must not wait for it)."""
        assert self.user is not None
        user, history = self.user, list(self.history)
        if self.virtual:
            done: Future[str | None] = Future()
            try:
                done.set_result(user.next_turn(history))
            except Exception as exc:
                done.set_exception(exc)
            return done
        if self._user_pool is None:
            self._user_pool = ThreadPoolExecutor(1, thread_name_prefix="cutin-caller")
        return self._user_pool.submit(user.next_turn, history)

    # ---- watching the agent after a caller action ---------------------------------------

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
        stop_t = watch.stop_time(result, self.tape, self.config.frame_s)
        if stop_t is not None:
            stop_t = round(stop_t, 6)
        words = self.ears.words()
        until = stop_t if stop_t is not None else watch.deadline
        heard = " ".join(w.word for w in words if w.end <= until + 1e-9)
        turn = self._turn
        if turn is not None and turn.index == watch.turn and watch.after == "interruption":
            turn.stop_t = stop_t
        self.emit(
            AgentYield(
                t=round(result.decided_t, 6),
                turn=watch.turn,
                after=watch.after,
                onset_t=watch.onset_t,
                window_s=watch.window_s,
                yielded=result.yielded,
                stop_t=stop_t,
                latency_s=watch.latency(stop_t),
                resumed=result.resumed,
                clear_t=watch.clear_t,
                heard=heard,
                talk_over_s=result.talk_over_s,
            )
        )

    # ---- ending -----------------------------------------------------------------------

    def _end(self, reason: str) -> None:
        if self.ended:
            return
        self._ended = True
        self.end_reason = reason
        turn = self._turn
        if turn is not None:
            # Hung up mid-turn: the turn ends here (not cut by the caller unless it was).
            self._watch_frame(self.t, self.t, speaking=True, caller_active=False)
            self._closing.append(
                _Closing(
                    turn,
                    round(self.t, 6),
                    round(self.t, 6),
                    round(self.ears.turn_speech_s, 4),
                    self.ears.close_turn(),
                )
            )
            self._turn = None
        self._flush_closing(wait=True)
        # Hang up first, so the line's last word (closed by cutin) is in the log too.
        with contextlib.suppress(Exception):
            self.line.close()
        with contextlib.suppress(Exception):
            for notice in self.line.notices():
                self.emit(
                    LineEvent(
                        t=round(self.t, 6),
                        kind=str(notice.kind),
                        detail=notice.detail,
                        data=notice.data,
                    )
                )
        self.emit(EndEvent(t=round(self.t, 6), reason=reason))

    def _crash(self, exc: BaseException) -> None:
        if self.ended:
            return
        with contextlib.suppress(Exception):
            self.emit(
                ErrorEvent(
                    t=round(self.t, 6), where="call_loop", message=f"{type(exc).__name__}: {exc}"
                )
            )
            self._ended = True
            self.emit(EndEvent(t=round(self.t, 6), reason="crash"))
        with contextlib.suppress(Exception):
            self.line.close()

    def monotonic_at(self, t: float) -> float:
        """``time.monotonic()`` at call time ``t`` (real time only), e.g. for benchmarks."""
        return self._mono0 + t

    @property
    def line_state(self) -> LineState:
        return self.line.state


class _LineVoice:
    """What the call driver expects of ``loop.voice``: a clock, a recording, closing."""

    name = "line"

    def __init__(self, loop: RemoteCallLoop) -> None:
        self._loop = loop

    @property
    def recording(self) -> CallRecording | None:
        return self._loop.recording

    @property
    def realtime(self) -> bool:
        return not self._loop.virtual

    @property
    def mic(self) -> MicInput | None:
        return self._loop.mic

    def start(self, submit: Callable[[Command], None]) -> Clock:
        from sessions.call.audio_out import LeadClock

        clock = LeadClock(time.monotonic(), 0.0)
        if self._loop.mic is not None:
            self._loop.mic.start(clock, submit)
        return clock

    def close(self) -> None:
        loop = self._loop
        with contextlib.suppress(Exception):
            loop.line.close()
        loop.ears.close()
        loop.synth.close()
        if loop._user_pool is not None:
            loop._user_pool.shutdown(wait=False, cancel_futures=True)
        if loop.recording is not None:
            loop.recording.close()
        if loop.monitor is not None:
            with contextlib.suppress(Exception):
                loop.monitor.close()
        if loop.mic is not None:
            with contextlib.suppress(Exception):
                loop.mic.close()
