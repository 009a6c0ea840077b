"""Real-time calls through Ray on one node (``cutin simulate --ray``) against the light
far end: what the Ray path costs beside ``--jobs`` (bench_jobs.py).

A local one-node Ray is started here (``ray.init()``, as ``--ray`` without an address
does); the agent is ``examples/known_agent.py`` (pre-rendered speech, an energy ear,
nearly no CPU, its own process). For each N in ``LEVELS``, N calls of at most
``CALL_S`` seconds run at once on the node's actor (one pump, shared models, results
shipped back as bytes and filed by the driver) through
:func:`sessions.batch.runner.run.run_batch` with a
:class:`~sessions.batch.plan.RaySetup`. Measured per N:

- calls per hour: N calls over the wall time from the actor's answer (models loaded)
  to the last call filed;
- CPU-seconds per call-second: CPU of this process (the driver: dispatch, filing) and
  of every process under it (Ray's GCS and raylet, the actor) over the calls' seconds;
- each call's frame lag p99 (its ``end`` event): over one frame (32 ms) its timings
  are not trusted.

    .venv/bin/python bench/run.py ray
    .venv/bin/python bench/bench_ray.py 1 2      # only these N
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

LEVELS = (1, 2, 4)
CALL_S = 25.0
FRAME_S = 0.032
SCENARIO = "retail-order-change"
TAU_PER_HOUR = 272.7
"""τ-Voice: simulations per hour from one process (10 concurrent simulations)."""
TAU_CALL_MIN = 1.0
"""Minutes per τ-Voice simulation assumed for the per-minute comparison (an assumption,
as in bench_jobs.py)."""


def _tree_cpu_s(root: int) -> dict[int, float]:
    """utime + stime of every live descendant of ``root`` (from /proc), in seconds, by
    process id (a level's CPU is the growth per process: one that ended in between, an
    earlier level's actor, must not count against it)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents.setdefault(int(fields[1]), []).append(pid)
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
    out: dict[int, float] = {}
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            out[child] = cpu.get(child, 0.0)
            todo.append(child)
    return out


def _grown(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())


@dataclass
class Level:
    calls: int
    wall_s: float
    cpu_s: float
    call_s: float
    lag_p99_s: list[float]
    failed: int

    @property
    def calls_per_hour(self) -> float:
        return self.calls / self.wall_s * 3600.0 if self.wall_s > 0 else float("nan")

    @property
    def cpu_per_call_s(self) -> float:
        return self.cpu_s / self.call_s if self.call_s else float("nan")

    @property
    def worst_p99_s(self) -> float:
        return max(self.lag_p99_s, default=float("nan"))


def run_level(url: str, n: int, out: Path) -> Level:
    from sessions.batch.filing import CallStatus
    from sessions.batch.plan import (
        BatchPlan,
        RaySetup,
        RayStats,
        conditions,
        plan_batch,
    )
    from sessions.batch.runner.run import run_batch
    from sessions.log import read_session
    from sessions.log.models import EndEvent
    from sessions.plan import CallPlan
    from sessions.scenarios import load_scenario

    scenario = load_scenario(SCENARIO)
    specs = plan_batch(
        [scenario.name], conditions([0.5], [0.5], [0.5]), runs=n, seed=7, batch="bench"
    )
    options = CallPlan(user="scripted", agent=f"twilio:{url}", speech="espeak", max_seconds=CALL_S)
    stats = RayStats()
    me = os.getpid()
    cpu0, tree0 = time.process_time(), _tree_cpu_s(me)
    outcomes = []
    cpu = 0.0
    end = time.monotonic()
    plan = BatchPlan(specs, {scenario.name: scenario}, options, out, ray=RaySetup(stats=stats))
    for outcome in run_batch(plan):
        outcomes.append(outcome)
        if len(outcomes) == n:  # read before the actor is ended with the run
            end = time.monotonic()
            cpu = time.process_time() - cpu0 + _grown(tree0, _tree_cpu_s(me))
    wall = end - (stats.first_ready or end)
    lags: list[float] = []
    call_s = 0.0
    for o in outcomes:
        if o.status is CallStatus.FAILED:
            continue
        ends = read_session(o.path).of(EndEvent)
        if ends:
            call_s += ends[-1].t
            lag = getattr(ends[-1], "frame_lag", None)
            if lag is not None:
                lags.append(lag.p99_s)
    failed = sum(1 for o in outcomes if o.status is CallStatus.FAILED)
    return Level(len(outcomes), wall, cpu, call_s, lags, failed)


def measure(levels: tuple[int, ...] = LEVELS) -> list[Level]:
    from sessions.batch.cluster.connect import connect, shutdown
    from tests.support.known_agent import running_known_agent

    out: list[Level] = []
    with running_known_agent() as agent, tempfile.TemporaryDirectory() as tmp:
        started = connect(None)  # one local node, as `--ray` without an address
        try:
            for n in levels:
                out.append(run_level(agent.url, n, Path(tmp) / f"n{n}"))
        finally:
            if started:
                shutdown()
    return out


def _ms(x: float) -> str:
    return f"{x * 1000:.0f} ms"


def rows() -> list[dict[str, Any]]:
    table: list[dict[str, Any]] = []
    for n, lv in zip(LEVELS, measure(), strict=True):
        per_min = lv.calls_per_hour * (CALL_S / 60.0)
        table.append(
            {
                "budget": f"--ray, one local node: {n} line calls at once "
                f"({CALL_S:.0f} s calls, light far end)",
                "target": "every call's frame lag p99 < 32 ms",
                "measured": (
                    f"{lv.calls_per_hour:.0f} calls/h ({per_min:.0f} call-min/h), "
                    f"{lv.cpu_per_call_s:.3f} CPU-s per call-s, lag p99 "
                    + ", ".join(_ms(x) for x in lv.lag_p99_s)
                    + (f", {lv.failed} failed" if lv.failed else "")
                ),
                "peer": f"τ-Voice {TAU_PER_HOUR} sims/h/process",
                "note": f"per call-minute {per_min / (TAU_PER_HOUR * TAU_CALL_MIN):.2f}× "
                f"τ-Voice (assuming {TAU_CALL_MIN:g}-min sims); CPU includes Ray's GCS, "
                "raylet and the actor",
                "target_value": FRAME_S * 1000,
                "measured_value": round(lv.worst_p99_s * 1000, 2) if lv.lag_p99_s else None,
                "unit": "ms",
                "lower_is_better": True,
            }
        )
    return table


if __name__ == "__main__":
    chosen = tuple(int(a) for a in sys.argv[1:]) or LEVELS
    print(f"{'N':>3} {'calls/h':>8} {'CPU-s/call-s':>13} {'worst p99':>10} failed")
    for n, lv in zip(chosen, measure(chosen), strict=True):
        print(
            f"{n:>3} {lv.calls_per_hour:>8.0f} {lv.cpu_per_call_s:>13.3f} "
            f"{_ms(lv.worst_p99_s):>10} {lv.failed}"
        )
