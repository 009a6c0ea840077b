"""The real-time pump executor: a batch's calls on a line run N at a time in this process.

Every call is built from its plan as :func:`sessions.batch.call.run_call` builds it, then
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
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from sessions.batch.board import BatchBoard
from sessions.batch.call import INTERRUPTED, LiveCall, finish_call, start_call
from sessions.batch.filing import CallOutcome
from sessions.batch.plan import BatchPlan, CallSpec
from sessions.call.engine.realtime import PumpedCall, RealtimePump

if TYPE_CHECKING:
    from sessions.plan import CallPlan
    from sessions.settings import Settings

STOP_WAIT_S = 20.0
"""How long an interrupted batch waits for its running calls to hang up and close."""
LINE_CALL_CPU = 0.14
"""CPU cores one real-time line call takes in this process (its share of the packed
speech-to-text, VAD every frame, the line's codec and socket, the pump), measured by
``bench/bench_jobs.py`` with 12-20 calls at once on an idle 2-core machine (medians of
3-5 runs; one run moves ±0.015): 0.084-0.093 CPU-s per call-second against the light far
end (it talks half the call), 0.100-0.109 against one that talks as much as τ-Voice's
agents (68%), 0.104-0.105 against one that talks 93% (an agent that talks all the time is
transcribed all the time). The budget keeps a margin over the worst single runs (0.14);
``docs/capacity.md``."""
CPU_HEADROOM = 0.9
"""The share of the machine's cores the calls may take. At 0.9 a 2-core machine allows 12
calls; the bench paced 20 light or typical calls there in every run (every call's p99 lag
under a frame), 20 that talk 93% of the call in two runs of three."""
PROCESS_CALLS = 20
"""The most line calls one process runs at once, however many cores it has: its pump and
line loop share one interpreter lock (about 0.04 CPU-s of Python per call-second), and 20
is the most the bench has paced in one process."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def max_line_jobs(cores: int | None = None) -> int:
    """How many line calls this machine can pace at once (by the documented budget)."""
    n = usable_cores() if cores is None else cores
    return max(1, min(PROCESS_CALLS, int(n * CPU_HEADROOM / LINE_CALL_CPU)))


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


class PumpExecutor:
    """Calls on a line in real time, ``plan.jobs`` at once on one pump; outcomes as
    calls end."""

    name = "pump"

    def check(self) -> None:
        pass

    def run(
        self, todo: Sequence[CallSpec], plan: BatchPlan, board: BatchBoard | None
    ) -> Iterator[CallOutcome]:
        pool = AgentPool(plan.dialled)
        out_dir = plan.out_dir
        _warm_imports()
        warm_models(plan.options, plan.settings)
        pending = list(todo)
        running: dict[PumpedCall, LiveCall] = {}
        ended: queue.Queue[PumpedCall] = queue.Queue()
        pump = RealtimePump().start()  # switches threads every 1 ms while it runs
        try:
            while pending or running:
                while pending and len(running) < plan.jobs and pool.free:
                    spec, agent = pending.pop(0), pool.take()
                    started = start_call(
                        spec, agent, plan.scenarios, plan.options, out_dir, plan.settings
                    )
                    if isinstance(started, CallOutcome):
                        pool.give(agent)
                        yield started
                        continue
                    if board is not None:
                        board.call_started(spec.stem, started)
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
                    board.call_ended(live.spec.stem)
                yield finish_call(live, out_dir, call.error)
        except BaseException:
            # Ctrl-C (or the reader stopped): every running call hangs up and is filed.
            # Its untranscribed audio is dropped first, so the hang-up does not wait for
            # the STT backlog of every call (seconds each), only for the segment being
            # transcribed.
            for live in running.values():
                _abandon(live)
            pump.hang_up_all(INTERRUPTED)
            deadline = time.monotonic() + STOP_WAIT_S
            for call, live in list(running.items()):
                call.finished.wait(max(0.0, deadline - time.monotonic()))
                with contextlib.suppress(Exception):
                    outcome = finish_call(live, out_dir, None, interrupted=True)
                    if board is not None:
                        board.call_stopped(outcome)
                if board is not None:
                    board.call_ended(live.spec.stem)
            raise
        finally:
            pump.close(timeout=5.0)


def _warm_imports() -> None:
    """Import what the calls' worker threads would otherwise import mid-call: the caller's
    speech is resampled with scipy, whose first import takes seconds on a loaded machine,
    holding the interpreter (the pump's frames late) and, at a Ctrl-C, the exit (the
    interpreter waits for a worker thread that is still importing)."""
    with contextlib.suppress(ImportError):
        import scipy.signal  # noqa: F401


def warm_models(options: CallPlan, settings: Settings | None = None) -> None:
    """Load the models the calls of ``options`` share (the VAD, and Whisper unless
    ``--transcribe off``) before the pump runs a call: loading holds the interpreter for
    up to ~0.1 s at a time (measured: 114 ms), which would be the running calls' frame
    lag if a later call loaded them. A model that fails to load here fails each call's
    set-up as before."""
    from sessions.settings import Settings
    from sessions.speech.shared import shared_transcriber
    from sessions.speech.vad import load_vad

    try:
        load_vad(options.vad)
        if options.transcribe != "off":
            stt = options.stt or (settings or Settings()).stt_model
            shared_transcriber(stt, cpu_threads=1)
    except Exception:  # each call's set-up says what is wrong, filed as its failure
        return


def _abandon(live: LiveCall) -> None:
    """Give up the call's pending transcription (see :meth:`AgentEars.abandon`)."""
    from sessions.call.far_ends.agent_ears import give_up_transcripts

    give_up_transcripts(live.built.loop)
