"""The caller's mouth on a line: what the near end says becomes synthesized audio sent
into the line (typed or scripted text, α-injected and synthesized off the frame clock;
barge-in openers prepared before the call), the tester's microphone goes in as captured,
keypad steps go out as DTMF, and a headless caller goes on when the agent does not
answer. A part of :class:`~sessions.call.far_ends.line.LineFarEnd`, which hands it what
it may use of the rest (:class:`CallerMouth`)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from sessions.agents.base import Message
from sessions.call.commands import (
    CallerSpeechStart,
    CallerUtterance,
    Command,
    EndCall,
    SubmitText,
)
from sessions.call.near_end.caller import mic_user_turn
from sessions.call.near_end.caller_line import (
    Audio,
    CallerChannel,
    SoundKind,
    Synthesizer,
    Utterance,
)
from sessions.call.response_clock import ResponseClock
from sessions.call.sound_tape import SoundTape
from sessions.callers.users import CallerReply
from sessions.lines.base import LineError, PlayoutBuffer
from sessions.log.models import ErrorEvent, InsertionRecord, UserTurn, WordTiming
from sessions.scenarios.model import KeypadStep
from sessions.speech import SAMPLE_RATE
from sessions.speech.tts import Speech

if TYPE_CHECKING:
    from sessions.call.context import CallContext
    from sessions.call.line_parts import LineTurn, RemoteConfig
    from sessions.call.near_end.caller import Caller
    from sessions.call.near_end.mic import MicInput
    from sessions.lines.base import Line


class BargeIn(Protocol):
    """The far end, told that the caller's sound is on the line over the agent's turn
    from ``onset`` (an interruption decided at ``decided_t``): it logs and watches it."""

    def __call__(
        self, turn: LineTurn, onset: float, trigger: str, text: str, decided_t: float, **extra: str
    ) -> None: ...


@dataclass
class _Speech:
    """Caller speech waiting for its synthesis (and, for a turn, for the floor)."""

    kind: SoundKind
    future: Future[Speech]
    original: str
    rendered: str
    insertions: list[InsertionRecord]
    source: str
    trigger: str = "auto"
    decided_t: float = 0.0


AgentTurns = Callable[[], int]
"""How many agent turns have begun (the caller speaks first only before the agent did)."""
CurrentTurn = Callable[[], "LineTurn | None"]
"""The agent turn in progress on the line, if any (the far end's)."""


class CallerMouth:
    """The caller's mouth on a line: the near end's speech (typed, scripted or a
    simulator's text, synthesized), barge-ins, the tester's microphone, keypad steps and
    the headless caller's patience. A part the
    :class:`~sessions.call.far_ends.line.LineFarEnd` owns: it is handed the call's
    context, the near end's caller, the line (its keypad), the response clock, the agent
    turn in progress and the agent's turns so far, and what to do when its sound goes
    over the agent's turn (``barge_in``); it knows nothing else of the far end."""

    def __init__(
        self,
        ctx: CallContext,
        near: Caller,
        line: Line,
        synthesizer: Synthesizer,
        remote: RemoteConfig,
        user_source: str,
        *,
        responses: ResponseClock,
        current_turn: CurrentTurn,
        agent_turns: AgentTurns,
        barge_in: BargeIn,
        line_rate: int = SAMPLE_RATE,
    ) -> None:
        self.ctx = ctx
        self.near = near
        """The near end's caller (typed text, the headless caller's lines)."""
        self._line = line
        self.synth = synthesizer
        self._barge_in = barge_in
        """The far end's part: the caller's sound is on the line over the agent."""
        self._current = current_turn
        self._agent_turns = agent_turns
        self.remote = remote
        self.user_source = user_source
        """How the caller's own turns are logged: scenario | simulator."""
        self.channel = CallerChannel()
        self.caller_tape = SoundTape()
        """What cutin sent into the line (the microphone's onsets are read off it)."""
        self.mic_audio: PlayoutBuffer | None = None
        """The tester's microphone, sent into the line as it is captured (``--input mic``)."""
        self.mic: MicInput | None = None
        self._mic_open: float | None = None
        """The tester's utterance in progress began here (mic clock), if any."""
        self._mic_cut = False
        """It began over an agent turn: an interruption, once its sound is on the line."""
        self._pending: list[_Speech] = []
        self.line_rate = line_rate
        """The line's sample rate: the caller's onsets and ends are read as they leave on it."""
        self.responses = responses
        """When the caller's sound ended, and whether (and how fast) the agent answered."""
        self.turn_span: tuple[float, float] | None = None
        """The caller's last turn or barge-in on the line: (onset, end of its last sound)."""
        self._last_caller_end: float | None = None
        self._answered_at: float | None = None
        """The caller turn end the agent answered (or was given up on)."""
        self._caller_due: float | None = None
        self._reply: Future[CallerReply] | None = None
        self._keys_pressed = 0
        """Keypad steps the caller has pressed (the first step may be one)."""

    @property
    def _turn(self) -> LineTurn | None:
        return self._current()

    @property
    def caller_active(self) -> bool:
        """The caller is producing audio: cutin's speech, a token, or the tester's mic."""
        return self.channel.active or self._mic_open is not None

    def ready_to_act(self) -> bool:
        """No caller speech waiting for its synthesis or playing."""
        return not self._pending and not self.caller_active

    def may_interrupt(self) -> bool:
        """No interruption is already on its way."""
        return not any(p.kind is SoundKind.INTERRUPTION for p in self._pending)

    def apply(self, command: Command, t: float) -> None:
        if isinstance(command, SubmitText):
            text = command.text.strip()
            if text:
                self.near.queued.append((text, command.source))
        elif isinstance(command, CallerSpeechStart):
            if self._mic_open is None:
                self._mic_open = min(command.at, t)
                self._mic_cut = self._turn is not None
        elif isinstance(command, CallerUtterance):
            self._mic_utterance(command, t)

    def say(self, kind: SoundKind, text: str, source: str, t: float, trigger: str = "auto") -> None:
        rendered, insertions, _alpha = self.near.render(text)
        future = self.synth.submit(rendered)
        self._pending.append(
            _Speech(kind, future, text, rendered, insertions, source, trigger, decided_t=t)
        )
        self.start_ready_speech(t)

    def start_ready_speech(self, t: float) -> None:
        """Put synthesized caller speech on the line when it is ready and may be said."""
        while self._pending:
            p = self._pending[0]
            future = p.future
            if not future.done():
                return
            if p.kind is SoundKind.TURN and (self._turn is not None or self.channel.busy):
                return  # a caller turn waits for the agent's turn to end
            self._pending.pop(0)
            try:
                speech = future.result()
            except Exception as exc:
                self.ctx.emit(ErrorEvent(t=round(t, 6), where="tts", message=str(exc)))
                continue
            if p.kind is SoundKind.INTERRUPTION and self._turn is None:
                p.kind, p.source = (
                    SoundKind.TURN,
                    "typed" if p.source == "typed" else "interruption",
                )
            self._start_utterance(p, speech, t)

    def _start_utterance(self, p: _Speech, speech: Speech, t: float) -> None:
        e = self.ctx
        audio = np.asarray(speech.audio, dtype=np.float32)
        words = list(speech.words)
        utt = Utterance(p.kind, audio, p.rendered)
        if p.kind is SoundKind.TURN:
            # The caller speaks again while an answer is still owed: a no_response.
            self.responses.spoke_again(t, agent_turn_open=self._turn is not None)
        self.channel.play(utt)
        onset = self._onset_of(utt)
        start = utt.start_index / SAMPLE_RATE if utt.start_index is not None else t
        end = round(start + utt.line_span(self.line_rate)[1], 4)
        self.turn_span = (onset, end)
        index = self.near.next_index()
        turn = self._turn
        if p.kind is SoundKind.INTERRUPTION and turn is not None:
            self._barge_in(turn, onset, p.trigger, p.original, p.decided_t)
        e.emit(
            UserTurn(
                t=onset,
                turn=index,
                source=p.source,
                original=p.original,
                rendered=p.rendered,
                insertions=p.insertions,
                alpha=e.dials.alpha,
                end_t=end,
                words=[
                    WordTiming(
                        word=w.word, start=round(start + w.start, 4), end=round(start + w.end, 4)
                    )
                    for w in words
                ],
            )
        )
        e.history.append(Message("user", p.original))

    def _onset_of(self, utt: Utterance) -> float:
        """Where the utterance's sound starts on the line (as the agent hears it)."""
        assert utt.start_index is not None
        return round(utt.start_index / SAMPLE_RATE + utt.line_span(self.line_rate)[0], 6)

    def overlay(self, utt: Utterance) -> tuple[float, float]:
        """Play a sound over whatever the caller is saying (a backchannel token, a tic,
        an aside) from the next frame: (its onset, the end of its last sound) on the line."""
        self.channel.overlay(utt)
        assert utt.start_index is not None
        start = utt.start_index / SAMPLE_RATE
        first, last = utt.line_span(self.line_rate)
        return round(start + first, 6), round(start + last, 6)

    # ---- the frame ----------------------------------------------------------------------

    def take(self, n: int) -> tuple[Audio, list[Utterance]]:
        """The caller's next ``n`` samples for the line (cutin's speech and tokens, with
        the tester's microphone mixed in), and the utterances that finished in them."""
        audio, finished = self.channel.take(n)
        if self.mic_audio is not None:
            audio = np.clip(audio + self.mic_audio.take(n), -1.0, 1.0)
        self.caller_tape.append(audio)
        return audio, finished

    def sent(self, t: float, finished: list[Utterance]) -> None:
        """The frame that :meth:`take` gave is on the line (by ``t``): a microphone onset
        over the agent is a barge-in; the finished utterances' ends are the caller's."""
        self._mic_onset(t)
        for utt in finished:
            self._caller_finished(utt, t)

    def agent_answered(self) -> None:
        """An agent turn began: the caller's last turn is answered (no impatience)."""
        self._answered_at = self._last_caller_end

    def agent_turn_ended(self, t: float) -> None:
        """An agent turn ended at ``t``: a headless caller with nothing said or waiting
        speaks after its response latency."""
        near = self.near
        if near.user is not None and not near.queued and not self._pending:
            self._caller_due = t + self.ctx.config.scenario.user.response_latency_s

    # ---- the tester's microphone --------------------------------------------------------

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

    def _mic_utterance(self, command: CallerUtterance, t: float) -> None:
        start = self._mic_open if self._mic_open is not None else min(command.start, t)
        self._mic_open = None
        self._mic_cut = False
        text = " ".join(command.text.split())
        if not text:
            return  # noise, or nothing STT could make out
        end = max(start, min(command.end, t))
        index = self.near.next_index()
        self._last_caller_end = round(end, 6)
        self.responses.caller_ended(self._last_caller_end, "turn")
        self.ctx.emit(mic_user_turn(command, index, text, start, end))
        self.ctx.history.append(Message("user", text))

    def _caller_finished(self, utt: Utterance, t: float) -> None:
        """The caller's sound ended: the agent's response is timed from here (the last
        sound as it left on the line), a backchannel's too (docs/agent-measures.md)."""
        if utt.start_index is None or utt.kind is SoundKind.SOUND:
            return  # a tic or an aside is no turn: its own window watches the agent
        end = round(utt.start_index / SAMPLE_RATE + utt.line_span(self.line_rate)[1], 6)
        self.responses.caller_ended(end, utt.kind.value)
        if utt.kind is not SoundKind.BACKCHANNEL:
            self._last_caller_end = end

    # ---- the caller's sound when the agent starts ------------------------------------------

    def caller_at(self, onset: float) -> tuple[bool, bool]:
        """An agent turn starts at ``onset``: (whether it starts over the caller's turn, an
        agent interruption; whether the caller still sounds). A caller utterance whose
        sound has ended by then counts as ended."""
        span = self.turn_span
        over = (span is not None and span[0] <= onset < span[1] - 1e-6) or (
            self._mic_open is not None and self._mic_open <= onset
        )
        self._sound_ended_by(onset)
        sounding = self.channel.busy or (self.channel.active and not self._only_tails(onset))
        return over, sounding

    def _sound_ended_by(self, t: float) -> None:
        """The caller's utterance whose sound has ended by ``t`` counts as ended, though
        its audio's trailing silence is still playing."""
        cur = self.channel.current
        if cur is None or cur.start_index is None:
            return
        end = round(cur.start_index / SAMPLE_RATE + cur.line_span(self.line_rate)[1], 6)
        if end <= t + 1e-9:
            self.channel.release()
            self._caller_finished(cur, t)

    def _only_tails(self, t: float) -> bool:
        """Every backchannel still playing has no sound left after ``t``."""
        return all(
            utt.start_index is not None
            and utt.start_index / SAMPLE_RATE + utt.line_span(self.line_rate)[1] <= t + 1e-9
            for utt in self.channel.overlays()
        )

    # ---- who speaks next ----------------------------------------------------------------

    def frame(self, t: float) -> None:
        """The caller's part of the frame ending at ``t``: queued text is said, a
        headless caller is asked for its next line when it is due, keys pressed."""
        e = self.ctx
        near = self.near
        if self._turn is not None or self.channel.busy or self._mic_open is not None:
            return
        if near.queued and not any(p.kind is SoundKind.TURN for p in self._pending):
            text, source = near.queued.pop(0)
            self.say(SoundKind.TURN, text, source, t)
            return
        if near.user is None or self._pending:
            return
        first = self._agent_turns() == 0 and near.turns == 0 and not self._keys_pressed
        if self._reply is None:
            if first and self._caller_due is None and t >= self.remote.caller_first_s:
                self._caller_due = t
            self._impatient(t)
            if self._caller_due is not None and t >= self._caller_due and not self.responses.owed():
                self._caller_due = None
                self._reply = near.ask()
        if self._reply is None or not self._reply.done():
            return
        job, self._reply = self._reply, None
        try:
            reply = job.result()
        except Exception as exc:  # an LLM caller that fails: say so, and hang up
            e.emit(ErrorEvent(t=round(t, 6), where="user", message=str(exc) or repr(exc)))
            reply = None
        if reply is None:
            near.user = None  # nothing left to say: hang up after a moment
            e.schedule(t + self.remote.user_hangup_s, EndCall("user_hangup"))
            return
        if isinstance(reply, KeypadStep):
            self._press(reply.dtmf, t)
            return
        self.say(SoundKind.TURN, reply, self.user_source, t)

    def _press(self, keys: str, t: float) -> None:
        """A keypad step: the keys go out as DTMF (the line logs a ``dtmf`` event once
        they are on the wire, as for the call screen's key); the caller then waits for
        the agent's answer as after a turn (going on after its patience), but owes the
        response measures nothing (keys are no speech). A line without DTMF (refused
        before the call by :func:`sessions.scenarios.keypad.check_keypad`, so only a call
        built by hand gets here) logs an error and the caller goes on to its next step."""
        e = self.ctx
        send = getattr(self._line, "send_dtmf", None)
        try:
            if send is None:
                raise LineError("this line carries no DTMF (keypad steps need sip:USER@HOST)")
            send(keys)
        except LineError as exc:
            e.emit(
                ErrorEvent(t=round(t, 6), where="dtmf", message=f"keys {keys} not pressed: {exc}")
            )
            self._caller_due = t
            return
        self._keys_pressed += 1
        self._last_caller_end = round(t, 6)

    def _impatient(self, t: float) -> None:
        """The caller spoke and the agent has not answered for a while: go on."""
        last = self._last_caller_end
        if self._caller_due is not None or last is None or self._answered_at == last:
            return
        if t - last < self.remote.caller_patience_s:
            return
        self._answered_at = last  # its no_response was logged at the response window
        self._caller_due = t
