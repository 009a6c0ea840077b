"""Reproduce the shape of the paper's Table 2: realized interruption and backchannel
rates at β (γ = 0) and γ (β = 0) of 0, 0.3, 0.5, 0.7 and 1.0, 20 paired sessions each.

    .venv/bin/python bench/table2.py [--runs 5] [--jobs 2] [--out DIR] [--json]

The sessions are the four scenarios of ``bench/scenarios/`` (agent profile
``tau2-voice``: turn lengths, speaking rate and pauses drawn from distributions
measured on τ2-bench agents) × ``--runs`` runs, planned ``--paired`` (one call seed
per session, shared by every condition), on the text clock with the scripted
caller. The rows are ``cutin audit``'s, the tests its Wilcoxon signed-rank tests
against the dial at 0, paired by session. Beside each row: the paper's number.
Also printed: the simulated agent turns' median length in seconds (τ2-bench's
agents: 8.6 s; the paper's agent: 7.9 s) and the wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replay.audit.load import load_conversations  # noqa: E402
from replay.audit.report import NEGATIVE_CONTROL, OPENING_CONTROL, build_report  # noqa: E402
from sessions.batch.filing import CallStatus  # noqa: E402
from sessions.batch.plan import BatchPlan, conditions, plan_batch  # noqa: E402  # noqa: E402
from sessions.batch.runner.run import run_batch  # noqa: E402
from sessions.log import read_session  # noqa: E402
from sessions.log.models import AgentTurnEnd, AgentTurnStart  # noqa: E402
from sessions.plan import CallPlan  # noqa: E402
from sessions.scenarios import load_scenario  # noqa: E402

LEVELS = (0.0, 0.3, 0.5, 0.7, 1.0)
SCENARIOS = sorted((ROOT / "bench" / "scenarios").glob("*.toml"))
# The paper's Table 2 (20 paired scenarios per condition): opportunities, actions, turns.
PAPER: dict[tuple[str, float], tuple[int, int, int]] = {
    ("beta", 0.0): (230, 0, 118),
    ("beta", 0.3): (244, 36, 153),
    ("beta", 0.7): (246, 44, 153),
    ("beta", 1.0): (194, 57, 106),
    ("gamma", 0.0): (182, 0, 118),
    ("gamma", 0.3): (188, 78, 143),
    ("gamma", 0.7): (214, 94, 154),
    ("gamma", 1.0): (187, 103, 122),
}


def sweep(dial: str, out: Path, runs: int, jobs: int) -> tuple[list[Any], int]:
    """Run one sweep (the other dial at 0); the conversations and the failed calls."""
    scenarios = {sc.name: sc for sc in (load_scenario(p) for p in SCENARIOS)}
    grid = conditions(
        [0.0],
        LEVELS if dial == "beta" else [0.0],
        LEVELS if dial == "gamma" else [0.0],
    )
    specs = plan_batch(
        list(scenarios), grid, runs=runs, seed=0, batch=f"table2-{dial}", paired=True
    )
    folder = out / dial
    outcomes = list(
        run_batch(BatchPlan(specs, scenarios, CallPlan(user="scripted"), folder, jobs=jobs))
    )
    failed = sum(1 for o in outcomes if o.status is CallStatus.FAILED)
    convs, _ = load_conversations([folder])
    return convs, failed


def turn_seconds(paths: list[Path]) -> list[float]:
    """Each agent turn's length on the call clock (onset to its end, or to the cut)."""
    out: list[float] = []
    for path in paths:
        starts: dict[int, float] = {}
        for e in read_session(path).events:
            if isinstance(e, AgentTurnStart):
                starts[e.turn] = e.t
            elif isinstance(e, AgentTurnEnd) and e.turn in starts:
                out.append((e.cut_t if e.cut_t is not None else e.t) - starts[e.turn])
    return out


