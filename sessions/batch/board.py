"""What a batch is doing, for a progress display on another thread: the calls running
now (snapshot reads), how long the calls that ended took (its ETA), and the calls a stop
filed. Every executor tells it the same three things: a call started, ended, or was
stopped mid-call."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from sessions.batch.call import LiveCall
from sessions.batch.filing import CallOutcome


@dataclass(frozen=True, slots=True)
class CallProgress:
    """A running call as a progress display shows it."""

    stem: str
    t: float
    """Seconds into the call."""
    seconds: float | None
    """When it will be hung up at the latest."""
    agent_turns: int
    interruptions: int
    backchannels: int
    lag_p99_s: float | None
    """Its frame lag so far (None: not real time)."""
    age: float = 0.0
    """Wall seconds since it was started (the ETA's measure of what it has done)."""


class BatchBoard:
    """What is running now, for a progress display on another thread (snapshot reads),
    how long the calls that ended took (its ETA), and the calls a stop filed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, tuple[LiveCall | None, float]] = {}
        self._took: list[float] = []
        self.peak = 0
        """The most calls seen running at once (the batch's parallelism, for the ETA)."""
        self.stopped: list[CallOutcome] = []
        """Calls a Ctrl-C hung up mid-call and filed as ``.failed`` (no outcome was
        yielded for them: the batch was stopped)."""

    def call_started(self, stem: str, live: LiveCall | None) -> None:
        with self._lock:
            self._running[stem] = (live, time.monotonic())
            self.peak = max(self.peak, len(self._running))

    def call_ended(self, stem: str) -> None:
        with self._lock:
            ran = self._running.pop(stem, None)
            if ran is not None:
                self._took.append(time.monotonic() - ran[1])

    def call_stopped(self, outcome: CallOutcome) -> None:
        with self._lock:
            self.stopped.append(outcome)

    def running(self) -> list[CallProgress]:
        with self._lock:
            items = list(self._running.items())
        return [_state(stem, live, since) for stem, (live, since) in items]

    def took(self) -> list[float]:
        """Wall seconds each ended call ran, in the order they ended."""
        with self._lock:
            return list(self._took)


def _state(stem: str, live: LiveCall | None, since: float) -> CallProgress:
    age = time.monotonic() - since
    if live is None:  # in a worker process or on a Ray node: only its age is known here
        return CallProgress(stem, age, None, 0, 0, 0, None, age)
    engine, counted = live.built.loop, live.counted
    stats = getattr(engine, "_lag_stats", None)
    return CallProgress(
        stem,
        engine.t,
        live.seconds,
        counted.agent_turns,
        counted.interruptions,
        counted.backchannels,
        stats.quantile(0.99) if stats is not None and len(stats) else None,
        age,
    )
