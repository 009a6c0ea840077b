"""A call's set-up and tear-down never hold up the shared real-time pump.

One call runs on a :class:`~sessions.call.engine.realtime.RealtimePump` against the
known agent (examples/known_agent.py, on loopback) while, around it, a second call is
built and dialled (its line, log, recording and models set up), its agent hangs up in
the middle of a turn (the call ends inside one of its own frames, so its far end's
tear-down, the last transcript and the line's close, is due right there), it is closed
and filed, and a third call is built, runs and is hung up by time.

What is asserted exactly: every tear-down (the far end's ``hang_up``: last transcript,
line close) runs on a thread that is not the pump's. What is asserted loosely: the
running call's frame lag, from its own ``end`` event, stays at p99 under
:data:`LAG_BOUND_S` — before the tear-down moved off the pump the running call stalled
3.6 s (p99 3.56 s); the under-one-frame target (p99 < 32 ms, every call) is an idle
machine's and lives in ``bench/bench_jobs.py``, not in a timed test that the suite's
own load would fail.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sessions.batch.call import LiveCall, finish_call, start_call
from sessions.batch.plan import conditions, plan_batch
from sessions.batch.pump import warm_models
from sessions.call.engine.realtime import PumpedCall, RealtimePump
from sessions.log import read_session
from sessions.log.models import EndEvent
from sessions.plan import CallPlan
from sessions.scenarios import load_scenario
from tests.support.known_agent import running_known_agent

RUNNING_S = 9.0
LAG_BOUND_S = 0.3
"""The running call's p99 lag stays under it on a loaded machine (the old pump: 3.56 s)."""


def _watch_hang_up(far: object, threads: list[str]) -> None:
    """Record the name of the thread each ``far.hang_up`` runs on."""
    original: Callable[[float], None] = far.hang_up  # type: ignore[attr-defined]

    def hang_up(t: float) -> None:
        threads.append(threading.current_thread().name)
        original(t)

    far.hang_up = hang_up  # type: ignore[attr-defined]


def test_calls_set_up_and_torn_down_around_a_running_call_leave_its_frames_on_time(
    tmp_path: Path,
) -> None:
    scenario = load_scenario("line-check")
    scenarios = {scenario.name: scenario}
    specs = plan_batch(
        [scenario.name], conditions([0.5], [0.5], [0.5]), runs=3, seed=7, batch="lag"
    )
    options = CallPlan(user="scripted", speech="espeak", max_seconds=RUNNING_S)
    # Only the call whose agent hangs up mid-turn transcribes its agent: its last
    # transcript is the tear-down that held the pump; the others' speech-to-text would
    # only add this test's own load to what the running call's lag measures.
    quiet = options.model_copy(update={"transcribe": "off"})
    warm_models(options)  # as the batch does before its pump runs a call
    ended: queue.Queue[PumpedCall] = queue.Queue()
    torn_down_on: list[str] = []
    pump = RealtimePump().start()

    def start(i: int, url: str, seconds: float | None, plan: CallPlan = quiet) -> LiveCall:
        live = start_call(specs[i], f"twilio:{url}", scenarios, plan, tmp_path, None)
        assert isinstance(live, LiveCall), live
        loop = live.built.loop
        _watch_hang_up(loop.far, torn_down_on)
        live.pumped = pump.add(
            loop, loop.voice.start(loop.submit), seconds=seconds,
            on_done=lambda call, error: ended.put(call),
        )  # fmt: skip
        return live

    def wait_end(live: LiveCall, timeout: float = 30.0) -> None:
        assert live.pumped is not None
        assert live.pumped.finished.wait(timeout), "the call never ended"

    try:
        with running_known_agent() as steady, running_known_agent() as leaving:
            running = start(0, steady.url, RUNNING_S)
            time.sleep(1.0)
            # built and dialled around the running call; it transcribes its agent
            second = start(1, leaving.url, None, options)
            leaving.wait_for("speak", timeout=20)  # its agent is talking...
            time.sleep(0.6)
            leaving.child.close()  # ...and hangs up mid-turn: that call ends in its frame
            wait_end(second)
            finish_call(second, tmp_path, second.pumped.error if second.pumped else None)
            third = start(2, steady.url, 2.0)  # another set-up, then a hang-up by time
            wait_end(third)
            finish_call(third, tmp_path, None)
            wait_end(running)
            finish_call(running, tmp_path, None)
    finally:
        pump.close(timeout=5.0)
    logs = {p.stem.split("-")[-1]: p for p in tmp_path.glob("*.jsonl")}
    assert len(logs) == 3, sorted(tmp_path.iterdir())
    ends = {}
    for path in logs.values():
        end = read_session(path).of(EndEvent)[-1]
        ends[path] = end
    reasons = sorted(e.reason for e in ends.values())
    assert reasons.count("hangup") == 2 and len(set(reasons)) == 2, reasons
    (steady_end,) = [e for e in ends.values() if e.t >= RUNNING_S - 0.5]
    lag = steady_end.frame_lag
    assert lag is not None and lag.frames >= int(RUNNING_S / 0.032) - 5
    assert len(torn_down_on) == 3, torn_down_on
    assert "cutin-pump" not in torn_down_on, torn_down_on  # never on the pump's thread
    assert lag.p99_s < LAG_BOUND_S, lag
