"""One clock for the whole call: seconds since call start.

The live app uses :class:`RealClock` (monotonic); tests and batch runs use
:class:`VirtualClock`, which only moves when the call loop steps it.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...


class RealClock:
    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0


class VirtualClock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t
