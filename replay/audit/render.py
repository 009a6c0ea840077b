"""An audit report as rich tables (for people) or JSON (for machines)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from replay.report.plural import plural
from sessions.safe_files import terminal_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from replay.audit.report import AuditReport, Row

_DIAL_LABELS = {"alpha": "α", "beta": "β", "gamma": "γ"}
_TEXT_COLUMNS = frozenset(
    {"condition", "behaviour", "within", "realized", "baseline", "metric", "call", "source", "span"}
)
FEW = "†"
"""Marks a rate printed as its count (fewer than 10 events, or one conversation)."""


def _table(title: str, columns: Sequence[str]) -> Table:
    """A compact table: numbers right-aligned and never wrapped; text columns wrap."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in columns:
        if name in _TEXT_COLUMNS:
            # print_table stacks the rows when the table does not fit unwrapped.
            table.add_column(name, justify="left", overflow="fold")
        else:
            table.add_column(name, justify="right", no_wrap=True)
    return table


def condition_label(condition: dict[str, Any]) -> str:
    """``{"alpha": 0.25, "policy": "rules"}`` → ``α 0.25 · rules``."""
    parts: list[str] = []
    for k, v in condition.items():
        if v is None:
            continue  # e.g. τ2 trials have no dials
        if k in _DIAL_LABELS:
            parts.append(f"{_DIAL_LABELS[k]} {v:g}" if isinstance(v, int | float) else f"{k}={v}")
        else:
            parts.append(str(v) if k in ("policy", "model", "scenario") else f"{k}={v}")
    return _inert(" · ".join(parts) or "all")


def _inert(text: str) -> str:
    """Text from a file for a rich console: no markup of its own, no control codes."""
    from rich.markup import escape

    return escape(terminal_line(text))


def _num(v: float | None, digits: int = 2) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def _ci(ci: Sequence[float] | None, digits: int = 1) -> str:
    return "—" if ci is None else f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def _gated(row: Row, key: str, digits: int = 1) -> str:
    """An interval, or the count and a † when too few events hide it."""
    why = (row.get("hidden") or {}).get(key)
    if why is None:
        return _ci(row.get(key), digits)
    return f"n={why.split(' ', 1)[0]} {FEW}" if why[0].isdigit() else f"1 conv. {FEW}"


def few_note(rows: Sequence[Row]) -> str | None:
    """The footnote for † when any row hides an interval or a rate."""
    if not any(r.get("hidden") for r in rows):
        return None
    return (
        f"{FEW} fewer than 10 events (the count n is shown) or one conversation: no "
        "interval (τ-Voice hides such rates too; resampling so few gives back the "
        "events themselves, one call a single point)"
    )


def _caption(table: Table, notes: Sequence[str | None]) -> None:
    lines = [n for n in notes if n]
    if table.caption:
        lines.insert(0, str(table.caption))
    if lines:
        table.caption = "\n".join(lines)
        table.caption_justify = "left"


def _p(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.2g}" if v >= 1e-3 else f"{v:.1e}"


def _positions(pos: dict[str, int]) -> str:
    if not pos:
        return "—"
    shown = [f"{k}:{n}" for k, n in list(pos.items())[:6]]
    return " ".join(shown) + (" …" if len(pos) > 6 else "")


def disfluency_table(rows: Sequence[Row]) -> Table:
    table = _table(
        "Disfluency — per 1,000 words; 95% bootstrap intervals over conversations",
        (
            "condition",
            "conv.",
            "turns",
            "words",
            "fill/1k",
            "rep/1k",
            "comb/1k",
            "95% CI",
            "initial share",
            "any",
            "VMR",
        ),
    )
    for r in rows:
        initial = (
            "—"
            if r["initial_share"] is None
            else f"{r['initial_share']:.3f} {_gated(r, 'initial_ci', 2)}"
        )
        vmr = "—" if r["vmr"] is None else f"{r['vmr']:.2f} {_gated(r, 'vmr_ci', 2)}"
        table.add_row(
            condition_label(r["condition"]),
            str(r["conversations"]),
            str(r["turns"]),
            f"{r['words']:,}",
            _num(r["fillers_per_1k"]),
            _num(r["repetitions_per_1k"]),
            _num(r["combined_per_1k"]),
            _gated(r, "combined_ci"),
            initial,
            _pct(r["any_share"]),
            vmr,
        )
    _caption(table, [few_note(rows)])
    return table


