"""One clock for the whole call: seconds since call start.

The live app uses :class:`RealClock` (monotonic); tests and batch runs use
:class:`VirtualClock`, which only moves when the call loop steps it.

:class:`ClockZero` is the instant of a call's t = 0 on this machine's wall and
monotonic clocks, taken from the clock the call runs on when it starts (the session
log's header carries it: docs/log-format.md, "Aligning with your agent's logs").
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class Clock(Protocol):
    def now(self) -> float: ...


@runtime_checkable
class AnchoredClock(Protocol):
    """A clock that knows the ``time.monotonic()`` instant its t = 0 is (heard) at."""

    t0: float

    def now(self) -> float: ...


class RealClock:
    def __init__(self) -> None:
        self.t0 = time.monotonic()
        """``time.monotonic()`` at t = 0."""

    def now(self) -> float:
        return time.monotonic() - self.t0


class VirtualClock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


def wall_and_monotonic(tries: int = 5) -> tuple[float, float]:
    """``time.time()`` and ``time.monotonic()`` read at one instant: the pair of reads
    with the least time between them (a preemption between two reads would skew it)."""
    best: tuple[float, float, float] | None = None
    for _ in range(max(1, tries)):
        before = time.monotonic()
        wall = time.time()
        after = time.monotonic()
        gap = after - before
        if best is None or gap < best[0]:
            best = (gap, wall, (before + after) / 2)
        if gap < 5e-5:
            break
    assert best is not None
    return best[1], best[2]


@dataclass(frozen=True, slots=True)
class ClockZero:
    """The instant of a call's t = 0: ``time.time()`` and ``time.monotonic()`` then."""

    unix: float
    monotonic: float
    virtual: bool = False
    """On the virtual clock the call's ``t`` is simulated time: only t = 0 is an
    instant (when the call's first frame was computed), later times are not."""

    @classmethod
    def of(cls, clock: Clock) -> ClockZero:
        """t = 0 of a real-time ``clock`` that is running now: its own anchor when it has
        one (a :class:`RealClock`; a voice call's device clock, whose t = 0 is when call
        time 0 is heard), else ``now - clock.now()``."""
        wall, mono = wall_and_monotonic()
        zero = float(clock.t0) if isinstance(clock, AnchoredClock) else mono - clock.now()
        return cls(unix=wall - (mono - zero), monotonic=zero)

    @classmethod
    def now(cls, *, virtual: bool = True) -> ClockZero:
        """t = 0 is this instant (a call on the virtual clock starting)."""
        wall, mono = wall_and_monotonic()
        return cls(unix=wall, monotonic=mono, virtual=virtual)
