"""A batch's real-time calls (a black-box agent on a line) run N at a time in this process.

Every call is built from its plan as :func:`sessions.batch_run.run_call` builds it, then
handed to one :class:`~sessions.call.engine.realtime.RealtimePump` that steps every
running call's frames on a single thread; the calls share the loaded VAD and Whisper
models, one STT worker and the synthesized caller speech (:mod:`sessions.speech.shared`).
Each call is filed like any other (``.part`` → final name, or ``.failed``).

The agents: one ``--agent`` is dialled by every call at once (an agent that takes
concurrent calls); several (one per port of an agent that takes one call at a time) are
each lent to one call and given back when it ends, so at most that many run at once.

Ctrl-C (``KeyboardInterrupt`` in the thread reading the outcomes) hangs up every running
call, waits for their logs to close, files each as ``.failed`` ("interrupted"), and
raises on: a rerun of the same batch runs exactly the calls not finished.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from sessions.batch import CallSpec, CallTally
from sessions.batch_run import (
    CallOutcome,
    RunOptions,
    _file,
    call_plan,
    part_path,
    recording_part,
)
from sessions.call.engine.realtime import PumpedCall, RealtimePump
from sessions.plan.build import LINE_CALL_SECONDS, BuiltCall, build_call
from sessions.scenarios.model import Scenario

if TYPE_CHECKING:
    from sessions.settings import Settings

INTERRUPTED = "interrupted"
STOP_WAIT_S = 20.0
"""How long an interrupted batch waits for its running calls to hang up and close."""
LINE_CALL_CPU = 0.45
"""CPU cores one real-time line call takes in this process (VAD every frame, the line's
codec and sockets, the pump, and mostly its share of STT: an agent that talks all the
time is transcribed all the time), measured by ``bench/bench_jobs.py`` against the light
far end (0.46-0.58 CPU-s per call-second on a 2-core machine); ``docs/capacity.md``."""
CPU_HEADROOM = 0.9
"""The share of the machine's cores the calls may take. At 0.9 a 2-core machine allows 4
calls, the largest number the bench paced there with every call's p99 lag under a frame
(8 were not)."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def max_line_jobs(cores: int | None = None) -> int:
    """How many line calls this machine can pace at once (by the documented budget)."""
    n = usable_cores() if cores is None else cores
    return max(1, int(n * CPU_HEADROOM / LINE_CALL_CPU))


class AgentPool:
    """The agents the calls dial: one shared by all, or several lent one call at a time."""

    def __init__(self, agents: Sequence[str]) -> None:
        if not agents:
            raise ValueError("no agent to dial")
        self.agents = tuple(agents)
        self.exclusive = len(self.agents) > 1
        self._free = list(self.agents)

    @property
    def free(self) -> bool:
        return bool(self._free) or not self.exclusive

    def take(self) -> str:
        if not self.exclusive:
            return self.agents[0]
        return self._free.pop(0)

    def give(self, agent: str) -> None:
        if self.exclusive:
            self._free.append(agent)


@dataclass(frozen=True, slots=True)
class CallState:
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
        self._running: dict[str, tuple[_Live | None, float]] = {}
        self._took: list[float] = []
        self.peak = 0
        """The most calls seen running at once (the batch's parallelism, for the ETA)."""
        self.stopped: list[CallOutcome] = []
        """Calls a Ctrl-C hung up mid-call and filed as ``.failed`` (no outcome was
        yielded for them: the batch was stopped)."""

    def _started(self, stem: str, live: _Live | None) -> None:
        with self._lock:
            self._running[stem] = (live, time.monotonic())
            self.peak = max(self.peak, len(self._running))

    def _ended(self, stem: str) -> None:
        with self._lock:
            ran = self._running.pop(stem, None)
            if ran is not None:
                self._took.append(time.monotonic() - ran[1])

    def _stopped(self, outcome: CallOutcome) -> None:
        with self._lock:
            self.stopped.append(outcome)

    def running(self) -> list[CallState]:
        with self._lock:
            items = list(self._running.items())
        return [_state(stem, live, since) for stem, (live, since) in items]

    def took(self) -> list[float]:
        """Wall seconds each ended call ran, in the order they ended."""
        with self._lock:
            return list(self._took)


def _state(stem: str, live: _Live | None, since: float) -> CallState:
    age = time.monotonic() - since
    if live is None:  # in a worker process or on a Ray node: only its age is known here
        return CallState(stem, age, None, 0, 0, 0, None, age)
    engine, counted = live.built.loop, live.counted
    stats = getattr(engine, "_lag_stats", None)
    return CallState(
        stem,
        engine.t,
        live.seconds,
        counted.agent_turns,
        counted.interruptions,
        counted.backchannels,
        stats.quantile(0.99) if stats is not None and len(stats) else None,
        age,
    )