def _few_pct(r: Row, hidden: dict[str, str]) -> str:
    """The share of actions at their turn's first opportunity, or its count."""
    if "first_share" not in hidden or not r.get("actions"):
        return _pct(r.get("first_share"))
    return f"{(r.get('positions') or {}).get('1', 0)} of {r['actions']} {FEW}"


def _few_rate(r: Row, hidden: dict[str, str], key: str, events: str) -> str:
    """A pauses-per-minute control, or its count of pauses."""
    if key not in hidden or r.get(events) is None:
        return _num(r.get(key), 1)
    return f"n={r[events]} {FEW}"


def turn_taking_table(rows: Sequence[Row]) -> Table:
    table = _table(
        "Turn-taking — realized per opportunity and per agent turn",
        (
            "condition",
            "behaviour",
            "opportunities",
            "actions",
            "% of opp.",
            "agent turns",
            "per turn",
            "manual",
            "at 1st opp.",
            "lands at (opp. #: n)",
            "pauses/min ²",
            "opening ³",
        ),
    )
    for r in rows:
        hidden = r.get("hidden") or {}
        behaviour = r["behavior"]
        if r.get("mode") == "shadow":
            behaviour = f"{behaviour} (shadow: {r['policy']})"
        if r.get("unit") == "consultation":
            behaviour += " ¹"
        table.add_row(
            condition_label(r["condition"]),
            behaviour,
            f"{r['opportunities']:,}",
            f"{r['actions']:,}",
            f"{r['actions']} of {r['opportunities']} {FEW}"
            if "per_opportunity" in hidden
            else _pct(r["per_opportunity"]),
            f"{r['agent_turns']:,}",
            f"{r['actions']} in {r['agent_turns']} {FEW}"
            if "per_turn" in hidden
            else _num(r["per_turn"], 3),
            str(r.get("manual", "—")),
            _few_pct(r, hidden),
            _positions(r.get("positions") or {}),
            _few_rate(r, hidden, "pauses_per_min_before_action", "pre_action_pauses"),
            _few_rate(r, hidden, "pauses_per_min_opening", "opening_pauses"),
        )
    notes = []
    if any(r.get("unit") == "consultation" for r in rows):
        notes.append("¹ opportunity = a classifier consultation (τ-Voice: every 2.0 s)")
    notes.append(
        "² negative control: mid-turn pauses per minute of agent speech before any action "
        "in the turn (no dial can move it)"
    )
    notes.append(
        "³ the same in every agent turn's first 6 words, where no rule acts at any β or γ "
        "(an early backchannel leaves ² only a turn's opening)"
    )
    if any(r.get("hidden") for r in rows):
        notes.append(
            f"{FEW} fewer than 10 events (opportunities, agent turns, actions, pauses): "
            "the count, not a rate (τ-Voice hides such rates too)"
        )
    table.caption = "\n".join(notes)
    table.caption_justify = "left"
    return table


def trend_table(rows: Sequence[Row]) -> Table:
    table = _table(
        "Trend — Kendall's τ-b, configured strength against the realized value",
        ("within", "dial", "levels", "realized", "n", "τ-b", "p"),
    )
    agents = {r.get("agent") for r in rows}
    for r in rows:
        within = condition_label(r["condition"])
        if len(agents) > 1:
            within += f" · agent {_inert(str(r.get('agent')))}"
        table.add_row(
            within,
            _DIAL_LABELS.get(r["field"], r["field"]),
            ", ".join(f"{v:g}" for v in r["levels"]),
            r["metric"],
            f"{r['n']:,}",
            _num(r["tau_b"], 3),
            _p(r["p"]),
        )
    return table


