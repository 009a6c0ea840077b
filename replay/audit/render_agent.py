"""The audit's "Agent under test" table (rich): the black-box agent's measures
(:mod:`replay.audit.agent_measures`) pooled per condition. A call's own section of
``cutin report`` is :mod:`replay.report.agent_render`; both read their cells from
:mod:`replay.audit.cells` (a value with no denominator shows as "—", never NaN)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from replay.audit.cells import ci_text, compact_table, condition_label, fraction, num, pct, share
from replay.plural import plural

if TYPE_CHECKING:
    from rich.table import Table

Row = dict[str, Any]

DEFINITIONS = (
    "† after an interruption, the agent's audio stopped (a silence that grew into a 500 ms "
    "turn end) within 2.0 s of the caller's onset (τ-Voice R_Y; latency L_Y = stop − onset)\n"
    "‡ after a backchannel, the same within 1.0 s (selectivity S_BC = 1 − this rate); "
    "response latency: the caller's end → the agent's audio onset (L_R); talk-over: agent "
    "speech while the caller's audio played\n"
    "§ mid-turn pauses ≥ 200 ms per minute of agent speech (VAD): the rules' opportunities\n"
    "R_R: caller turns answered within 5 s (no_response otherwise); I_A: agent turns begun "
    "inside the caller's turn, per caller turn; dead air: time no turn holds the floor "
    "(docs/agent-measures.md)"
)


def agent_table(rows: Sequence[Row]) -> Table:
    """The audit's table: one row per condition; under each pooled value its 95%
    bootstrap interval over calls, then the medians or the denominators."""
    table = compact_table(
        "Agent under test — the black-box agent's own turn-taking, pooled over calls; "
        "95% bootstrap intervals over calls",
        (
            "condition",
            "calls",
            "yielded †",
            "yield latency s",
            "false yields ‡",
            "response latency s",
            "talk-over s",
            "pauses/min §",
        ),
    )

    for r in rows:
        table.add_row(
            condition_label(r["condition"]),  # escaped there: file text, inert
            f"{r['calls']}\n{plural(r['agent_turns'], 'turn')}",
            share(r["yields"], r["yield_total"], r["yield_rate"])
            + f"\n{ci_text(r['yield_rate_ci'], 1, percent=True)}",
            f"mean {num(r['yield_latency_mean'])}\n{ci_text(r['yield_latency_mean_ci'], 2)}"
            f"\nmed {num(r['yield_latency_median'])} · p95 {num(r['yield_latency_p95'])}",
            share(r["false_yields"], r["backchannel_total"], r["false_yield_rate"])
            + f"\n{ci_text(r['false_yield_rate_ci'], 1, percent=True)}",
            f"mean {num(r['response_latency_mean'])}"
            f"\n{ci_text(r['response_latency_mean_ci'], 2)}"
            f"\nmed {num(r['response_latency_median'])} · n {r['response_total']}"
            f"\nR_R {share(r['responses'], r['response_total'], r['response_rate'])}"
            f"\nI_A {fraction(r['agent_interruptions'], r['response_total'])}",
            # No turn timed (every call lagged, its timings left out): "—", never 0.0.
            f"{num(r['talk_over_s'] if r['talk_over_turns'] else None, 1)} · "
            f"{num(r['talk_over_per_turn_s'])} per turn"
            f"\n{ci_text(r['talk_over_per_turn_s_ci'], 2)}"
            f"\ndead air {num(r['dead_air_s'] if r['duration_s'] else None, 1)} s · "
            f"{pct(r['dead_air_fraction'])}",
            f"{num(r['pauses_per_min'], 1)}\n{ci_text(r['pauses_per_min_ci'], 1)}"
            + (f"\n{r['short_pauses']} in {r['speech_s']:.1f} s" if r["speech_s"] else ""),
        )
    table.caption = DEFINITIONS
    table.caption_justify = "left"
    return table


__all__ = ["DEFINITIONS", "agent_table"]