@dataclass(eq=False)
class _Live:
    spec: CallSpec
    agent: str
    built: BuiltCall
    counted: CallTally
    seconds: float
    pumped: PumpedCall | None = None


def run_live(
    todo: Sequence[CallSpec],
    scenarios: Mapping[str, Scenario],
    options: RunOptions,
    out_dir: Path,
    *,
    jobs: int,
    agents: Sequence[str] = (),
    settings: Settings | None = None,
    board: BatchBoard | None = None,
) -> Iterator[CallOutcome]:
    """Run ``todo`` in real time, ``jobs`` at once on one pump; outcomes as calls end."""
    pool = AgentPool(agents or [options.agent])
    _warm_imports()
    pending = list(todo)
    running: dict[PumpedCall, _Live] = {}
    ended: queue.Queue[PumpedCall] = queue.Queue()
    pump = RealtimePump().start()
    # The pump must get the interpreter within a fraction of a frame while a call is
    # being built or a socket thread decodes audio: switch threads every 1 ms, not 5.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, 0.001))
    try:
        while pending or running:
            while pending and len(running) < jobs and pool.free:
                spec, agent = pending.pop(0), pool.take()
                started = _start(spec, agent, scenarios, options, out_dir, settings)
                if isinstance(started, CallOutcome):
                    pool.give(agent)
                    yield started
                    continue
                if board is not None:
                    board._started(spec.stem, started)
                started.pumped = pump.add(
                    started.built.loop,
                    started.built.loop.voice.start(started.built.loop.submit),
                    seconds=started.seconds,
                    on_done=lambda call, error: ended.put(call),
                )
                running[started.pumped] = started
            try:
                call = ended.get(timeout=0.25)
            except queue.Empty:
                continue
            live = running.pop(call)
            pool.give(live.agent)
            if board is not None:
                board._ended(live.spec.stem)
            yield _finish(live, out_dir, call.error)
    except BaseException:
        # Ctrl-C (or the reader stopped): every running call hangs up and is filed. Its
        # untranscribed audio is dropped first, so the hang-up does not wait for the STT
        # backlog of every call (seconds each), only for the segment being transcribed.
        for live in running.values():
            _abandon(live)
        pump.hang_up_all(INTERRUPTED)
        deadline = time.monotonic() + STOP_WAIT_S
        for call, live in list(running.items()):
            call.finished.wait(max(0.0, deadline - time.monotonic()))
            with contextlib.suppress(Exception):
                outcome = _finish(live, out_dir, None, interrupted=True)
                if board is not None:
                    board._stopped(outcome)
            if board is not None:
                board._ended(live.spec.stem)
        raise
    finally:
        pump.close(timeout=5.0)
        sys.setswitchinterval(switch)


def _start(
    spec: CallSpec,
    agent: str,
    scenarios: Mapping[str, Scenario],
    options: RunOptions,
    out_dir: Path,
    settings: Settings | None,
) -> _Live | CallOutcome:
    """Build one call (its line dialled, its log open), or its failure filed."""
    part = part_path(out_dir, spec)
    part.unlink(missing_ok=True)  # a crash's leftover; never appended to
    counted = CallTally()
    plan = call_plan(spec, scenarios[spec.scenario], replace(options, agent=agent), out_dir)
    try:
        built = build_call(plan, settings)
    except Exception as exc:
        return _file(spec, out_dir, part, recording_part(out_dir, spec), None, counted, _why(exc))
    if built.recorder is not None:
        built.loop.listeners.append(built.recorder)
    built.loop.listeners.append(counted.add)
    return _Live(spec, agent, built, counted, plan.max_seconds or LINE_CALL_SECONDS)


def _warm_imports() -> None:
    """Import what the calls' worker threads would otherwise import mid-call: the caller's
    speech is resampled with scipy, whose first import takes seconds on a loaded machine,
    holding the interpreter (the pump's frames late) and, at a Ctrl-C, the exit (the
    interpreter waits for a worker thread that is still importing)."""
    with contextlib.suppress(ImportError):
        import scipy.signal  # noqa: F401


def _abandon(live: _Live) -> None:
    """Give up the call's pending transcription (see :meth:`AgentEars.abandon`)."""
    from sessions.call.far_ends.agent_ears import give_up_transcripts

    give_up_transcripts(live.built.loop)


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _finish(
    live: _Live, out_dir: Path, error: BaseException | None, *, interrupted: bool = False
) -> CallOutcome:
    """Close the call's parts and log, then file it by how it ended."""
    built = live.built
    try:
        built.loop.voice.close()
    finally:
        built.close()
    crash = INTERRUPTED if interrupted else (_why(error) if error is not None else None)
    spec = live.spec
    return _file(
        spec,
        out_dir,
        part_path(out_dir, spec),
        recording_part(out_dir, spec),
        built.recorder,
        live.counted,
        crash,
    )