def rows_for(dial: str, convs: list[Any]) -> list[dict[str, Any]]:
    report = build_report(convs, [dial])
    behaviour = "interruption" if dial == "beta" else "backchannel"
    metric = "interruptions" if dial == "beta" else "backchannels"
    tests = {
        (t["metric"], t["condition"][dial]): t for t in report.tests if t["test"] == "wilcoxon"
    }
    out = []
    for r in report.turn_taking:
        if r["behavior"] != behaviour or r["mode"] != "auto":
            continue
        level = float(r["condition"][dial])
        test = tests.get((metric, level), {})
        control = tests.get((NEGATIVE_CONTROL, level), {})
        opening = tests.get((OPENING_CONTROL, level), {})
        paper = PAPER.get((dial, level))
        out.append(
            {
                "dial": dial,
                "level": level,
                "opportunities": r["opportunities"],
                "actions": r["actions"],
                "per_opportunity": r["per_opportunity"],
                "agent_turns": r["agent_turns"],
                "per_turn": r["per_turn"],
                "pairs": test.get("pairs"),
                "p": test.get("p"),
                "control_per_min": r[NEGATIVE_CONTROL],
                "control_p": control.get("p"),
                "opening_per_min": r.get(OPENING_CONTROL),
                "opening_p": opening.get("p"),
                "pause_events": r["pause_events"],
                "paper": None
                if paper is None
                else {
                    "opportunities": paper[0],
                    "actions": paper[1],
                    "per_opportunity": paper[1] / paper[0],
                    "agent_turns": paper[2],
                    "per_turn": paper[1] / paper[2],
                },
            }
        )
    return out


def _fmt_p(p: float | None) -> str:
    return "—" if p is None else (f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}")


def print_table(rows: list[dict[str, Any]], seconds: list[float], wall: float) -> None:
    head = (
        f"{'setting':<9}{'opp.':>6}{'acts':>6}{'% opp.':>8}{'turns':>7}{'/turn':>7}"
        f"{'pairs':>7}{'p':>9}   {'ctrl/min':>8}{'ctrl p':>8}{'open/min':>9}{'open p':>8}"
        f"{'pauses':>8}   paper (% opp., /turn)"
    )
    print(head)
    for r in rows:
        sym = "β" if r["dial"] == "beta" else "γ"
        paper = r["paper"]
        ref = (
            "—"
            if paper is None
            else f"{100 * paper['per_opportunity']:.1f}%, {paper['per_turn']:.3f}"
        )
        ctrl_p = "—" if r["level"] == 0 else _fmt_p(r["control_p"])
        open_p = "—" if r["level"] == 0 else _fmt_p(r["opening_p"])
        print(
            f"{sym} = {r['level']:<5g}{r['opportunities']:>6}{r['actions']:>6}"
            f"{100 * (r['per_opportunity'] or 0):>7.1f}%{r['agent_turns']:>7}"
            f"{r['per_turn'] or 0:>7.3f}{r['pairs'] or '—':>7}{_fmt_p(r['p']):>9}   "
            f"{r['control_per_min'] or 0:>8.1f}{ctrl_p:>8}"
            f"{r['opening_per_min'] or 0:>9.1f}{open_p:>8}{r['pause_events'] or 0:>8}   {ref}"
        )
    median = statistics.median(seconds) if seconds else float("nan")
    print(
        f"\nagent turns at β = γ = 0: median {median:.1f} s (τ2-bench agents 8.6 s, the paper's "
        f"agent 7.9 s); p: Wilcoxon signed-rank vs the dial at 0, paired by session; "
        f"ctrl: pauses per minute of agent speech before any action; open: the same in every "
        f"turn's first 6 words, where no rule acts; wall time {wall:.1f} s"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--runs", type=int, default=5, help="runs per scenario (4 scenarios: 20 sessions)"
    )
    ap.add_argument("--jobs", type=int, default=1, help="calls in parallel processes")
    ap.add_argument("--out", type=Path, help="keep the logs here (default: a temporary folder)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cutin-table2-") as tmp:
        out = args.out or Path(tmp)
        rows: list[dict[str, Any]] = []
        failed = 0
        for dial in ("beta", "gamma"):
            convs, bad = sweep(dial, out, args.runs, args.jobs)
            failed += bad
            rows.extend(rows_for(dial, convs))
        seconds = turn_seconds(sorted((out / "beta").glob("*__a0_b0_g0__*.jsonl")))
        wall = time.perf_counter() - start
        if args.json:
            print(json.dumps({"rows": rows, "failed": failed, "wall_s": wall}, indent=1))
        else:
            print_table(rows, seconds, wall)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
