"""The audit's tables that keep its condition tables from misleading: disfluency per
source of the caller's text, the calls whose dials changed mid-call (by span), the
calls a paired test left out (and why), and the report's notes. For people; the same
rows are in ``--json``. docs/audit.md says what each note means."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from replay.audit.cells import (
    caption,
    compact_table,
    condition_label,
    few_note,
    gated,
    inert,
    num,
    print_table,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from replay.audit.report import AuditReport, Row

MAX_LISTED = 20
"""Unpaired calls listed by name at most; the rest are counted (all are in --json)."""


_BY_SOURCE_COLUMNS = (
    "condition",
    "source",
    "conv.",
    "turns",
    "words",
    "fill/1k",
    "rep/1k",
    "comb/1k",
    "95% CI",
)


def by_source_table(rows: Sequence[Row]) -> Table:
    table = compact_table(
        "Disfluency by source of the caller's text — per 1,000 words",
        _BY_SOURCE_COLUMNS,
    )
    for r in rows:
        table.add_row(
            condition_label(r["condition"]),
            inert(str(r["source_label"])),
            str(r["conversations"]),
            str(r["turns"]),
            f"{r['words']:,}",
            num(r["fillers_per_1k"]),
            num(r["repetitions_per_1k"]),
            num(r["combined_per_1k"]),
            gated(r, "combined_ci"),
        )
    caption(
        table,
        [
            "compare α within one source: an interruption's turn opens with a scenario "
            "opener, so at the same α a call at β > 0 says other text than one at β 0",
            few_note(rows),
        ],
    )
    return table


def mixed_table(rows: Sequence[Row]) -> Table:
    table = compact_table(
        "Calls whose dials changed mid-call — by span, left out of the condition tables",
        (
            "call",
            "span",
            "from s",
            "to s",
            "agent turns",
            "opportunities",
            "interruptions",
            "backchannels",
            "manual",
            "user turns",
            "words",
            "disfl.",
        ),
    )
    for r in rows:
        for k, span in enumerate(r["spans"]):
            table.add_row(
                inert(str(r["call"])) if k == 0 else "",
                inert(str(span["label"])),
                f"{span['start_t']:.1f}",
                "end" if span["end_t"] is None else f"{span['end_t']:.1f}",
                str(span["agent_turns"]),
                str(span["opportunities"]),
                str(span["interruptions"]),
                str(span["backchannels"]),
                str(span["manual"]),
                str(span["user_turns"]),
                str(span["words"]),
                str(span["disfluencies"]),
            )
    caption(
        table,
        [
            "a call whose dials changed belongs to no single condition: its spans are not "
            "independent sessions (what one dial did shapes what the next one meets), so "
            "they are counted here, with no rate interval and no test"
        ]
        + [f"{inert(str(r['call']))}: {inert(str(r['changes']))}" for r in rows],
    )
    return table


def unpaired_lines(tests: Sequence[Row]) -> list[str]:
    """``call (agent): reason`` for each call a paired test left out, once each."""
    seen: dict[tuple[str, str], str] = {}
    for r in tests:
        for u in r.get("unpaired_calls") or ():
            key = (str(u["call"]), str(u["reason"]))
            seen.setdefault(key, f"{u['call']} ({u['agent']}): {u['reason']}")
    return list(seen.values())


def print_notes(report: AuditReport, console: Console) -> bool:
    """The mixed calls, the unpaired calls and the notes; whether anything printed
    counts as an audit (a mixed call's spans do)."""
    printed = False
    if report.mixed:
        print_table(mixed_table(report.mixed), console)
        printed = True
    lines = unpaired_lines(report.tests)
    if lines:
        console.print("[bold]Unpaired calls[/bold] (left out of the paired tests)")
        for line in lines[:MAX_LISTED]:
            console.print(f"  {inert(line)}", highlight=False)
        if len(lines) > MAX_LISTED:
            console.print(f"  … and {len(lines) - MAX_LISTED} more (all in --json)")
        console.print()
    for note in report.notes:
        console.print(f"[cyan]note:[/cyan] {inert(note)}", highlight=False)
    return printed


__all__ = ["MAX_LISTED", "by_source_table", "mixed_table", "print_notes", "unpaired_lines"]
