"""One clock thread for every real-time call in a process: :class:`RealtimePump`.

A call on a line (or a voice call on the sound card) must process each 32 ms frame as
soon as its clock has passed the frame's end. Instead of one sleep-polling thread per
call, one pump steps every running engine: each pass gives every call whose next frame
is due exactly one frame (round-robin, so a slow call cannot starve the others), and
when no frame is due it sleeps until the earliest one is. A single call
(:meth:`~sessions.call.engine.pump.FramePump.run_realtime`) runs on the same pump.

How late each frame is processed after it became due is the call's *frame lag*
(:class:`FrameLagStats`): a call whose p99 lag exceeds one frame sent and read its audio
off the beat, so its timings are not to be trusted (logged on its ``end`` event).
"""

from __future__ import annotations

import sys
import threading
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sessions.clock import Clock

if TYPE_CHECKING:
    from sessions.call.engine.pump import FramePump

IDLE_WAIT_S = 0.05
"""How long an empty background pump waits for a call before looking again."""
SWITCH_S = 0.001
"""The interpreter's thread switch interval while a pump runs."""
MAX_SLEEP_S = 0.016
"""The longest sleep between passes: a clock that is not the monotonic one (an audio
device's) may run a little fast, and a stop request is seen within this."""


class FrameLagStats:
    """Every frame's lag (seconds after it became due), for its quantiles at the end."""

    def __init__(self) -> None:
        self._lags = array("f")

    def add(self, lag_s: float) -> None:
        self._lags.append(max(0.0, lag_s))

    def __len__(self) -> int:
        return len(self._lags)

    def quantile(self, q: float) -> float:
        if not self._lags:
            return 0.0
        ordered = sorted(self._lags)
        return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])

    @property
    def max_s(self) -> float:
        return float(max(self._lags)) if self._lags else 0.0

    def summary(self, frame_s: float) -> dict[str, float | int]:
        """p50/p99/max in seconds, frames processed and how many came later than a frame."""
        ordered = sorted(self._lags)
        n = len(ordered)

        def q(x: float) -> float:
            return round(float(ordered[min(n - 1, int(x * n))]), 5) if n else 0.0

        return {
            "p50_s": q(0.5),
            "p99_s": q(0.99),
            "max_s": round(float(ordered[-1]), 5) if n else 0.0,
            "frames": n,
            "late_frames": sum(1 for x in ordered if x > frame_s),
        }


Done = Callable[["PumpedCall", BaseException | None], None]


@dataclass(eq=False)
class PumpedCall:
    """One engine on the pump, with its clock and how it is to stop."""

    engine: FramePump
    clock: Clock
    stop: threading.Event = field(default_factory=threading.Event)
    """Set from any thread: the pump ends the call (``stop_reason``) at its next pass."""
    stop_reason: str = "hangup"
    seconds: float | None = None
    """Hang up once the call's clock reaches this (None: run until the call ends)."""
    on_done: Done | None = None
    """Called on the pump thread when the call has ended (with the error, if it crashed)."""
    error: BaseException | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    def hang_up(self, reason: str = "hangup") -> None:
        """Thread-safe: end this call at the pump's next pass."""
        self.stop_reason = reason
        self.stop.set()


