"""The line far end: a black-box agent on a :class:`~sessions.lines.base.Line`.

cutin does not own the agent's speech: its audio arrives from the line and it decides
for itself when to stop. Per 32 ms frame: the line's notices become log events; the
agent's audio for the frame is taken and the caller's
(:class:`~sessions.call.near_end.caller_line.CallerChannel`) sent; both are recorded;
Silero VAD on the agent's audio gives the engine its speech probability (the agent's
ears, :mod:`.agent_ears`); a speech start opens an agent turn, a turn end closes it with
its transcript. An interruption makes the *caller start speaking* over the agent and a
backchannel plays a token; a :class:`~.yield_watch.YieldWatch` then measures whether and
how fast the agent stopped (``agent_yield`` events, :mod:`.line_yields`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from controls.pauses import PauseEvent
from sessions.agents.base import Message
from sessions.call.adapt import line_turn_seen
from sessions.call.commands import CallerSoundNow, Command
from sessions.call.context import AgentTurn, Heard
from sessions.call.far_ends.agent_ears import AgentEars
from sessions.call.far_ends.line_yields import SIDE_TALK, Backchannels, BargeIns, LineYields
from sessions.call.far_ends.yield_watch import SETTLE_S, STALL_S
from sessions.call.far_ends.yield_watches import YieldWatches
from sessions.call.line_parts import LineTurn, RemoteConfig
from sessions.call.near_end.caller_line import SoundKind, Synthesizer, line_rate_of
from sessions.call.near_end.line_caller import CallerMouth
from sessions.call.response_clock import ResponseClock
from sessions.call.sound_tape import SoundTape
from sessions.call.voice.recording import CallRecording
from sessions.clock import Clock
from sessions.lines.base import Line, LineNotice, NoticeKind, PlayoutBuffer
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    ErrorEvent,
    LineEvent,
    SpeechStart,
    WordTiming,
)
from sessions.speech import FRAME_SAMPLES
from sessions.speech.words import TimedWord, confidence

if TYPE_CHECKING:
    from sessions.call.context import CallContext
    from sessions.call.near_end.caller import Caller
    from sessions.call.near_end.line_monitor import LineMonitor
    from sessions.call.near_end.mic import MicInput


@dataclass
class _Closing:
    """An agent turn that has ended, waiting for its final transcript."""

    turn: LineTurn
    t: float
    end_t: float
    speech_s: float
    words: Future[list[TimedWord]]


@dataclass
class _Held:
    """An agent turn whose end came in a delivery gap: it stays open for
    :data:`SETTLE_S`, and :data:`STALL_S` from where delivery stopped, so audio that
    comes back in time goes on the same turn (a stall, not a new turn talking over the
    caller)."""

    turn: LineTurn
    t: float
    silence_start: float
    gap: float

    @property
    def due(self) -> float:
        return max(self.t + SETTLE_S, self.gap + STALL_S)


class LineFarEnd:
    """A black-box agent heard through a line (see the module), made of parts it owns
    (built when the engine binds it, each handed only what it uses):

    - :attr:`mouth` (:class:`~sessions.call.near_end.line_caller.CallerMouth`): the
      caller's speech on the line, the tester's microphone, keypad steps, impatience;
    - :attr:`ears` (:class:`~.agent_ears.AgentEars`): the agent's speech probability and
      its words;
    - :attr:`yields` (:class:`~.line_yields.LineYields`): backchannels, tics and asides,
      and whether the agent yields to them and to barge-ins (:attr:`barge_in`), over
      :attr:`watches` (:class:`~.yield_watches.YieldWatches`);
    - :attr:`responses` (:class:`~sessions.call.response_clock.ResponseClock`): response
      latencies and no-response;
    - the near end's :class:`~sessions.call.near_end.caller.Caller` (:attr:`near`): typed
      text and the headless caller's lines.

    It keeps the agent's turns (their onsets, ends and transcripts) and the line (its
    notices, playout, the frame's exchange) itself, and answers the engine's
    :class:`~sessions.call.engine.far_end.FarEnd` calls by asking its parts.
    """

    tick_s = 0.004

    ctx: CallContext
    near: Caller
    responses: ResponseClock
    watches: YieldWatches
    barge_in: BargeIns
    mouth: CallerMouth
    yields: LineYields
    voice: LineVoice

    def __init__(
        self,
        line: Line,
        ears: AgentEars,
        synthesizer: Synthesizer,
        backchannels: Backchannels,
        *,
        remote: RemoteConfig | None = None,
        recording: CallRecording | None = None,
        user_source: str = "scenario",
    ) -> None:
        self._line = line
        self.line_rate = line_rate_of(getattr(line, "audio_format", "") or "")
        self.ears = ears
        self.synth = synthesizer
        self.backchannels = backchannels
        self.remote = remote or RemoteConfig()
        self.user_source = user_source
        """How the caller's own turns are logged: scenario | simulator."""
        self._side_talk = synthesizer.submit(SIDE_TALK)  # ready long before it is asked for
        self.recording = recording
        self.monitor: LineMonitor | None = None
        """The tester's speaker, when they listen in (``--listen``)."""
        self.tape = SoundTape()
        """The agent's audio as it came off the line."""
        self._turn: LineTurn | None = None
        self._closing: list[_Closing] = []
        self._agent_turns = 0
        self._heard_agent = False
        self._warned_silent = False
        self._lead = np.zeros(0, dtype=np.float32)
        self._audio = np.zeros(0, dtype=np.float32)
        """The agent's audio of the frame in progress."""
        self._caller_was_active = False
        self._held: _Held | None = None
        playout = getattr(line, "playout", None)
        self._playout = playout if isinstance(playout, PlayoutBuffer) else None
        if self._playout is not None:
            self._playout.set_depth(self.remote.playout_depth_s)
        self._stated_playout = False

    def bind(self, ctx: CallContext, caller: Caller) -> None:
        """Build the parts, each handed only what it uses of the call and of the others."""
        self.ctx = ctx
        self.near = caller
        remote = self.remote

        def current() -> LineTurn | None:
            return self._turn

        def agent_turns() -> int:
            return self._agent_turns

        self.responses = ResponseClock(remote.response_window_s, ctx.emit)
        self.watches = YieldWatches(ctx, self.tape, self.ears.words, self._stall_start, current)
        self.barge_in = BargeIns(ctx, self.ears, self.watches, remote.interruption_window_s)
        self.mouth = CallerMouth(
            ctx,
            caller,
            self._line,
            self.synth,
            remote,
            self.user_source,
            responses=self.responses,
            current_turn=current,
            agent_turns=agent_turns,
            barge_in=self.barge_in,
            line_rate=self.line_rate,
        )
        self.yields = LineYields(
            ctx,
            self.mouth,
            self.ears,
            self.tape,
            self.watches,
            self.responses,
            backchannels=self.backchannels,
            side_talk=self._side_talk,
            current_turn=current,
            backchannel_window_s=remote.backchannel_window_s,
        )
        self.voice = LineVoice(self, ctx)

    # ---- the tester's microphone (``attach_microphone``) ----------------------------------

    @property
    def mic(self) -> MicInput | None:
        """The tester's microphone (the mouth's): started with the call's clock."""
        return self.mouth.mic

    @mic.setter
    def mic(self, mic: MicInput | None) -> None:
        self.mouth.mic = mic

    @property
    def mic_audio(self) -> PlayoutBuffer | None:
        """The tester's microphone audio, sent into the line as it is captured."""
        return self.mouth.mic_audio

    @mic_audio.setter
    def mic_audio(self, audio: PlayoutBuffer | None) -> None:
        self.mouth.mic_audio = audio

    @property
    def playout(self) -> PlayoutBuffer | None:
        """The line's playout buffer, if it has one (the agent's audio plays through it)."""
        return self._playout

    @property
    def line(self) -> Line:
        return self._line

    @property
    def turn(self) -> LineTurn | None:
        return self._turn

    @property
    def turn_index(self) -> int | None:
        return self._turn.index if self._turn is not None else None

    def heard(self, t: float) -> Heard:
        words, estimated = self.ears.heard_by(t)
        return Heard(
            len(words) + estimated,
            " ".join(w.word for w in words),
            {"words_transcribed": len(words), "words_estimated": estimated},
        )

    # ---- the frame ----------------------------------------------------------------------

    def begin(self, t: float) -> None:
        self._line_notices(t)
        if not self._stated_playout and not self.ctx.clock.ended():
            self._state_playout(t)  # after the line's own first words (open, format)
        if not self.ctx.clock.ended():
            self.mouth.start_ready_speech(t)

    def frame(self, t: float, t1: float) -> float:
        agent = self._line.take(FRAME_SAMPLES)
        self._audio = agent
        self._caller_was_active = self.mouth.caller_active
        caller, finished = self.mouth.take(FRAME_SAMPLES)
        self._line.send(caller)
        if self.recording is not None:
            self.recording.push(agent, caller)
        if self.monitor is not None:
            self.monitor.push(agent, caller)
        self.tape.append(agent)
        self.mouth.sent(t1, finished)
        if not self._heard_agent and np.abs(agent).max(initial=0.0) > 0:
            self._heard_agent = True
        return self.ears.prob(agent)

    def heard_frame(self, t: float, t1: float, speaking: bool) -> None:
        agent, frame_s = self._audio, self.ctx.config.frame_s
        turn = self._turn
        if turn is not None:
            self.ears.push(agent, speaking=speaking, frame_s=frame_s)
            if self.ears.word_count() > turn.words_reported:  # a segment came back
                self._report_words(turn, self.ears.words())
            if speaking and self._caller_was_active:
                turn.talk_over_s += frame_s
        elif not speaking:
            self._lead = np.concatenate([self._lead, agent])[-FRAME_SAMPLES * 4 :]

    def after_pauses(self, t: float, t1: float) -> None:
        speaking = self.ctx.pauses.in_speech
        self.yields.frame(t, t1, speaking=speaking, caller_active=self._caller_was_active)
        held = self._held
        if held is not None and not speaking and t1 >= held.due - 1e-9:
            self._held = None  # nothing came back: the turn ended where its sound did
            self._end_turn(held.turn, held.t, held.silence_start)
        if self._closing:
            self._flush_closing()

    def caller_frame(self, t: float, t1: float) -> None:
        # No agent turn within the response window of the caller's end: a no_response.
        self.responses.watch(t1, quiet=self._turn is None and not self.mouth.caller_active)
        self.mouth.frame(t1)
        self._silence_watchdog(t1)

    # ---- the caller's acts (the mouth and the yields parts) --------------------------------

    def caller_busy(self, t: float) -> bool:
        return self.mouth.caller_active

    def ready_to_act(self) -> bool:
        return self.mouth.ready_to_act()

    def may_interrupt(self) -> bool:
        return self.mouth.may_interrupt()

    def apply(self, command: Command, t: float) -> None:
        if isinstance(command, CallerSoundNow):
            self.yields.caller_sound(t, command.kind)
        else:
            self.mouth.apply(command, t)

    def interrupt(
        self, t: float, *, trigger: str, text: str, typed: bool, at: float | None, mic: bool
    ) -> None:
        source = "typed" if typed else "interruption"
        self.mouth.say(SoundKind.INTERRUPTION, text, source, t, trigger)

    def backchannel(self, t: float, *, trigger: str, token: str | None) -> None:
        self.yields.backchannel(t, trigger=trigger, token=token)

    # ---- did the agent answer? -----------------------------------------------------------

    def _response_to(self, onset: float) -> tuple[float | None, str | None, bool]:
        """An agent turn starts at ``onset``: (response latency, what it answers, whether
        it starts over the caller's turn: an agent interruption)."""
        over, sounding = self.mouth.caller_at(onset)
        latency, answers = self.responses.answer(onset, blocked=over or sounding)
        return latency, answers, over

    # ---- the line -----------------------------------------------------------------------

    def _state_playout(self, t: float) -> None:
        """The line's playout buffer, once, in the log (a ``line`` event ``playout``)."""
        self._stated_playout = True
        playout = self._playout
        if playout is None:
            return
        clocked = not self.ctx.virtual
        how = (
            f"a {playout.depth_s * 1000:.0f} ms jitter depth"
            if clocked
            else "no jitter depth (virtual clock)"
        )
        self.ctx.emit(
            LineEvent(
                t=round(t, 6),
                kind="playout",
                detail=f"agent audio plays through a playout buffer with {how}",
                data={"depth_s": playout.depth_s if clocked else 0.0, "max_s": playout.max_s},
            )
        )

    def _notice_t(self, notice: LineNotice, t: float) -> float:
        if self.ctx.virtual:
            return t
        at = max(0.0, notice.mono - self.ctx.clock.monotonic_at(0.0))
        if notice.kind is NoticeKind.CLEAR:
            # Applied at that instant: what had played by then stays played (the
            # frame in progress keeps its first part), so that is where it took effect.
            return round(at, 6)
        return round(min(t, at), 6)

    def _stall_start(self, since: float, until: float) -> float | None:
        """Where the agent's audio ran out with no clear in this silence, if it did: a gap
        in delivery (a stall, or an agent that stops by sending nothing)."""
        return None if self._playout is None else self._playout.gap_start(since, until)

    def _line_notices(self, t: float) -> None:
        e = self.ctx
        for notice in self._line.notices():
            at = self._notice_t(notice, t)
            e.emit(LineEvent(t=at, kind=str(notice.kind), detail=notice.detail, data=notice.data))
            if notice.kind is NoticeKind.CLEAR:
                self.watches.cleared(at, dropped=_dropped_audio(notice.data))
            elif notice.kind is NoticeKind.ERROR:
                e.emit(ErrorEvent(t=at, where="line", message=notice.detail))
            elif notice.kind is NoticeKind.FAILED:
                e.emit(ErrorEvent(t=at, where="line", message=notice.detail))
                e.end("line_failed")
                return
            elif notice.kind is NoticeKind.CLOSED:
                e.end("agent_hangup" if notice.data.get("by") == "agent" else "hangup")
                return

    def _silence_watchdog(self, t: float) -> None:
        if self._heard_agent or self._warned_silent or t < self.remote.silent_agent_s:
            return
        self._warned_silent = True
        self.ctx.emit(
            ErrorEvent(
                t=round(t, 6),
                where="line",
                message=(
                    f"the agent has sent no audio in {self.remote.silent_agent_s:.0f} s "
                    f"({self._line.target}); is it the right URL, and does it speak?"
                ),
            )
        )

    # ---- the agent's turns --------------------------------------------------------------

    def speech_start(self, ev: PauseEvent) -> None:
        if self._turn is not None:
            self._held = None  # its audio came back after a stall: the same turn goes on
            return
        agent = self._audio
        found = self.tape.first_sound(ev.t - 0.25, ev.t + self.ctx.config.frame_s)
        onset = round(found if found is not None else ev.t, 6)
        latency, answers, over = self._response_to(onset)
        self.yields.answered_sound(onset, ev.t)
        index = self._agent_turns
        self._agent_turns += 1
        self.mouth.agent_answered()
        self._turn = LineTurn(index=index, onset=onset, response_latency_s=latency)
        self.ears.start_turn(ev.t, np.concatenate([self._lead, agent]) if self._lead.size else None)
        self._lead = np.zeros(0, dtype=np.float32)
        self.ctx.emit(SpeechStart(t=ev.t, speaker="agent", turn=index))
        extra: dict[str, object] = {"over_caller": True} if over else {}
        if answers is not None:
            extra["response_to"] = answers
        self.ctx.emit(AgentTurnStart(t=onset, turn=index, response_latency_s=latency, **extra))

    def short_pause(self, ev: PauseEvent) -> None:
        if self._turn is not None:
            assert ev.silence_start is not None
            self._turn.pauses.append((ev.t, ev.silence_start))

    def before_decision(self, ev: PauseEvent) -> None:
        # The segment that just ended goes to STT (inline on the virtual clock).
        self.ears.segment(ev.silence_start if ev.silence_start is not None else ev.t)

    def turn_end(self, ev: PauseEvent) -> None:
        turn = self._turn
        if turn is None:
            return
        assert ev.silence_start is not None
        t, silence_start = ev.t, ev.silence_start
        # Watches still waiting on this silence are decided by it (it is a turn end).
        self.yields.frame(t, t, speaking=False, caller_active=self.mouth.channel.active)
        gap = self._stall_start(silence_start, t)
        if gap is not None:  # a gap in delivery: it may go on (_Held)
            self._held = _Held(turn, t, silence_start, gap)
            return
        self._end_turn(turn, t, silence_start)

    def _end_turn(self, turn: LineTurn, t: float, silence_start: float) -> None:
        # Its last sound, a short one the VAD did not call speech included (as a stop).
        end = self.tape.last_sound(silence_start - 0.3, max(t, silence_start + 0.064))
        self._close(turn, t, end if end is not None else silence_start)
        self.mouth.agent_turn_ended(t)
        self._flush_closing()

    def _close(self, turn: LineTurn, t: float, end_t: float) -> None:
        self.responses.agent_turn_ended(end_t)
        speech_s = round(self.ears.turn_speech_s, 4)
        words = self.ears.close_turn()
        self._closing.append(_Closing(turn, round(t, 6), round(end_t, 6), speech_s, words))
        self._turn = None

    def _report_words(self, turn: AgentTurn, words: list[TimedWord]) -> None:
        new = words[turn.words_reported :]
        if not new:
            return
        self.ctx.emit(
            AgentWords(
                t=round(new[-1].end, 4),
                turn=turn.index,
                first_index=turn.words_reported,
                words=[
                    WordTiming(
                        word=w.word,
                        start=round(w.start, 4),
                        end=round(w.end, 4),
                        p=confidence(w.probability),
                    )
                    for w in new
                ],
            )
        )
        turn.words_reported += len(new)

    def _flush_closing(self, *, wait: bool = False) -> None:
        """Log the turns whose final transcript is ready (all of them with ``wait``)."""
        e = self.ctx
        if wait and self.watches.settling_stops:
            now = self.ctx.clock.now()
            self.watches.settle(now, now, speaking=False, force=True)
        while self._closing and (
            wait
            or (self._closing[0].words.done() and not self.watches.settling(self._closing[0].turn))
        ):
            c = self._closing.pop(0)
            try:
                words = c.words.result()
            except Exception as exc:
                e.emit(ErrorEvent(t=c.t, where="stt", message=str(exc)))
                words = []
            for err in self.ears.errors:
                e.emit(ErrorEvent(t=c.t, where="stt", message=err))
            self.ears.errors.clear()
            notes, self.ears.notes = self.ears.notes, []
            for note in notes:  # words cut from a transcript (a loop): the call goes on
                e.emit(LineEvent(t=c.t, kind="stt_cut", detail=note))
            turn = c.turn
            self._report_words(turn, words)
            text = " ".join(w.word for w in words)
            cut_word = None
            if turn.cut_t is not None:
                cut_word = sum(1 for w in words if w.end <= turn.cut_t + 1e-9)
            e.emit(
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
                    end_t=max(c.end_t, turn.stop_t or 0.0),  # a resumption after the end
                )
            )
            if text:
                e.history.append(Message("assistant", text, truncated=turn.interrupted))
            self._observe_turn(turn, words, c)

    def _observe_turn(self, turn: LineTurn, words: list[TimedWord], closing: _Closing) -> None:
        """An ended turn's rhythm for ``--adapt``, as the line gave it (recalibrates)."""
        e = self.ctx
        if not e.dials.adapting:
            return
        assert turn.onset is not None
        seen = line_turn_seen(
            turn.index,
            turn.onset,
            [(w.word, w.end) for w in words],
            turn.pauses,
            cut_t=turn.cut_t,
            end_t=closing.end_t,
            pause_s=e.config.short_pause_s,
        )
        e.dials.observe_turn(seen, closing.t)

    # ---- ending -------------------------------------------------------------------------

    def hang_up(self, t: float) -> None:
        e = self.ctx
        turn = self._turn
        if self._held is not None and turn is self._held.turn:
            held, self._held = self._held, None
            self._end_turn(turn, held.t, held.silence_start)
            turn = None
        if turn is not None:
            # Hung up mid-turn: the turn ends here (not cut by the caller unless it was).
            self.yields.frame(t, t, speaking=True, caller_active=False)
            self._close(turn, t, t)
        self._flush_closing(wait=True)
        # Hang up first, so the line's last word (closed by cutin) is in the log too.
        with contextlib.suppress(Exception):
            self._line.close()
        with contextlib.suppress(Exception):
            for notice in self._line.notices():
                e.emit(
                    LineEvent(
                        t=round(t, 6), kind=str(notice.kind), detail=notice.detail, data=notice.data
                    )
                )

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._line.close()

    def close(self) -> None:
        """Release the line and every local part (the voice's close)."""
        with contextlib.suppress(Exception):
            self._line.close()
        self.ears.close()
        self.synth.close()
        self.near.close()
        if self.recording is not None:
            self.recording.close()
        if self.monitor is not None:
            with contextlib.suppress(Exception):
                self.monitor.close()
        if self.mic is not None:
            with contextlib.suppress(Exception):
                self.mic.close()


class LineVoice:
    """What the driver expects of a call's voice: a clock, a recording, closing."""

    name = "line"

    def __init__(self, far: LineFarEnd, ctx: CallContext) -> None:
        self._far = far
        self._ctx = ctx

    @property
    def recording(self) -> CallRecording | None:
        return self._far.recording

    @property
    def mic(self) -> MicInput | None:
        return self._far.mic

    @property
    def realtime(self) -> bool:
        return not self._ctx.virtual

    def start(self, submit: Callable[[Command], None]) -> Clock:
        from sessions.call.voice.audio_out import LeadClock

        clock = LeadClock(time.monotonic(), 0.0)
        playout = self._far.playout
        if playout is not None:  # the agent's audio plays on the call's clock
            playout.follow(clock.now)
        if self._far.mic is not None:
            self._far.mic.start(clock, submit)
        return clock

    def close(self) -> None:
        self._far.close()


def _dropped_audio(data: dict[str, Any]) -> bool:
    """A clear that threw away audio the agent had sent, or truncated what it had said."""
    dropped = data.get("dropped_s")
    return (isinstance(dropped, int | float) and dropped > 0) or bool(data.get("truncated"))
