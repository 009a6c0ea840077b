"""Many real-time calls at once (``cutin simulate --jobs N``): what one process paces.

The far end is ``examples/known_agent.py`` (pre-rendered speech, an energy ear: nearly
no CPU, in its own process, not counted), so what is measured is cutin's own cost, in
three shapes (``--agent``; the share of the call each spent talking is printed: ``talk``):

- ``light``: the known agent as it is (it greets, answers each caller line after
  0.8 s, yields 0.3 s into a barge-in): it talks about half the call;
- ``typical``: the same agent answering after 0.4 s, so it talks as much as τ-Voice's
  agents do: about 68% of the call, where the three τ-Voice simulations in
  ``tests/fixtures/tau2/voice_full_duplex`` have their agent talking 56%, 69% and 72%
  of the time (67.5% pooled; :func:`tau_voice_talk`, printed at the start);
- ``talkative``: an upper bound: it answers after 0.2 s, talks into any 0.3 s pause and
  never yields, so its long reply runs over the caller's turns (93% of the call).

For each N in ``JOBS`` and each ``--transcribe`` mode (``live``, ``end``, ``off``:
``cutin simulate --transcribe``), N calls of ``CALL_S`` seconds run at once in this
process through :func:`sessions.batch.runner.run.run_batch` (one pump, one event loop
for every line, shared VAD/STT models), after the models are loaded. Measured per run:

- calls per hour: N calls over the batch's wall time (dialling and filing included);
- CPU-seconds per call-second: this process's CPU (every thread) and its children's
  (espeak-ng) over the calls' summed seconds; and where it went, per thread
  (``/proc/self/task``): the pump, the line loop, speech-to-text, the rest;
- every call's p99 frame lag (from its ``end`` event), the worst, and whether every
  call stayed under one frame (32 ms).

Then, per agent and mode, the largest N whose calls all stayed under one frame, and the
comparison with τ-Voice's 272.7 simulations per hour per process, per call-minute.

    .venv/bin/python bench/run.py jobs                  # the table (long: see bench/README)
    .venv/bin/python bench/bench_jobs.py 1 4            # these N, light agent, live
    .venv/bin/python bench/bench_jobs.py --agent talkative --transcribe live,off 12 16
    .venv/bin/python bench/bench_jobs.py --agent all --repeat 5 12    # medians of 5 runs

One run of a row moves by ±0.015 CPU-s per call-second or more (Whisper's decoder is
bound by memory bandwidth, which the machine's other tenants share): quote medians.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

JOBS = (1, 4, 8, 12, 16, 20)
CALL_S = 25.0
FRAME_S = 0.032
MODES = ("live", "end", "off")
AGENTS: dict[str, tuple[str, ...]] = {
    "light": (),
    "typical": ("--answer-after-ms", "400"),
    "talkative": (
        "--answer-after-ms", "200", "--talk-into-pauses-after-ms", "300", "--never-yield",
    ),
}  # fmt: skip
TAU_PER_HOUR = 272.7
"""τ-Voice: simulations per hour from one process (10 concurrent simulations)."""
TAU_CALL_MIN = 1.0
"""Minutes of conversation per τ-Voice simulation assumed for the per-minute comparison
(their voice simulations are on the order of a minute; an assumption, said in the note)."""
TICK = os.sysconf("SC_CLK_TCK")
TAU_VOICE_RUNS = REPO_ROOT / "tests" / "fixtures" / "tau2" / "voice_full_duplex" / "simulations"


def tau_voice_talk(folder: Path = TAU_VOICE_RUNS) -> list[float]:
    """The share of each τ-Voice simulation's ticks in which its agent speaks, as cutin's
    τ2 import reads a tick (:func:`replay.tau2.ticks.timeline_from_tau2`): how much a
    real agent talks."""
    import json

    from replay.tau2.ticks import DEFAULT_TICK_S, timeline_from_tau2

    shares = []
    for path in sorted(folder.glob("*.json")):
        ticks = json.loads(path.read_text(encoding="utf-8")).get("ticks") or []
        agent = timeline_from_tau2(ticks, DEFAULT_TICK_S).agent_speech
        if agent:
            shares.append(sum(agent) / len(agent))
    return shares


class ThreadCpu:
    """CPU seconds per thread name while it runs (sampled from ``/proc/self/task``
    every ``every_s``; a thread's last sample counts, so a short-lived one may be
    missed: those land in ``other``)."""

    def __init__(self, every_s: float = 0.5) -> None:
        self.every_s = every_s
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._names: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-cpu", daemon=True)

    @staticmethod
    def _cpu(tid: int) -> float | None:
        try:
            with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime

    def _sample(self) -> None:
        named = {t.native_id: t.name for t in threading.enumerate() if t.native_id}
        try:
            tids = [int(x) for x in os.listdir("/proc/self/task")]
        except OSError:
            return
        for tid in tids:
            cpu = self._cpu(tid)
            if cpu is None:
                continue
            self._first.setdefault(tid, cpu)
            self._last[tid] = cpu
            if tid not in self._names:
                self._names[tid] = named.get(tid, "native")

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self._sample()

    def __enter__(self) -> ThreadCpu:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def by_group(self) -> dict[str, float]:
        out: dict[str, float] = defaultdict(float)
        for tid, last in self._last.items():
            out[_group(self._names.get(tid, "native"))] += last - self._first[tid]
        return dict(out)


def _group(name: str) -> str:
    if name == "cutin-pump":
        return "pump"
    if name == "cutin-lines" or name.endswith(("-reader", "-writer")):
        return "lines"
    if "stt" in name.lower() or "transcri" in name.lower() or "ears" in name.lower():
        return "stt"
    if name == "native":
        return "native"  # threads Python did not start: ONNX, CTranslate2, BLAS
    return "other"


@dataclass
class Level:
    agent: str
    mode: str
    jobs: int
    calls: int
    wall_s: float
    cpu_s: float
    call_s: float
    lag_p99_s: list[float]
    failed: int
    talk_s: float = 0.0
    """Seconds the agent spent talking (its truth's ``speak`` events), all calls."""
    threads: dict[str, float] = field(default_factory=dict)

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
        return (
            not self.failed
            and len(self.lag_p99_s) == self.calls
            and all(x < FRAME_S for x in self.lag_p99_s)
        )

    @property
    def talk_share(self) -> float:
        return self.talk_s / self.call_s if self.call_s else float("nan")


def _warm() -> None:
    """Load the shared models once, so no level pays for them."""
    from sessions.speech.shared import shared_transcriber
    from sessions.speech.vad import load_vad

    load_vad("onnx")
    shared_transcriber(None, cpu_threads=1)


def _cpu_now() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # espeak-ng; not the agent (alive)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_level(url: str, agent: str, mode: str, jobs: int, out: Path) -> Level:
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
    options = CallPlan(
        user="scripted", agent=url, speech="espeak", max_seconds=CALL_S, transcribe=mode
    )
    plan = BatchPlan(specs, {scenario.name: scenario}, options, out, jobs=jobs)
    with ThreadCpu() as threads:
        cpu0, wall0 = _cpu_now(), time.monotonic()
        outcomes = list(run_batch(plan))
        wall, cpu = time.monotonic() - wall0, _cpu_now() - cpu0
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
    return Level(
        agent, mode, jobs, len(outcomes), wall, cpu, call_s, lags, failed,
        threads=threads.by_group(),
    )  # fmt: skip


def measure(
    levels: tuple[int, ...] = JOBS,
    agents: tuple[str, ...] = tuple(AGENTS),
    modes: tuple[str, ...] = ("live",),
    repeat: int = 1,
) -> list[Level]:
    """Every (agent, mode, N) ``repeat`` times; the rounds run one after the other, so
    a slow minute of the machine lands on one run of each row, not on all runs of one."""
    from tests.support.known_agent import running_known_agent

    out: list[Level] = []
    _warm()
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(repeat):
            for agent in agents:
                with running_known_agent(*AGENTS[agent]) as far:
                    for mode in modes:
                        for jobs in levels:
                            before = len(far.truth())
                            where = Path(tmp) / f"{agent}-{mode}-{jobs}-{round_}"
                            lv = run_level(f"twilio:{far.url}", agent, mode, jobs, where)
                            lv.talk_s = talk_seconds(far.truth()[before:])
                            out.append(lv)
                            print("… " + _line(lv), file=sys.stderr, flush=True)
    return out


def medians(levels: list[Level]) -> list[str]:
    """One line per (agent, mode, N) measured more than once: the median CPU-s per
    call-second and its range, the worst p99 lag of any run, and how many runs paced."""
    groups: dict[tuple[str, str, int], list[Level]] = defaultdict(list)
    for lv in levels:
        groups[(lv.agent, lv.mode, lv.jobs)].append(lv)
    out = []
    for (agent, mode, jobs), runs in groups.items():
        if len(runs) < 2:
            continue
        cpu = sorted(lv.cpu_per_call_s for lv in runs)
        median = statistics.median(cpu)
        worst = max(lv.worst_p99_s for lv in runs)
        paced = sum(lv.paced for lv in runs)
        talk = statistics.median(lv.talk_share for lv in runs)
        out.append(
            f"{agent:<10} {mode:<10} {jobs:>5}  median {median:.3f} CPU-s/call-s "
            f"(range {cpu[0]:.3f}-{cpu[-1]:.3f}, {len(runs)} runs)  worst p99 {_ms(worst)}  "
            f"paced {paced}/{len(runs)}  talk {talk:.0%}"
        )
    return out


def talk_seconds(records: list[dict[str, Any]]) -> float:
    """Seconds the known agent spent talking, from its truth: each ``speak`` runs its
    ``duration_s``, cut by its next ``stop`` or ``speak`` and by the call's end."""
    calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        calls[int(r.get("call", 0))].append(r)
    total = 0.0
    for rs in calls.values():
        rs.sort(key=lambda r: float(r["t"]))
        for i, r in enumerate(rs):
            if r["event"] != "speak":
                continue
            start = float(r["t"])
            end = min(start + float(r.get("duration_s", 0.0)), CALL_S)
            for later in rs[i + 1 :]:
                if later["event"] in ("stop", "speak"):
                    end = min(end, float(later["t"]))
                    break
            total += max(0.0, end - start)
    return total


def _ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


HEADER = (
    "agent      transcribe  jobs  calls/h  CPU-s/call-s  (pump lines stt native other)"
    "  worst p99 lag  paced  talk  vs τ-Voice/call-min"
)


def _line(lv: Level) -> str:
    per_min = lv.calls_per_hour * (CALL_S / 60.0)
    share = " ".join(
        f"{lv.threads.get(k, 0.0) / lv.call_s:.3f}" if lv.call_s else "-"
        for k in ("pump", "lines", "stt", "native", "other")
    )
    return (
        f"{lv.agent:<10} {lv.mode:<10} {lv.jobs:>5}  {lv.calls_per_hour:7.0f}  "
        f"{lv.cpu_per_call_s:12.3f}  ({share})  {_ms(lv.worst_p99_s):>13}  "
        f"{'yes' if lv.paced else 'NO':>5}  {lv.talk_share:4.0%}  "
        f"{per_min / (TAU_PER_HOUR * TAU_CALL_MIN):.2f}×"
        + (f"  ({lv.failed} failed)" if lv.failed else "")
    )


def largest_paced(levels: list[Level]) -> dict[tuple[str, str], int | None]:
    """Per (agent, mode): the largest N whose calls all stayed under one frame (and
    every smaller N measured did too)."""
    out: dict[tuple[str, str], int | None] = {}
    for key in dict.fromkeys((lv.agent, lv.mode) for lv in levels):
        best: int | None = None
        for lv in sorted((x for x in levels if (x.agent, x.mode) == key), key=lambda x: x.jobs):
            if not lv.paced:
                break
            best = lv.jobs
        out[key] = best
    return out


def rows() -> list[dict[str, Any]]:
    levels = measure()
    table: list[dict[str, Any]] = []
    for lv in levels:
        per_min = lv.calls_per_hour * (CALL_S / 60.0)
        table.append(
            {
                "budget": f"--jobs {lv.jobs} on a line ({CALL_S:.0f} s calls, {lv.agent} far"
                f" end, --transcribe {lv.mode})",
                "target": "every call's frame lag p99 < 32 ms; ≤ 0.10 CPU-s per call-s",
                "measured": (
                    f"{lv.calls_per_hour:.0f} calls/h ({per_min:.0f} call-min/h), "
                    f"{lv.cpu_per_call_s:.3f} CPU-s per call-s, worst lag p99 "
                    f"{_ms(lv.worst_p99_s)}, agent talking {lv.talk_share:.0%}"
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
    for (agent, mode), best in largest_paced(levels).items():
        table.append(
            {
                "budget": f"largest --jobs whose calls all stay under one frame ({agent},"
                f" --transcribe {mode})",
                "target": "≥ 12",
                "measured": str(best) if best else "none",
                "peer": "",
                "note": f"of {', '.join(str(n) for n in JOBS)} on this machine",
            }
        )
    return table


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jobs", nargs="*", type=int, help=f"calls at once (default {JOBS})")
    ap.add_argument("--agent", default="light", help="light | typical | talkative | all")
    ap.add_argument("--transcribe", default="live", help="modes, comma-separated: live,end,off")
    ap.add_argument(
        "--repeat", type=int, default=1, help="run every row this many times; print medians"
    )
    args = ap.parse_args(argv)
    agents = tuple(AGENTS) if args.agent == "all" else (args.agent,)
    modes = tuple(args.transcribe.split(","))
    if any(a not in AGENTS for a in agents) or any(m not in MODES for m in modes):
        ap.error("--agent light|typical|talkative|all; --transcribe of live,end,off")
    if any(n < 1 or n > 64 for n in args.jobs):
        ap.error("jobs from 1 to 64")
    if not 1 <= args.repeat <= 20:
        ap.error("--repeat from 1 to 20")
    shares = ", ".join(f"{x:.0%}" for x in tau_voice_talk())
    print(f"τ-Voice's agents talk {shares} of their calls (tests/fixtures/tau2)")
    print(HEADER)
    levels = measure(tuple(args.jobs) or JOBS, agents, modes, args.repeat)
    for lv in levels:
        print(_line(lv))
    for line in medians(levels):
        print(line)
    for (agent, mode), best in largest_paced(levels).items():
        print(f"largest N paced ({agent}, {mode}): {best if best else 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