class RealtimePump:
    """Steps every added call in real time on one thread (see the module)."""

    def __init__(self) -> None:
        self._calls: list[PumpedCall] = []
        self._ending: set[PumpedCall] = set()
        """Calls hanging up on their own thread (see :meth:`_stop_if_asked`)."""
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    # ---- calls ------------------------------------------------------------------------

    def add(
        self,
        engine: FramePump,
        clock: Clock,
        *,
        stop: threading.Event | None = None,
        seconds: float | None = None,
        on_done: Done | None = None,
    ) -> PumpedCall:
        """Run ``engine`` on ``clock`` from its next due frame (thread-safe)."""
        engine.virtual = False
        engine.hang_up_elsewhere = True
        engine._on_realtime(clock)
        call = PumpedCall(engine, clock, seconds=seconds, on_done=on_done)
        if stop is not None:
            call.stop = stop
        with self._lock:
            self._calls.append(call)
        self._wake.set()
        return call

    @property
    def running(self) -> list[PumpedCall]:
        with self._lock:
            return list(self._calls)

    def hang_up_all(self, reason: str) -> None:
        for call in self.running:
            call.hang_up(reason)

    # ---- running ----------------------------------------------------------------------

    def start(self) -> RealtimePump:
        """Run the pump on its own thread until :meth:`close`."""
        self._thread = threading.Thread(
            target=self.run, kwargs={"until_empty": False}, name="cutin-pump", daemon=True
        )
        self._thread.start()
        return self

    def close(self, timeout: float | None = None) -> None:
        self._closed = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self, *, until_empty: bool = True) -> None:
        """Pump in this thread: until no call is left (``until_empty``) or :meth:`close`.

        An exception from a call's frame crashes that call only; anything else (a
        Ctrl-C in this thread) crashes every call still running and is raised.

        While it runs, the interpreter switches threads every :data:`SWITCH_S` (not
        every 5 ms): the pump must get the interpreter within a fraction of a frame
        while a call is being built, torn down, or a socket decodes audio."""
        switch = sys.getswitchinterval()
        sys.setswitchinterval(min(switch, SWITCH_S))
        try:
            self._run(until_empty=until_empty)
        finally:
            sys.setswitchinterval(switch)

    def _run(self, *, until_empty: bool) -> None:
        try:
            while not self._closed:
                calls = self.running
                if not calls:
                    with self._lock:
                        ending = bool(self._ending)
                    if until_empty and not ending:
                        return
                    self._wake.wait(IDLE_WAIT_S)
                    self._wake.clear()
                    continue
                wait = self._pass(calls)
                if wait > 0:
                    time.sleep(min(wait, MAX_SLEEP_S))
        except BaseException as exc:
            for call in self.running:
                call.engine._crash(exc)
                self._finish(call, exc)
            raise

    def _pass(self, calls: list[PumpedCall]) -> float:
        """One frame for every call that is due; returns how long until the next is."""
        soonest = MAX_SLEEP_S
        for call in calls:
            engine = call.engine
            try:
                if not engine.ended and self._stop_if_asked(call):
                    continue
                if engine.ended:
                    self._finish_ended(call)
                    continue
                now = call.clock.now()
                due = engine.t + engine.config.frame_s
                if due <= now:
                    engine._frame_lag(now - due)
                    engine.step()
                    soonest = 0.0  # maybe more frames due: look again at once
                    if engine.ended:
                        self._finish_ended(call)
                else:
                    soonest = min(soonest, due - now)
            except Exception as exc:
                engine._crash(exc)
                self._finish(call, exc)
        return soonest

    def _stop_if_asked(self, call: PumpedCall) -> bool:
        """Hang up a call that is asked to stop or out of time, off this thread: its far
        end may wait for its last words to be transcribed, and the other calls' frames
        must not wait with it. True when the call left the pump."""
        if call.stop.is_set():
            reason = call.stop_reason
        elif call.seconds is not None and call.clock.now() >= call.seconds:
            reason = "hangup"
        else:
            return False
        self._hang_up_elsewhere(call, reason)
        return True

    def _finish_ended(self, call: PumpedCall) -> None:
        """A call that ended inside its frame (the agent hung up, the line failed, the
        caller's script is done): its tear-down runs off this thread too."""
        if call.engine.hang_up_due:
            self._hang_up_elsewhere(call, None)
        else:
            self._finish(call, None)

    def _hang_up_elsewhere(self, call: PumpedCall, reason: str | None) -> None:
        """End ``call`` (``reason``; None: it has ended, its tear-down is due) on a
        thread of its own: nothing of it is stepped from here on."""
        with self._lock:
            if call not in self._calls:
                return
            self._calls.remove(call)  # no frame of it is stepped from here on
            self._ending.add(call)

        def hang_up() -> None:
            error: BaseException | None = None
            engine = call.engine
            try:
                if reason is not None:
                    engine._end(reason)
                if engine.hang_up_due:
                    engine._hang_up()
            except Exception as exc:
                engine._crash(exc)
                error = exc
            try:
                self._done(call, error)
            finally:
                with self._lock:
                    self._ending.discard(call)
                self._wake.set()

        threading.Thread(target=hang_up, name="cutin-hangup", daemon=True).start()

    def _finish(self, call: PumpedCall, error: BaseException | None) -> None:
        with self._lock:
            if call not in self._calls:
                return
            self._calls.remove(call)
        self._done(call, error)

    def _done(self, call: PumpedCall, error: BaseException | None) -> None:
        call.error = error
        try:
            if call.on_done is not None:
                call.on_done(call, error)
        finally:
            call.finished.set()
