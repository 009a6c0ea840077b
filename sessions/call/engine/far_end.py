"""What the engine needs of the agent's side of a call (a *far end*), and what the app
sees of a running call.

Two far ends implement :class:`FarEnd`:

- :class:`~sessions.call.far_ends.simulated.SimulatedFarEnd`: an
  :class:`~sessions.agents.base.Agent` streaming text that cutin speaks with a
  :class:`~sessions.call.voice.voice.Voice` (the text clock or synthesized audio); cutin
  owns the agent's speech, so an interruption *truncates* it;
- :class:`~sessions.call.far_ends.line.LineFarEnd`: a black-box agent on a
  :class:`~sessions.lines.base.Line`, heard through VAD and STT; the agent stops (or
  not) by itself and cutin *measures* it.

The engine owns everything else (commands, the pause detector, every policy mode, the
opportunity events, history and the end of the call), so what a call decides and logs
is written once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from controls.pauses import PauseEvent
from sessions.call.commands import Command
from sessions.call.context import AgentTurn, CallContext, Heard
from sessions.clock import Clock

if TYPE_CHECKING:
    from controls.tendencies import Tendencies
    from sessions.agents.base import Message
    from sessions.call.adapt import RuleAdapter
    from sessions.call.config import CallConfig
    from sessions.call.engine.pump import Listener
    from sessions.call.near_end.caller import Caller
    from sessions.call.policy import TurnTakingPolicy
    from sessions.call.voice.recording import CallRecording
    from sessions.call.voice.voice import Microphone
    from sessions.lines.base import Line


class CallVoice(Protocol):
    """What a running call speaks and listens through, as the driver sees it."""

    name: str

    @property
    def recording(self) -> CallRecording | None:
        """Where the call's audio is written, if it is."""
        ...

    @property
    def mic(self) -> Microphone | None:
        """The tester's microphone, if they speak."""
        ...

    def start(self, submit: Callable[[Command], None]) -> Clock:
        """Real time: start devices; returns the clock the engine follows."""
        ...

    def close(self) -> None:
        """Release everything the call holds (idempotent)."""
        ...


__all__ = ["AgentTurn", "CallVoice", "FarEnd", "Heard", "RunningCall"]


class FarEnd(Protocol):
    """The agent's side of one call, driven frame by frame by the engine."""

    tick_s: float
    """How long the real-time runner sleeps between looks at the clock."""

    @property
    def voice(self) -> CallVoice: ...

    @property
    def line(self) -> Line | None:
        """The line to a black-box agent (None: cutin speaks the agent)."""
        ...

    @property
    def turn(self) -> AgentTurn | None:
        """The agent turn the caller may act on now (the agent is speaking)."""
        ...

    @property
    def turn_index(self) -> int | None:
        """The agent turn the pause detector's events belong to, if any."""
        ...

    def bind(self, ctx: CallContext, caller: Caller) -> None:
        """Called once by the engine that drives this far end: what it may use of the
        call, and the near end's caller (typed text, the headless caller's lines)."""
        ...

    def begin(self, t: float) -> None:
        """Start of the frame, after the commands (devices, the line's notices)."""
        ...

    def frame(self, t: float, t1: float) -> float:
        """Exchange the frame [t, t1) with the agent; the agent's speech probability."""
        ...

    def heard_frame(self, t: float, t1: float, speaking: bool) -> None:
        """The detector has taken the frame (``speaking``: it is inside speech)."""
        ...

    def speech_start(self, ev: PauseEvent) -> None: ...

    def short_pause(self, ev: PauseEvent) -> None: ...

    def turn_end(self, ev: PauseEvent) -> None: ...

    def after_pauses(self, t: float, t1: float) -> None:
        """The frame's pause events are handled (turns finished, yields watched)."""
        ...

    def caller_frame(self, t: float, t1: float) -> None:
        """The caller's part of the frame (the near end speaks, waits or hangs up)."""
        ...

    def heard(self, t: float) -> Heard:
        """What the caller has heard of the current turn by ``t``."""
        ...

    def before_decision(self, ev: PauseEvent) -> None:
        """A policy is about to be asked at this pause (a line sends the stretch to STT)."""
        ...

    def caller_busy(self, t: float) -> bool:
        """The caller holds the floor or is making sound: no decision at a pause."""
        ...

    def ready_to_act(self) -> bool:
        """The caller can act now (a line: no caller speech waiting or playing)."""
        ...

    def may_interrupt(self) -> bool:
        """No interruption is already on its way."""
        ...

    def interrupt(
        self, t: float, *, trigger: str, text: str, typed: bool, at: float | None, mic: bool
    ) -> None:
        """The caller cuts in with ``text`` (``mic``: their own voice, words later)."""
        ...

    def backchannel(self, t: float, *, trigger: str, token: str | None) -> None: ...

    def apply(self, command: Command, t: float) -> None:
        """The caller's own commands: typed text and the microphone."""
        ...

    def hang_up(self, t: float) -> None:
        """The call ends: close the turn in progress and the agent (or the line)."""
        ...

    def abort(self) -> None:
        """The engine crashed: release what must not stay open (never raises)."""
        ...


class RunningCall(Protocol):
    """What the app's driver sees of a call, whatever its far end (the engine is one)."""

    config: CallConfig
    listeners: list[Listener]
    history: list[Message]
    tendencies: Tendencies
    adapter: RuleAdapter | None

    @property
    def t(self) -> float: ...

    @property
    def ended(self) -> bool: ...

    @property
    def policy(self) -> TurnTakingPolicy: ...

    @property
    def shadow(self) -> TurnTakingPolicy | None: ...

    @property
    def voice(self) -> CallVoice: ...

    @property
    def line(self) -> Line | None: ...

    def submit(self, command: Command) -> None: ...

    def step(self) -> None: ...

    def run_realtime(self, clock: Clock, stop: threading.Event) -> None: ...
