"""The engine's plumbing: the tester's command queue, listeners, the dials, and the two
ways of running frames (the virtual clock, or a real one followed from a thread).

:class:`~sessions.call.engine.engine.CallEngine` builds the call on it; this part knows
nothing of agents or lines.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from controls.tendencies import Tendencies
from sessions.call.commands import Command, SetAutos, SetTendencies
from sessions.call.config import CallConfig
from sessions.call.engine.realtime import FrameLagStats
from sessions.clock import Clock, ClockZero
from sessions.log.models import DialsChanged, Event, TendencyValues

if TYPE_CHECKING:
    from controls.turn_taking import RuleParams
    from sessions.call.adapt import RuleAdapter

Listener = Callable[[Event], None]
"""Gets every event of the call. A listener that also has a ``clock_started(zero)``
method (the :class:`~sessions.call.recorder.Recorder`) is told the instant of t = 0
(a :class:`~sessions.clock.ClockZero`) once, when the call's clock starts, before any
event."""


class FramePump:
    """Commands in (thread-safe ``submit``; ``schedule`` on the virtual clock), events out,
    and the two ways of running frames: the virtual clock or a real one."""

    listeners: list[Listener]
    tendencies: Tendencies
    auto_interrupt: bool
    auto_backchannel: bool
    config: CallConfig
    t: float
    virtual: bool
    adapter: RuleAdapter | None = None
    """``--adapt``: the rule's thresholds follow the agent's rhythm (None: never asked for)."""
    tick_s: float = 0.008
    """Kept for far ends that declare it; the pump sleeps until the next frame is due."""
    zero: ClockZero | None = None
    """The instant of t = 0, once the call's clock has started (:meth:`_start_clock`)."""
    hang_up_elsewhere: bool = False
    """Set by the real-time pump: an end reached inside a frame only marks the call
    ended (:attr:`hang_up_due`); the pump runs :meth:`_hang_up` (the far end's last
    transcript, the line's close, the end event) on another thread, so the other calls'
    frames never wait for it. The virtual clock hangs up at once, as before."""
    hang_up_due: bool = False

    def _hang_up(self) -> None:
        raise NotImplementedError

    @property
    def ended(self) -> bool:
        raise NotImplementedError

    def step(self) -> None:
        raise NotImplementedError

    def _end(self, reason: str) -> None:
        raise NotImplementedError

    def _crash(self, exc: BaseException) -> None:
        raise NotImplementedError

    def _on_realtime(self, clock: Clock) -> None:
        """Called once before a real-time run starts."""
        self._start_clock(ClockZero.of(clock))

    def _start_clock(self, zero: ClockZero) -> None:
        """t = 0 is ``zero``: kept, and told to the listeners that ask (the log's header
        is written with it). Once per call; a later start changes nothing."""
        if self.zero is not None:
            return
        self.zero = zero
        for listener in list(self.listeners):
            started = getattr(listener, "clock_started", None)
            if callable(started):
                # A log that cannot take its header fails at its first event instead,
                # where a failing write already ends the call as a crash.
                with contextlib.suppress(Exception):
                    started(zero)

    def _frame_lag(self, lag_s: float) -> None:
        """How long after it was due a frame is processed (for the lag statistics)."""
        stats = getattr(self, "_lag_stats", None)
        if stats is None:
            stats = self._lag_stats = FrameLagStats()
        stats.add(lag_s)

    def _run_virtual(self, limit: float) -> None:
        try:
            while not self.ended and self.t < limit:
                self.step()
            if not self.ended:
                self._end("time_limit")
        except BaseException as exc:
            self._crash(exc)
            raise

    def run_realtime(self, clock: Clock, stop: threading.Event) -> None:
        """Follow ``clock`` until the call ends or ``stop`` is set (call from a thread).

        The call runs alone on a :class:`~sessions.call.engine.realtime.RealtimePump` in
        this thread: the same pump that runs many calls at once in a batch."""
        from sessions.call.engine.realtime import RealtimePump

        pump = RealtimePump()
        call = pump.add(self, clock, stop=stop)
        pump.run()
        if call.error is not None:
            raise call.error

    def frame_lag_summary(self) -> dict[str, float | int] | None:
        """This call's frame lag (p50/p99/max seconds after a frame was due), if it ran in
        real time; None on the virtual clock."""
        stats = getattr(self, "_lag_stats", None)
        return None if stats is None or not len(stats) else stats.summary(self.config.frame_s)

    def _init_commands(self) -> None:
        self._commands: queue.Queue[Command] = queue.Queue()
        self._scheduled: list[tuple[float, Command]] = []

    def submit(self, command: Command) -> None:
        """Thread-safe: queue a command for the next frame."""
        self._commands.put(command)

    def schedule(self, at: float, command: Command) -> None:
        """Virtual clock: apply ``command`` at the first frame at or after ``at``."""
        self._scheduled.append((at, command))
        self._scheduled.sort(key=lambda x: x[0])

    def emit(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)

    def _apply(self, command: Command, t: float) -> None:
        raise NotImplementedError

    def _apply_commands(self, t: float) -> None:
        while self._scheduled and self._scheduled[0][0] <= t + 1e-9:
            self._apply(self._scheduled.pop(0)[1], t)
        for command in self._take_submitted():
            self._apply(command, t)

    def _take_submitted(self) -> list[Command]:
        """The commands submitted since the last look, in order (taken off the queue)."""
        if self._commands.empty():  # most frames: no raised Empty for every call's frame
            return []
        taken: list[Command] = []
        while True:
            try:
                taken.append(self._commands.get_nowait())
            except queue.Empty:
                return taken

    def _set_dials(self, command: SetTendencies | SetAutos, t: float) -> None:
        """The tester moved a dial or switched an auto: apply it and log it."""
        if isinstance(command, SetTendencies):
            self.tendencies = command.tendencies
        else:
            if command.interrupt is not None:
                self.auto_interrupt = command.interrupt
            if command.backchannel is not None:
                self.auto_backchannel = command.backchannel
            if command.adapt is not None:
                self._switch_adapt(command.adapt)
        self._log_dials(t)
        adapter = self.adapter
        if isinstance(command, SetAutos) and command.adapt and adapter is not None:
            # Calibrated at once on the turns heard so far (or the paper's constants, and
            # a note saying so, until enough have been).
            self.emit(adapter.recalibrate(self._effective_tendencies(), t, "on"))

    def _rule_params(self, t: float) -> RuleParams | None:
        """The calibrated thresholds for the dials now (recalibrated, and logged, when the
        dials changed); None without ``--adapt`` (the paper's constants)."""
        adapter = self.adapter
        if adapter is None:
            return None
        tendencies = self._effective_tendencies()
        if adapter.needs(tendencies):
            reason = "start" if adapter.current is None else "dials"
            self.emit(adapter.recalibrate(tendencies, t, reason))
        return adapter.params

    def _switch_adapt(self, on: bool) -> None:
        if self.adapter is None:
            if not on:
                return
            from sessions.call.adapt import RuleAdapter

            # Asked for mid-call without one: measured live from the next turns on.
            self.adapter = RuleAdapter(
                frame_s=self.config.frame_s, busy_s=self.config.backchannel_s
            )
        self.adapter.enabled = on

    def _log_dials(self, t: float) -> None:
        d = self.tendencies
        autos = {"interrupt": self.auto_interrupt, "backchannel": self.auto_backchannel}
        if self.adapter is not None:
            autos["adapt"] = self.adapter.enabled
        self.emit(
            DialsChanged(
                t=round(t, 6),
                tendencies=TendencyValues(alpha=d.alpha, beta=d.beta, gamma=d.gamma),
                autos=autos,
            )
        )

    def _effective_tendencies(self) -> Tendencies:
        """The dials the policy sees: a dial whose auto is off is 0."""
        d = self.tendencies
        return Tendencies(
            d.alpha,
            d.beta if self.auto_interrupt else 0.0,
            d.gamma if self.auto_backchannel else 0.0,
        )
