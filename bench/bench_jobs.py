"""Many real-time calls at once (``cutin simulate --jobs N``) against the light far end.

The agent is ``examples/known_agent.py`` (pre-rendered speech, an energy ear: nearly no
CPU, in its own process), so what is measured is cutin's own cost. For each N in
``JOBS``, N calls of ``CALL_S`` seconds run at once in this process through
:func:`sessions.batch.runner.run.run_batch` (one pump, shared VAD/STT models), after the
models are loaded. Measured per N:

- calls per hour: N calls over the batch's wall time (from the first call's start to
  the last one filed, dialling and filing included);
- CPU-seconds per call-second: this process's CPU time (every thread: pump, VAD, STT,
  sockets, TTS) over the calls' summed seconds;
- frame lag p99 per call (from each call's ``end`` event), its worst, and whether every
  call stayed under one frame (32 ms).

Then the largest N whose calls all stayed under one frame, and the comparison with
τ-Voice's 272.7 simulations per hour per process, per call-minute (their simulations
average about ``TAU_CALL_MIN`` minutes; cutin's here are ``CALL_S`` seconds).

    .venv/bin/python bench/run.py jobs
    .venv/bin/python bench/bench_jobs.py 1 2 4    # only these N, printed as a table
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

JOBS = (1, 2, 4, 8)
CALL_S = 25.0
FRAME_S = 0.032
TAU_PER_HOUR = 272.7
"""τ-Voice: simulations per hour from one process (10 concurrent simulations)."""
TAU_CALL_MIN = 1.0
"""Minutes of conversation per τ-Voice simulation assumed for the per-minute comparison
(their voice simulations are on the order of a minute; an assumption, said in the note)."""


@dataclass
class Level:
    jobs: int
    calls: int
    wall_s: float
    cpu_s: float
    call_s: float
    lag_p99_s: list[float]
    failed: int

    @property
    def calls_per_hour(self) -> float:
        return self.calls / self.wall_s * 3600.0

    @property
    def cpu_per_call_s(self) -> float:
        return self.cpu_s / self.call_s if self.call_s else float("nan")

    @property
    def worst_p99_s(self) -> float:
        return max(self.lag_p99_s, default=float("nan"))

    @property
    def paced(self) -> bool:
        return not self.failed and all(x <= FRAME_S for x in self.lag_p99_s)


def _warm(url: str) -> None:
    """Load the shared models once, so no level pays for them."""
    from sessions.speech.shared import shared_transcriber
    from sessions.speech.vad import load_vad

    load_vad("onnx")
    shared_transcriber(None, cpu_threads=1)


def run_level(url: str, jobs: int, out: Path) -> Level:
    from sessions.batch.filing import CallStatus
    from sessions.batch.plan import BatchPlan, conditions, plan_batch
    from sessions.batch.runner.run import run_batch
    from sessions.log import read_session
    from sessions.log.models import EndEvent
    from sessions.plan import CallPlan
    from sessions.scenarios import load_scenario

    scenario = load_scenario("line-check")
    specs = plan_batch(
        [scenario.name], conditions([0.5], [0.5], [0.5]), runs=jobs, seed=7, batch="bench"
    )
    options = CallPlan(user="scripted", agent=url, speech="espeak", max_seconds=CALL_S)
    cpu0, wall0 = time.process_time(), time.monotonic()
    outcomes = list(run_batch(BatchPlan(specs, {scenario.name: scenario}, options, out, jobs=jobs)))
    wall, cpu = time.monotonic() - wall0, time.process_time() - cpu0
    lags: list[float] = []
    call_s = 0.0
    for o in outcomes:
        if o.status is CallStatus.FAILED:
            continue
        ends = read_session(o.path).of(EndEvent)
        if ends:
            call_s += ends[-1].t
            if ends[-1].frame_lag is not None:
                lags.append(ends[-1].frame_lag.p99_s)
    failed = sum(1 for o in outcomes if o.status is CallStatus.FAILED)
    return Level(jobs, len(outcomes), wall, cpu, call_s, lags, failed)


def measure(levels: tuple[int, ...] = JOBS) -> list[Level]:
    from tests.support.known_agent import running_known_agent

    out: list[Level] = []
    with running_known_agent() as agent, tempfile.TemporaryDirectory() as tmp:
        _warm(agent.url)
        for jobs in levels:
            out.append(run_level(agent.url, jobs, Path(tmp) / f"jobs{jobs}"))
    return out


def _ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


def rows() -> list[dict[str, Any]]:
    levels = measure()
    table: list[dict[str, Any]] = []
    for lv in levels:
        per_min = lv.calls_per_hour * (CALL_S / 60.0)
        table.append(
            {
                "budget": f"--jobs {lv.jobs} on a line ({CALL_S:.0f} s calls, light far end)",
                "target": "every call's frame lag p99 < 32 ms",
                "measured": (
                    f"{lv.calls_per_hour:.0f} calls/h ({per_min:.0f} call-min/h), "
                    f"{lv.cpu_per_call_s:.3f} CPU-s per call-s, lag p99 "
                    + ", ".join(_ms(x) for x in lv.lag_p99_s)
                    + (f", {lv.failed} failed" if lv.failed else "")
                ),
                "peer": f"τ-Voice {TAU_PER_HOUR} sims/h/process",
                "note": f"per call-minute: {per_min / (TAU_PER_HOUR * TAU_CALL_MIN):.2f}× "
                f"τ-Voice (assuming {TAU_CALL_MIN:g}-min sims)",
                "target_value": FRAME_S * 1000,
                "measured_value": round(lv.worst_p99_s * 1000, 2),
                "unit": "ms",
                "lower_is_better": True,
            }
        )
    paced = [lv.jobs for lv in levels if lv.paced]
    table.append(
        {
            "budget": "largest --jobs whose calls all stay under one frame of lag",
            "target": "",
            "measured": str(max(paced)) if paced else "none",
            "peer": "",
            "note": f"of {', '.join(str(lv.jobs) for lv in levels)} on this machine",
        }
    )
    return table


def main(argv: list[str]) -> int:
    levels = tuple(int(a) for a in argv) or JOBS
    print("jobs  calls/h  call-min/h  CPU-s/call-s  worst p99 lag  vs τ-Voice/call-min")
    for lv in measure(levels):
        per_min = lv.calls_per_hour * (CALL_S / 60.0)
        print(
            f"{lv.jobs:>4}  {lv.calls_per_hour:7.0f}  {per_min:10.0f}  {lv.cpu_per_call_s:12.3f}"
            f"  {_ms(lv.worst_p99_s):>13}  {per_min / (TAU_PER_HOUR * TAU_CALL_MIN):.2f}×"
            + (f"  ({lv.failed} failed)" if lv.failed else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
