"""`cutin simulate`'s closing report: the realized rates per condition (a table or
JSON), the calls whose frame lag makes their timings untrusted, the failures, and the
one summary line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessions.batch import CallSpec, ConditionSummary
    from sessions.batch_run import CallOutcome


def _rate(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _print_table(rows: list[ConditionSummary]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="realized per condition (all scenarios)", title_justify="left")
    for name in ("α", "β", "γ", "calls", "agent turns", "opportunities"):
        table.add_column(name, justify="right")
    table.add_column("interruptions/turn", justify="right")
    table.add_column("backchannels/turn", justify="right")
    for r in rows:
        c = r.condition
        table.add_row(
            f"{c.alpha:g}",
            f"{c.beta:g}",
            f"{c.gamma:g}",
            str(r.calls),
            str(r.agent_turns),
            str(r.opportunities),
            f"{_rate(r.interruptions_per_turn)} ({r.interruptions})",
            f"{_rate(r.backchannels_per_turn)} ({r.backchannels})",
        )
    Console(file=sys.stdout, width=max(100, Console().width)).print(table)


def report(
    outcomes: list[CallOutcome],
    specs: list[CallSpec],
    out_dir: Path,
    *,
    as_json: bool,
    interrupted: bool,
) -> None:
    from sessions.batch import summarize
    from sessions.batch_run import CallStatus

    counts = {s: sum(1 for o in outcomes if o.status is s) for s in CallStatus}
    lagged = [o for o in outcomes if o.tally.lagged and o.status is not CallStatus.FAILED]
    usable = [(o.spec, o.tally) for o in outcomes if o.status is not CallStatus.FAILED]
    # Rows in plan order, so the table reads like the grid that was asked for.
    order = {s.condition: i for i, s in reversed(list(enumerate(specs)))}
    rows = sorted(summarize(usable), key=lambda r: order[r.condition])
    if as_json:
        print(
            json.dumps(
                {
                    "out": str(out_dir),
                    **{str(k): v for k, v in counts.items()},
                    "lagged": [o.spec.stem for o in lagged],
                    "conditions": [r.as_dict() for r in rows],
                }
            )
        )
    elif rows:
        _print_table(rows)
    _report_lagged(lagged)
    for o in [o for o in outcomes if o.status is CallStatus.FAILED][:5]:
        print(f"cutin simulate: failed {o.spec.stem}: {o.message}", file=sys.stderr)
    left = len(specs) - len(outcomes)
    tail = (
        f", {left} not run (interrupted; rerun the same command to resume)" if interrupted else ""
    )
    print(
        f"cutin simulate: {counts[CallStatus.RAN]} calls run, {counts[CallStatus.SKIPPED]} "
        f"skipped, {counts[CallStatus.FAILED]} failed{tail} -> {out_dir}",
        file=sys.stderr,
    )


def _report_lagged(lagged: list[CallOutcome]) -> None:
    """Calls whose frame lag exceeded one frame: flagged, their timings not trusted."""
    if not lagged:
        return
    print(
        f"cutin simulate: {len(lagged)} call(s) lagged (p99 frame lag over one frame, 32 ms): "
        "their timings are not trusted; `cutin audit` leaves them out of latency figures "
        "(--keep-lagged keeps them). Fewer --jobs, or a bigger machine:",
        file=sys.stderr,
    )
    for o in lagged[:5]:
        lag = o.tally.frame_lag
        assert lag is not None
        print(
            f"cutin simulate:   {o.spec.stem}: p99 {lag.p99_s * 1000:.0f} ms, "
            f"max {lag.max_s * 1000:.0f} ms",
            file=sys.stderr,
        )