def paired_table(rows: Sequence[Row]) -> Table:
    keys = sorted({str(r.get("pair_key") or "scenario") for r in rows})
    table = _table(
        f"Paired against the baseline by session ({', '.join(keys)}) — "
        "Wilcoxon signed-rank, two-sided",
        ("condition", "baseline", "metric", "pairs", "nonzero", "mean Δ", "95% CI", "W", "p"),
    )
    notes: list[str] = []
    for r in rows:
        mean = r["mean_diff"]
        p = _p(r["p"])
        if r.get("note"):
            if r["note"] not in notes:
                notes.append(r["note"])
            p += " " + "³⁴⁵⁶⁷⁸⁹"[min(notes.index(r["note"]), 6)]
        if r.get("flag"):
            p += " ⚠"
        pairs = str(r["pairs"]) + (f" (+{r['unpaired']} unpaired)" if r.get("unpaired") else "")
        table.add_row(
            condition_label(r["condition"]),
            condition_label(r["baseline"]),
            r["metric"],
            pairs,
            str(r["nonzero"]),
            "—" if mean is None else f"{mean:+.2f}",
            f"{plural(r['pairs'], 'pair')} {FEW}"
            if (r.get("hidden") or {}).get("ci")
            else _ci(r["ci"], 2),
            _num(r["w"], 1),
            p,
        )
    captions = []
    seeds = {r.get("same_seed") for r in rows}
    if seeds == {True}:
        captions.append("each pair: one session, the same call seed under both conditions")
    elif False in seeds:
        captions.append(
            "pairs share scenario and run but not the call seed (simulate --paired shares it)"
        )
    captions += [f"{'³⁴⁵⁶⁷⁸⁹'[min(i, 6)]} {n}" for i, n in enumerate(notes)]
    if any((r.get("hidden") or {}).get("ci") for r in rows):
        captions.append(f"{FEW} fewer than 10 pairs: no interval of the mean difference")
    captions += [
        f"⚠ {_inert(r['metric'])} is a negative control (no dial can move it) and moved "
        f"(p {_p(r['p'])}, {condition_label(r['condition'])}): likely "
        f"{_inert(r['flag'])}"
        for r in rows
        if r.get("flag")
    ]
    if captions:
        table.caption = "\n".join(captions)
        table.caption_justify = "left"
    return table


def print_table(table: Table, console: Console) -> None:
    """``table`` when it fits the console's width; else stacked, one block per row
    with a line per column, so that no line is wider than the console and no word
    is cut in two."""
    from rich.measure import Measurement
    from rich.text import Text

    unbounded = console.options.update_width(10_000)  # else the minimum is capped
    # Only whole: Rich narrows the widest text column below its longest word when
    # the table must shrink, so a table that cannot be drawn unwrapped is stacked.
    if Measurement.get(console, unbounded, table).maximum <= console.width:
        console.print(table)
        return
    if table.title:
        console.print(Text.from_markup(str(table.title), style="bold"))
    cells = [[_flat(cell) for cell in column.cells] for column in table.columns]
    names = [_flat(column.header) for column in table.columns]
    for row in range(table.row_count):
        console.print(Text.from_markup(cells[0][row], style="bold"), overflow="fold")
        for name, column in zip(names[1:], cells[1:], strict=True):
            line = Text.from_markup(f"  {name}: ", style="dim")
            line.append_text(Text.from_markup(column[row]))
            console.print(line, overflow="fold")
    if table.caption:
        console.print(Text.from_markup(str(table.caption), style="dim"))
    console.print()


def _flat(cell: object) -> str:
    """A cell's markup on one line (a cell may hold a value and its interval)."""
    return " ".join(str(cell).split())


def print_report(report: AuditReport, console: Console) -> None:
    """All tables that have rows, then the warnings."""
    printed = False
    if report.disfluency:
        print_table(disfluency_table(report.disfluency), console)
        printed = True
    if report.by_source:
        from replay.audit.render_notes import by_source_table

        print_table(by_source_table(report.by_source), console)
    if report.turn_taking:
        print_table(turn_taking_table(report.turn_taking), console)
        printed = True
    if report.agent_under_test:
        from replay.report.agent_render import agent_table

        print_table(agent_table(report.agent_under_test), console)
        printed = True
    trends = [r for r in report.tests if r["test"] == "kendall_tau_b"]
    paired = [r for r in report.tests if r["test"] == "wilcoxon"]
    if trends:
        print_table(trend_table(trends), console)
    if paired:
        print_table(paired_table(paired), console)
    from replay.audit.render_notes import print_notes

    printed = print_notes(report, console) or printed
    if not printed:
        console.print("nothing to audit: no user turns and no turn-taking in the input")
    console.print(
        f"[dim]{report.resamples:,} bootstrap resamples, seed {report.seed}; "
        f"conditions by {', '.join(report.by) or 'nothing'}[/dim]"
    )
    for w in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {_inert(w)}", highlight=False)


def report_json(report: AuditReport) -> str:
    """``{"disfluency": [...], "turn_taking": [...], "tests": [...], ...}``."""
    return json.dumps(report.as_json(), ensure_ascii=False, indent=2, allow_nan=False)


__all__ = [
    "condition_label",
    "disfluency_table",
    "paired_table",
    "print_report",
    "report_json",
    "trend_table",
    "turn_taking_table",
]
