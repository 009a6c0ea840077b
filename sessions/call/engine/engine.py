"""One call, one 32 ms frame at a time, on one clock: the call engine.

Each frame (:meth:`CallEngine.step`):

1. apply the tester's queued commands (dials, interruptions, backchannels, typed text,
   the microphone, the end of the call);
2. let the far end start its frame (a line's notices; a voice's synthesis);
3. run a decision whose action was delayed (an LLM policy's latency) once it is due;
4. exchange the frame with the far end: it returns the agent's speech probability;
5. feed it to the pause detector; a speech start, short pause or turn end goes to the
   far end, and a short pause while the caller is silent is an *opportunity*: the acting
   policy decides (and the shadow beside it, logged only);
6. give polling policies (τ-Voice) their per-frame look;
7. the caller's part of the frame (the near end: typed text, a scripted or LLM caller).

Everything is reported to the listeners as session-log events. What differs between a
simulated agent and a black-box one on a line lives in the far end
(:mod:`sessions.call.engine.far_end`).
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Iterable
from typing import Generic, TypeVar

from controls.pauses import PauseDetector, PauseEvent, PauseEventKind
from controls.turn_taking import Action
from sessions.agents.base import Message
from sessions.call.adapt import RuleAdapter
from sessions.call.commands import (
    BackchannelNow,
    CallerSoundNow,
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
from sessions.call.context import CallClock, CallContext, Dials
from sessions.call.engine.decisions import Decisions
from sessions.call.engine.far_end import CallVoice, FarEnd
from sessions.call.engine.pump import FramePump, Listener
from sessions.call.near_end.caller import Caller, InterruptionText
from sessions.call.policy import PolicyDecision, TurnTakingPolicy
from sessions.callers.users import UserProvider
from sessions.clock import Clock, ClockZero
from sessions.lines.base import Line
from sessions.log.models import (
    Backchannel,
    EndEvent,
    ErrorEvent,
    Event,
    FrameLag,
    Interruption,
    Opportunity,
    ShortPause,
    TendencyValues,
    TurnEnd,
)

F = TypeVar("F", bound=FarEnd)


class CallEngine(FramePump, Generic[F]):
    """Runs one call against a far end. Not thread-safe except for :meth:`submit`."""

    def __init__(
        self,
        config: CallConfig,
        far: F,
        *,
        user: UserProvider | None = None,
        listeners: Iterable[Listener] = (),
        policy: TurnTakingPolicy | None = None,
        shadow: TurnTakingPolicy | None = None,
        interruption_text: InterruptionText | None = None,
        virtual: bool = True,
        adapter: RuleAdapter | None = None,
    ) -> None:
        self.config = config
        self.adapter = adapter
        self.listeners: list[Listener] = list(listeners)
        self.virtual = virtual
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
        self._init_commands()
        self.rng = random.Random(config.seed)
        """One stream of choices (openers, tokens) per call, so a seed repeats a call."""
        self.end_reason: str | None = None
        self._end_t: float | None = None
        """The call time the call ended at: the end event's, even when the tear-down runs
        later on another thread (the clock has moved on by then)."""
        self._ended = False
        self.max_frame_lag_s = 0.0
        self._mono0 = time.monotonic()
        self.context = self._context()
        self.caller = Caller(self.context, user, interruption_text)
        self.decisions = Decisions(self, policy, shadow)
        self.far = far
        self.tick_s = far.tick_s
        far.bind(self.context, self.caller)

    def _context(self) -> CallContext:
        """What the call's parts (far end, caller) may use of it: never the engine."""
        return CallContext(
            config=self.config,
            clock=CallClock(
                now=lambda: self.t,
                ended=lambda: self._ended,
                monotonic_at=self.monotonic_at,
                virtual=self.virtual,
            ),
            dials=Dials(
                read=lambda: self.tendencies,
                effective=self._effective_tendencies,
                adapter=lambda: self.adapter,
                emit=self.emit,
            ),
            history=self.history,
            rng=self.rng,
            pauses=self.detector,
            emit=self.emit,
            schedule=self.schedule,
            end=self.end,
            interrupt=self._mic_interrupt,
        )

    def _mic_interrupt(self, t: float, at: float | None) -> None:
        # A tester's own action, counted like a key press (the user turn says "mic").
        self.interrupt(t, PolicyDecision(Action.INTERRUPT), trigger="manual", at=at, mic=True)

    # ---- what the driver reads ---------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def policy(self) -> TurnTakingPolicy:
        return self.decisions.policy

    @property
    def shadow(self) -> TurnTakingPolicy | None:
        return self.decisions.shadow

    @property
    def voice(self) -> CallVoice:
        return self.far.voice

    @property
    def line(self) -> Line | None:
        return self.far.line

    @property
    def user(self) -> UserProvider | None:
        return self.caller.user

    def emit(self, event: Event) -> None:
        """Log ``event``; a decision or an act carries the dials in force, so an audit
        can tell which dial a decision was made under when they changed mid-call."""
        if isinstance(event, Opportunity | Interruption | Backchannel):
            if event.tendencies is None:
                d = self.tendencies
                event.tendencies = TendencyValues(alpha=d.alpha, beta=d.beta, gamma=d.gamma)
            if event.autos is None:
                event.autos = {
                    "interrupt": self.auto_interrupt,
                    "backchannel": self.auto_backchannel,
                }
        super().emit(event)

    # ---- running ----------------------------------------------------------------------

    def run_virtual(self, max_seconds: float | None = None) -> None:
        self._run_virtual(self.config.max_seconds if max_seconds is None else max_seconds)

    def run_for(self, seconds: float) -> None:
        """Run in real time until the call ends or ``seconds`` have passed (then hang up);
        the call's parts (devices, line, workers, recording) are closed afterwards."""
        stop = threading.Event()
        timer = threading.Timer(seconds, stop.set)
        clock = self.voice.start(self.submit)
        timer.start()
        try:
            self.run_realtime(clock, stop)
        finally:
            timer.cancel()
            self.voice.close()

    def _on_realtime(self, clock: Clock) -> None:
        self._mono0 = time.monotonic() - clock.now()
        super()._on_realtime(clock)  # t = 0 is this clock's: the log's header says when

    def _frame_lag(self, lag_s: float) -> None:
        super()._frame_lag(lag_s)
        self.max_frame_lag_s = max(self.max_frame_lag_s, lag_s)

    def monotonic_at(self, t: float) -> float:
        """``time.monotonic()`` at call time ``t`` (real time only), e.g. for benchmarks."""
        return self._mono0 + t

    def step(self) -> None:
        """Process the frame [t, t + frame_s)."""
        if self.zero is None:  # the virtual clock starts with its first frame
            self._start_clock(ClockZero.now(virtual=self.virtual))
        t = self.t
        t1 = round(t + self.config.frame_s, 9)
        far = self.far
        self._apply_commands(t)
        if self.ended:
            return
        if self.adapter is not None and self.adapter.current is None:
            self._rule_params(t)
        far.begin(t)
        if self.ended:
            return
        self.decisions.run_due(t)
        prob = far.frame(t, t1)
        events = self.detector.feed(t, prob)
        far.heard_frame(t, t1, self.detector.in_speech)
        for ev in events:
            self._on_pause_event(ev)
            if self.ended:
                return
        far.after_pauses(t, t1)
        self.decisions.poll(t1)
        far.caller_frame(t, t1)
        self.t = t1

    # ---- commands ---------------------------------------------------------------------

    def _apply(self, command: Command, t: float) -> None:
        far = self.far
        if isinstance(command, InterruptNow):
            if far.turn is not None:
                self.interrupt(
                    t,
                    PolicyDecision(Action.INTERRUPT),
                    trigger="manual",
                    text=command.text,
                    at=command.at,
                )
            elif command.text.strip():
                far.apply(SubmitText(command.text), t)
        elif isinstance(command, BackchannelNow):
            if far.turn is not None:
                far.backchannel(t, trigger="manual", token=command.token)
        elif isinstance(command, SetTendencies | SetAutos):
            self._set_dials(command, t)
        elif isinstance(command, EndCall):
            self._end(command.reason)
        elif isinstance(command, SubmitText | CallerSpeechStart | CallerUtterance | CallerSoundNow):
            far.apply(command, t)

    # ---- the pause detector -----------------------------------------------------------

    def _on_pause_event(self, ev: PauseEvent) -> None:
        # One rounding for every time derived from frames, so equal moments compare equal.
        ev.t = round(ev.t, 6)
        if ev.silence_start is not None:
            ev.silence_start = round(ev.silence_start, 6)
        far = self.far
        if ev.kind is PauseEventKind.SPEECH_START:
            far.speech_start(ev)
            return
        assert ev.silence_start is not None
        index = far.turn_index
        if ev.kind is PauseEventKind.SHORT_PAUSE:
            self.emit(
                ShortPause(t=ev.t, index=ev.index, silence_start=ev.silence_start, turn=index)
            )
            far.short_pause(ev)
            if far.turn is not None and not far.caller_busy(ev.t):
                self.decisions.at_pause(ev)
            return
        self.emit(
            TurnEnd(
                t=ev.t,
                silence_start=ev.silence_start,
                turn=index,
                short_pause_index=ev.short_pause_index,
            )
        )
        far.turn_end(ev)

    # ---- acts -------------------------------------------------------------------------

    def interrupt(
        self,
        t: float,
        decision: PolicyDecision,
        *,
        trigger: str,
        text: str = "",
        at: float | None = None,
        mic: bool = False,
    ) -> None:
        """The caller cuts in: with ``text``, else a line of their own (the near end's);
        ``mic``: the tester is speaking into the microphone, their words come later."""
        far = self.far
        if not far.may_interrupt():
            return
        said = "" if mic else text.strip()
        if not mic and not said:
            said = self.caller.interruption_line(far.heard(t).text, t)
        far.interrupt(t, trigger=trigger, text=said, typed=bool(text.strip()), at=at, mic=mic)

    # ---- ending -----------------------------------------------------------------------

    def _end(self, reason: str) -> None:
        if self.ended:
            return
        self._ended = True
        self.end_reason = reason
        self._end_t = self.t
        if self.hang_up_elsewhere:
            self.hang_up_due = True  # the pump runs _hang_up off its thread
            return
        self._hang_up()

    def _hang_up(self) -> None:
        """The end's tear-down: the far end hangs up (its last transcript, the line's
        close) and the end event is logged."""
        self.hang_up_due = False
        reason = self.end_reason or "hangup"
        t = self.t if self._end_t is None else self._end_t
        self._last_words(t)
        self.far.hang_up(t)
        lag = self.frame_lag_summary()
        self.emit(
            EndEvent(
                t=round(t, 6),
                reason=reason,
                frame_lag=None if lag is None else FrameLag.model_validate(lag),
            )
        )

    def _last_words(self, t: float) -> None:
        """What the tester said into the microphone before the end is logged: the words
        of an utterance still being transcribed (or still open) when the call hung up,
        and any the loop had not read yet. Nothing else queued is applied after the end."""
        mic = self.far.voice.mic
        late = mic.finish() if mic is not None else []
        for command in (*self._take_submitted(), *late):
            if isinstance(command, CallerUtterance):
                self.far.apply(command, t)

    def end(self, reason: str) -> None:
        """End the call now (a far end's or the near end's reason: the agent is done,
        the caller hung up, the line failed)."""
        self._end(reason)

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
            self.far.abort()
