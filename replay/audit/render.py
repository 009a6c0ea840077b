"""An audit report as rich tables (for people) or JSON (for machines)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from replay.audit.cells import (
    DIAL_LABELS,
    FEW,
    caption,
    ci_text,
    compact_table,
    condition_label,
    few_note,
    gated,
    inert,
    num,
    p_value,
    pct,
    print_table,
)
from replay.audit.render_agent import agent_table
from replay.audit.render_notes import by_source_table, print_notes
from replay.plural import plural

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from replay.audit.report import AuditReport, Row


def _positions(pos: dict[str, int]) -> str:
    if not pos:
        return "—"
    shown = [f"{k}:{n}" for k, n in list(pos.items())[:6]]
    return " ".join(shown) + (" …" if len(pos) > 6 else "")


def disfluency_table(rows: Sequence[Row]) -> Table:
    table = compact_table(
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
            else f"{r['initial_share']:.3f} {gated(r, 'initial_ci', 2)}"
        )
        vmr = "—" if r["vmr"] is None else f"{r['vmr']:.2f} {gated(r, 'vmr_ci', 2)}"
        table.add_row(
            condition_label(r["condition"]),
            str(r["conversations"]),
            str(r["turns"]),
            f"{r['words']:,}",
            num(r["fillers_per_1k"]),
            num(r["repetitions_per_1k"]),
            num(r["combined_per_1k"]),
            gated(r, "combined_ci"),
            initial,
            pct(r["any_share"]),
            vmr,
        )
    caption(table, [few_note(rows)])
    return table


def _few_pct(r: Row, hidden: dict[str, str]) -> str:
    """The share of actions at their turn's first opportunity, or its count."""
    if "first_share" not in hidden or not r.get("actions"):
        return pct(r.get("first_share"))
    return f"{(r.get('positions') or {}).get('1', 0)} of {r['actions']} {FEW}"


def _few_rate(r: Row, hidden: dict[str, str], key: str, events: str) -> str:
    """A pauses-per-minute control, or its count of pauses."""
    if key not in hidden or r.get(events) is None:
        return num(r.get(key), 1)
    return f"n={r[events]} {FEW}"


def turn_taking_table(rows: Sequence[Row]) -> Table:
    table = compact_table(
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
            else pct(r["per_opportunity"]),
            f"{r['agent_turns']:,}",
            f"{r['actions']} in {r['agent_turns']} {FEW}"
            if "per_turn" in hidden
            else num(r["per_turn"], 3),
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
    table = compact_table(
        "Trend — Kendall's τ-b, configured strength against the realized value",
        ("within", "dial", "levels", "realized", "n", "τ-b", "p"),
    )
    agents = {r.get("agent") for r in rows}
    for r in rows:
        within = condition_label(r["condition"])
        if len(agents) > 1:
            within += f" · agent {inert(str(r.get('agent')))}"
        table.add_row(
            within,
            DIAL_LABELS.get(r["field"], r["field"]),
            ", ".join(f"{v:g}" for v in r["levels"]),
            r["metric"],
            f"{r['n']:,}",
            num(r["tau_b"], 3),
            p_value(r["p"]),
        )
    return table


def paired_table(rows: Sequence[Row]) -> Table:
    keys = sorted({str(r.get("pair_key") or "scenario") for r in rows})
    table = compact_table(
        f"Paired against the baseline by session ({', '.join(keys)}) — "
        "Wilcoxon signed-rank, two-sided",
        ("condition", "baseline", "metric", "pairs", "nonzero", "mean Δ", "95% CI", "W", "p"),
    )
    notes: list[str] = []
    for r in rows:
        mean = r["mean_diff"]
        p = p_value(r["p"])
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
            else ci_text(r["ci"], 2),
            num(r["w"], 1),
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
        f"⚠ {inert(r['metric'])} is a negative control (no dial can move it) and moved "
        f"(p {p_value(r['p'])}, {condition_label(r['condition'])}): likely "
        f"{inert(r['flag'])}"
        for r in rows
        if r.get("flag")
    ]
    if captions:
        table.caption = "\n".join(captions)
        table.caption_justify = "left"
    return table


def print_report(report: AuditReport, console: Console) -> None:
    """All tables that have rows, then the warnings."""
    printed = False
    if report.disfluency:
        print_table(disfluency_table(report.disfluency), console)
        printed = True
    if report.by_source:
        print_table(by_source_table(report.by_source), console)
    if report.turn_taking:
        print_table(turn_taking_table(report.turn_taking), console)
        printed = True
    if report.agent_under_test:
        print_table(agent_table(report.agent_under_test), console)
        printed = True
    trends = [r for r in report.tests if r["test"] == "kendall_tau_b"]
    paired = [r for r in report.tests if r["test"] == "wilcoxon"]
    if trends:
        print_table(trend_table(trends), console)
    if paired:
        print_table(paired_table(paired), console)
    printed = print_notes(report, console) or printed
    if not printed:
        console.print("nothing to audit: no user turns and no turn-taking in the input")
    console.print(
        f"[dim]{report.resamples:,} bootstrap resamples, seed {report.seed}; "
        f"conditions by {', '.join(report.by) or 'nothing'}[/dim]"
    )
    for w in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {inert(w)}", highlight=False)


def report_json(report: AuditReport) -> str:
    """``{"disfluency": [...], "turn_taking": [...], "tests": [...], ...}``."""
    return json.dumps(report.as_json(), ensure_ascii=False, indent=2, allow_nan=False)


__all__ = [
    "disfluency_table",
    "paired_table",
    "print_report",
    "report_json",
    "trend_table",
    "turn_taking_table",
]
