"""`cutin simulate`'s closing report: the realized rates per condition (a table or
JSON), the calls whose frame lag makes their timings untrusted, the failures, and the
one summary line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from replay.plural import plural

if TYPE_CHECKING:
    from sessions.batch.filing import CallOutcome
    from sessions.batch.plan import CallSpec
    from sessions.batch.tally import ConditionSummary


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
    out_dir: Path | None,
    *,
    as_json: bool,
    interrupted: bool,
    on_ray: bool = False,
    told: frozenset[str] | set[str] = frozenset(),
) -> None:
    """The closing report. ``out_dir`` None: nothing was written (the folder this run
    made was removed); ``told``: the failed calls whose reason the progress already
    printed (not repeated here)."""
    from sessions.batch.call import INTERRUPTED
    from sessions.batch.filing import CallStatus
    from sessions.batch.tally import summarize

    counts = {s: sum(1 for o in outcomes if o.status is s) for s in CallStatus}
    failed = [o for o in outcomes if o.status is CallStatus.FAILED]
    stopped = sum(1 for o in failed if o.message == INTERRUPTED)
    lagged = [o for o in outcomes if o.tally.lagged and o.status is not CallStatus.FAILED]
    usable = [(o.spec, o.tally) for o in outcomes if o.status is not CallStatus.FAILED]
    # Rows in plan order, so the table reads like the grid that was asked for.
    order = {s.condition: i for i, s in reversed(list(enumerate(specs)))}
    rows = sorted(summarize(usable), key=lambda r: order[r.condition])
    if as_json:
        print(
            json.dumps(
                {
                    "out": str(out_dir) if out_dir is not None else None,
                    **{str(k): v for k, v in counts.items()},
                    "interrupted": stopped,
                    "not_run": len(specs) - len(outcomes),
                    "lagged": [o.spec.stem for o in lagged],
                    "lagged_no_responses": sum(o.tally.no_responses for o in lagged),
                    "conditions": [r.as_dict() for r in rows],
                }
            )
        )
    elif rows:
        _print_table(rows)
    _report_lagged(lagged, on_ray=on_ray)
    untold = [o for o in failed if o.spec.stem not in told and o.message != INTERRUPTED]
    for o in untold[:5]:
        print(f"cutin simulate: failed {o.spec.stem}: {_line(o.message)}", file=sys.stderr)
    if len(untold) > 5:
        print(
            f"cutin simulate: … and {plural(len(untold) - 5, 'more failed call')} "
            "(each kept as <stem>.jsonl.failed when it has a log)",
            file=sys.stderr,
        )
    left = len(specs) - len(outcomes)
    tail = ""
    if interrupted:
        cut = f", {stopped} hung up mid-call (kept as .failed)" if stopped else ""
        tail = f"{cut}, {left} not run (interrupted; rerun the same command to resume)"
    where = f"-> {out_dir}" if out_dir is not None else "(nothing written: no folder kept)"
    print(
        f"cutin simulate: {plural(counts[CallStatus.RAN], 'call')} run, "
        f"{counts[CallStatus.SKIPPED]} skipped, {counts[CallStatus.FAILED] - stopped} failed"
        f"{tail} {where}",
        file=sys.stderr,
    )


def _line(text: str) -> str:
    from sessions.hostile.inert_text import terminal_line

    return terminal_line(text)


def _report_lagged(lagged: list[CallOutcome], *, on_ray: bool) -> None:
    """Calls whose frame lag exceeded one frame: flagged, their timings not trusted; a
    no_response in one may be this machine's lag, not the agent's silence."""
    if not lagged:
        return
    remedy = (
        "A larger --ray-cpus-per-call (fewer calls per node) or more Ray nodes"
        if on_ray
        else "Fewer --jobs, or a bigger machine"
    )
    many = len(lagged) != 1
    print(
        f"cutin simulate: {plural(len(lagged), 'call')} lagged (p99 frame lag over one frame, "
        f"32 ms): {'their' if many else 'its'} timings are not trusted, and a no_response "
        f"in {'them' if many else 'it'} may be this machine falling behind, not the agent; "
        "`cutin audit` leaves lagged calls out of the agent's figures (--keep-lagged keeps "
        f"them). {remedy}:",
        file=sys.stderr,
    )
    for o in lagged[:5]:
        lag = o.tally.frame_lag
        assert lag is not None
        missed = o.tally.no_responses
        flag = f", {plural(missed, 'no_response')} set aside" if missed else ""
        print(
            f"cutin simulate:   {o.spec.stem}: p99 {lag.p99_s * 1000:.0f} ms, "
            f"max {lag.max_s * 1000:.0f} ms{flag}",
            file=sys.stderr,
        )
