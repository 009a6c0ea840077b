"""Does a dial mean the same on any agent? Table 2's sweeps on three agent rhythms,
with and without ``--adapt``.

    .venv/bin/python bench/adapt_table.py [--runs 5] [--jobs 1] [--json]

The rhythms: ``scripts`` (bench/scenarios' scripts as written, on the default text
clock: 165 words per minute, pauses at sentence ends only), ``tau2-voice`` (their
own profile) and ``fast-dense`` (the Pipecat example bot's rate and pause density).
Per rhythm, β at 0.3/0.5/0.7/1.0 (γ = 0) and γ likewise (β = 0), 4 scenarios ×
``--runs`` paired sessions each, scripted caller, text clock. Printed per level: the
realized actions per agent turn on each rhythm, their spread ((max − min) / mean),
the reference (docs/adaptive-rules.md: the paper's Table 2, 0.5 interpolated) and
each rhythm's worst distance from it; per rhythm the 0.3 → 1.0 ratio (reference:
×2.29 for β, ×1.55 for γ).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controls.adapt import reference_rate  # noqa: E402
from sessions.batch.filing import CallStatus  # noqa: E402
from sessions.batch.plan import BatchPlan, conditions, plan_batch  # noqa: E402  # noqa: E402
from sessions.batch.runner.run import run_batch  # noqa: E402
from sessions.batch.tally import summarize  # noqa: E402
from sessions.plan import CallPlan  # noqa: E402
from sessions.scenarios import load_scenario  # noqa: E402
from sessions.scenarios.model import Scenario  # noqa: E402

LEVELS = (0.3, 0.5, 0.7, 1.0)
RHYTHMS = ("scripts", "tau2-voice", "fast-dense")
SCENARIOS = sorted((ROOT / "bench" / "scenarios").glob("*.toml"))


def _scenarios(rhythm: str) -> tuple[dict[str, Scenario], str | None]:
    loaded = [load_scenario(p) for p in SCENARIOS]
    if rhythm == "scripts":
        # The scripts as written: no profile (no extra sentences, the default clock).
        loaded = [
            sc.model_copy(update={"agent": sc.agent.model_copy(update={"profile": None})})
            for sc in loaded
        ]
        return {sc.name: sc for sc in loaded}, None
    return {sc.name: sc for sc in loaded}, rhythm


def sweep(rhythm: str, dial: str, adapt: bool, out: Path, runs: int, jobs: int) -> dict[float, Any]:
    """Per level: actions per agent turn (the swept dial's behaviour)."""
    scenarios, profile = _scenarios(rhythm)
    grid = conditions(
        [0.0], LEVELS if dial == "beta" else [0.0], LEVELS if dial == "gamma" else [0.0]
    )
    specs = plan_batch(list(scenarios), grid, runs=runs, seed=0, batch="adapt", paired=True)
    options = CallPlan(user="scripted", agent_profile=profile, adapt=adapt)
    folder = out / f"{rhythm}-{dial}-{'adapt' if adapt else 'paper'}"
    outcomes = list(run_batch(BatchPlan(specs, scenarios, options, folder, jobs=jobs)))
    failed = [o for o in outcomes if o.status is CallStatus.FAILED]
    if failed:
        raise SystemExit(f"{len(failed)} calls failed, first: {failed[0].message}")
    rows = summarize((o.spec, o.tally) for o in outcomes)
    out_rates: dict[float, Any] = {}
    for row in rows:
        c = row.condition
        level = c.beta if dial == "beta" else c.gamma
        out_rates[level] = (
            row.interruptions_per_turn if dial == "beta" else row.backchannels_per_turn
        )
    return out_rates


def table(rates: dict[tuple[str, str, bool], dict[float, float]]) -> list[dict[str, Any]]:
    rows = []
    for adapt in (False, True):
        for dial in ("beta", "gamma"):
            rule = "interrupt" if dial == "beta" else "backchannel"
            for level in LEVELS:
                per = {r: rates[(r, dial, adapt)][level] for r in RHYTHMS}
                ref = reference_rate(rule, level)
                mean = sum(per.values()) / len(per)
                rows.append(
                    {
                        "adapt": adapt,
                        "dial": dial,
                        "level": level,
                        "per_turn": per,
                        "spread": (max(per.values()) - min(per.values())) / mean if mean else None,
                        "reference": ref,
                        "worst_vs_reference": max(abs(v - ref) / ref for v in per.values()),
                    }
                )
    return rows


def print_table(rows: list[dict[str, Any]], rates: dict[tuple[str, str, bool], Any]) -> None:
    head = f"{'':<7}{'level':<10}" + "".join(f"{r:>12}" for r in RHYTHMS)
    head += f"{'spread':>9}{'reference':>11}{'worst':>8}"
    for adapt in (False, True):
        print(f"\n{'--adapt' if adapt else 'paper constants (no --adapt)'}")
        print(head)
        for r in rows:
            if r["adapt"] != adapt:
                continue
            sym = "β" if r["dial"] == "beta" else "γ"
            print(
                f"{'':<7}{sym + ' = ' + format(r['level'], 'g'):<10}"
                + "".join(f"{r['per_turn'][k]:>12.3f}" for k in RHYTHMS)
                + f"{100 * (r['spread'] or 0):>8.0f}%{r['reference']:>11.3f}"
                + f"{100 * r['worst_vs_reference']:>7.0f}%"
            )
        for dial, rule in (("beta", "interrupt"), ("gamma", "backchannel")):
            sym = "β" if dial == "beta" else "γ"
            ratios = []
            for k in RHYTHMS:
                lo, hi = rates[(k, dial, adapt)][0.3], rates[(k, dial, adapt)][1.0]
                ratios.append(f"{k} ×{hi / lo:.2f}" if lo else f"{k} —")
            ref = reference_rate(rule, 1.0) / reference_rate(rule, 0.3)
            print(f"       {sym} 0.3 → 1.0: " + ", ".join(ratios) + f" (reference ×{ref:.2f})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--runs",
        type=int,
        default=5,
        help="runs per scenario (4 scenarios); docs/adaptive-rules.md quotes --runs 20",
    )
    ap.add_argument("--jobs", type=int, default=1, help="calls in parallel processes")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    rates: dict[tuple[str, str, bool], dict[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="cutin-adapt-") as tmp:
        for rhythm in RHYTHMS:
            for dial in ("beta", "gamma"):
                for adapt in (False, True):
                    rates[(rhythm, dial, adapt)] = sweep(
                        rhythm, dial, adapt, Path(tmp), args.runs, args.jobs
                    )
    rows = table(rates)
    if args.json:
        print(json.dumps({"rows": rows, "wall_s": time.perf_counter() - start}, indent=1))
    else:
        print_table(rows, rates)
        print("\nspread: (max − min) / mean over the rhythms; worst: the rhythm furthest from")
        print(f"the reference, relative; wall time {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
