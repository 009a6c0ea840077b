"""Messages an agent numbers, put back in order within a small window.

Telnyx says media frames may arrive out of order and carry ``sequence_number`` (and
``media.chunk``) to order them by. A line that plays numbered messages passes each
through a :class:`ReorderWindow`: in-order messages go straight through; one that
arrives ahead of a missing number waits, at most :attr:`ReorderWindow.depth` messages
or :attr:`ReorderWindow.max_wait_s`, for the missing one (then the gap is skipped and
counted); one that arrives after its place was played is dropped and counted, as a
jitter buffer drops a late packet. Messages without a number pass straight through.
The window costs no delay while the numbers run in order.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

DEPTH = 4
"""Messages held waiting for a missing one (4 of Telnyx's 20 ms frames: 80 ms)."""
MAX_WAIT_S = 0.1
"""The longest a message waits for a missing one before the gap is skipped."""
_RECENT = 256
"""Numbers remembered as released, to tell a repeat from a late arrival."""
RESYNC = 500
"""A number this far from the one due is a restart of the numbering (or a hostile
agent's), not a late or early message: the window starts over from it."""


@dataclass
class ReorderCounts:
    """What the window did, for the line's notes and summary."""

    reordered: int = 0
    """Messages that arrived ahead of their turn and were played in their place."""
    late: int = 0
    """Messages that arrived after their place was played (dropped)."""
    repeated: int = 0
    """Messages whose number had already been played (dropped)."""
    missing: int = 0
    """Numbers never seen, skipped over."""
    restarts: int = 0
    """Times the numbering jumped by more than :data:`RESYNC` and the window started over."""

    @property
    def anomalies(self) -> int:
        return self.reordered + self.late + self.repeated + self.missing + self.restarts

    def words(self, what: str) -> str:
        restarts = f", {self.restarts} restarts of the numbering" if self.restarts else ""
        return (
            f"{what}: {self.reordered} put back in order, {self.late} too late (dropped),"
            f" {self.repeated} repeated (dropped), {self.missing} never arrived{restarts}"
        )


class ReorderWindow(Generic[T]):
    """Release numbered items in number order (thread-safe)."""

    def __init__(self, depth: int = DEPTH, max_wait_s: float = MAX_WAIT_S) -> None:
        self.depth = depth
        self.max_wait_s = max_wait_s
        self.counts = ReorderCounts()
        self._lock = threading.Lock()
        self._next: int | None = None
        """The number due next (None until the first numbered item)."""
        self._held: dict[int, tuple[float, T]] = {}
        self._recent: deque[int] = deque(maxlen=_RECENT)

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def push(self, number: int | None, item: T, now: float) -> list[T]:
        """Take one item; returns the items to act on now, in order."""
        with self._lock:
            if number is None:
                return [*self._release_all(), item]
            out: list[T] = []
            if self._next is not None and abs(number - self._next) > RESYNC:
                out = self._release_all()
                self.counts.restarts += 1
                self._recent.clear()
                self._next = None
            if self._next is None:
                self._next = number
            if number < self._next:
                if number in self._recent or number in self._held:
                    self.counts.repeated += 1
                else:
                    self.counts.late += 1
                return out
            if number in self._held:
                self.counts.repeated += 1
                return out
            if number == self._next and self._held:
                self.counts.reordered += 1  # it filled the gap the held ones wait on
            self._held[number] = (now, item)
            out += self._release_ready()
            if len(self._held) > self.depth:
                out += self._skip_gap()
            return out

    def due(self, now: float) -> list[T]:
        """Items released because the oldest held one waited :attr:`max_wait_s`."""
        with self._lock:
            if not self._held:
                return []
            oldest = min(t for t, _ in self._held.values())
            if now - oldest < self.max_wait_s:
                return []
            return self._skip_gap()

    def flush(self) -> list[T]:
        """Everything held, in order (the gaps skipped): the stream is ending or flushed."""
        with self._lock:
            return self._release_all()

    def drop(self) -> int:
        """Forget what is held (an agent's clear drops its queued audio); how many."""
        with self._lock:
            n = len(self._held)
            if self._held:
                self._next = max(self._held) + 1
                self._recent.extend(self._held)
                self._held.clear()
            return n

    def _release_ready(self) -> list[T]:
        out: list[T] = []
        while self._next is not None and self._next in self._held:
            out.append(self._held.pop(self._next)[1])
            self._recent.append(self._next)
            self._next += 1
        return out

    def _skip_gap(self) -> list[T]:
        if not self._held or self._next is None:
            return []
        first = min(self._held)
        self.counts.missing += first - self._next
        self._next = first
        return self._release_ready()

    def _release_all(self) -> list[T]:
        out: list[T] = []
        while self._held:
            out += self._skip_gap()
        return out
