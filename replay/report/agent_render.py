"""The black-box agent's measures (:mod:`replay.audit.agent_measures`) as people read them:
the audit's "Agent under test" table (rich) and a call's section of ``cutin report``
(Markdown, HTML). Text from the log is escaped as the rest of each output escapes it
(:func:`replay.audit.render.condition_label` for the console);
a value with no denominator shows as "—", never NaN."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from replay.report.plural import noun, plural

if TYPE_CHECKING:
    from rich.table import Table

    from replay.model import Trial

Row = dict[str, Any]
DASH = "—"

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


def _num(v: float | None, digits: int = 2) -> str:
    return DASH if v is None else f"{v:.{digits}f}"


def _pct(v: float | None) -> str:
    return DASH if v is None else f"{100 * v:.1f}%"


def _ci(ci: Sequence[float] | None, fmt: Callable[[float], str]) -> str:
    return DASH if ci is None else f"[{fmt(ci[0])}, {fmt(ci[1])}]"


def _frac(n: int, total: int) -> str:
    return f"{n}/{total}" if total else DASH


def _share(n: int, total: int, rate: float | None) -> str:
    """``2/3 · 66.7%``; "—" with nothing to count."""
    return f"{n}/{total} · {_pct(rate)}" if total else DASH


def _pct_plain(v: float) -> str:
    return f"{100 * v:.1f}"


# ---------------------------------------------------------------- the audit (rich)
def agent_table(rows: Sequence[Row]) -> Table:
    """The audit's table: one row per condition; under each pooled value its 95%
    bootstrap interval over calls, then the medians or the denominators."""
    from replay.audit.render import _table, condition_label

    table = _table(
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

    def s2(v: float) -> str:
        return f"{v:.2f}"

    def s1(v: float) -> str:
        return f"{v:.1f}"

    for r in rows:
        table.add_row(
            condition_label(r["condition"]),  # escaped there: file text, inert
            f"{r['calls']}\n{plural(r['agent_turns'], 'turn')}",
            _share(r["yields"], r["yield_total"], r["yield_rate"])
            + f"\n{_ci(r['yield_rate_ci'], _pct_plain)}",
            f"mean {_num(r['yield_latency_mean'])}\n{_ci(r['yield_latency_mean_ci'], s2)}"
            f"\nmed {_num(r['yield_latency_median'])} · p95 {_num(r['yield_latency_p95'])}",
            _share(r["false_yields"], r["backchannel_total"], r["false_yield_rate"])
            + f"\n{_ci(r['false_yield_rate_ci'], _pct_plain)}",
            f"mean {_num(r['response_latency_mean'])}"
            f"\n{_ci(r['response_latency_mean_ci'], s2)}"
            f"\nmed {_num(r['response_latency_median'])} · n {r['response_total']}"
            f"\nR_R {_share(r['responses'], r['response_total'], r['response_rate'])}"
            f"\nI_A {_frac(r['agent_interruptions'], r['response_total'])}",
            f"{_num(r['talk_over_s'], 1)} · {_num(r['talk_over_per_turn_s'])} per turn"
            f"\n{_ci(r['talk_over_per_turn_s_ci'], s2)}"
            f"\ndead air {_num(r['dead_air_s'], 1)} s · {_pct(r['dead_air_fraction'])}",
            f"{_num(r['pauses_per_min'], 1)}\n{_ci(r['pauses_per_min_ci'], s1)}"
            f"\n{r['short_pauses']} in {r['speech_s']:.1f} s",
        )
    table.caption = DEFINITIONS
    table.caption_justify = "left"
    return table


# ---------------------------------------------------------------- a call (report)
def call_lines(row: Row) -> list[tuple[str, str, str, str]]:
    """``(measure, value, out of, field)`` for one call's measures."""
    return [
        (
            "R_Y yield rate after interruptions",
            _pct(row["yield_rate"]),
            f"{_frac(row['yields'], row['yield_total'])} "
            + noun(row["yield_total"], "interruption"),
            "yield_rate",
        ),
        (
            "L_Y yield latency, mean · median · p95 (s)",
            " · ".join(
                _num(row[k], 3)
                for k in ("yield_latency_mean", "yield_latency_median", "yield_latency_p95")
            ),
            plural(row["yields"], "yield"),
            "yield_latency_mean",
        ),
        (
            "false yields after backchannels",
            _pct(row["false_yield_rate"]),
            f"{_frac(row['false_yields'], row['backchannel_total'])} "
            + noun(row["backchannel_total"], "backchannel"),
            "false_yield_rate",
        ),
        (
            "S_BC selectivity: backchannels",
            _num(row["selectivity_backchannel"], 3),
            plural(row["backchannel_total"], "backchannel"),
            "selectivity_backchannel",
        ),
        (
            "L_R response latency, mean · median (s)",
            f"{_num(row['response_latency_mean'], 3)} · {_num(row['response_latency_median'], 3)}",
            f"{plural(row['response_total'], 'agent turn')} after a caller turn",
            "response_latency_mean",
        ),
        (
            "R_R response rate",
            _pct(row["response_rate"]),
            f"{_frac(row['responses'], row['response_total'])} "
            f"{noun(row['response_total'], 'caller turn')} answered"
            f" ({row['no_responses']} no_response)",
            "response_rate",
        ),
        (
            "response latency after a backchannel, mean (s)",
            _num(row["backchannel_response_latency_mean"], 3),
            f"{plural(row['backchannel_responses'], 'answer')} after a false yield",
            "backchannel_response_latency_mean",
        ),
        (
            "I_A agent interruptions per caller turn",
            _num(row["agent_interruption_rate"], 3),
            f"{plural(row['agent_interruptions'], 'agent turn')} begun inside a caller turn",
            "agent_interruption_rate",
        ),
        (
            "dead air (s), total · share of the call · longest gap",
            f"{_num(row['dead_air_s'], 2)} · {_pct(row['dead_air_fraction'])}"
            f" · {_num(row['dead_air_max_gap_s'], 2)}",
            f"{plural(row['dead_air_long_gaps'], 'gap')} over 3 s in {row['duration_s']:.1f} s",
            "dead_air_s",
        ),
        (
            "S_VT selectivity: vocal tics",
            _num(row.get("selectivity_vocal_tic"), 3),
            f"{plural(row.get('vocal_tic_errors', 0), 'error')} in "
            + plural(row.get("vocal_tic_total", 0), "tic"),
            "selectivity_vocal_tic",
        ),
        (
            "S_ND selectivity: side talk not meant for the agent",
            _num(row.get("selectivity_non_directed"), 3),
            f"{plural(row.get('non_directed_errors', 0), 'error')} in "
            f"{row.get('non_directed_total', 0)}",
            "selectivity_non_directed",
        ),
        (
            "acts the agent was already silent for (not scored)",
            str(row["already_silent"]),
            "its sound had ended before the caller's onset",
            "already_silent",
        ),
        (
            "talk-over of the caller (s), total · per agent turn",
            f"{_num(row['talk_over_s'], 2)} · {_num(row['talk_over_per_turn_s'], 3)}",
            plural(row["talk_over_turns"], "agent turn"),
            "talk_over_s",
        ),
        (
            "pauses ≥ 200 ms per minute of agent speech",
            _num(row["pauses_per_min"], 1),
            f"{plural(row['short_pauses'], 'pause')} / {row['speech_s']:.1f} s of speech",
            "pauses_per_min",
        ),
    ]


def _agent_label(trial: Trial) -> str:
    agent = trial.header.get("agent")
    if not isinstance(agent, dict):
        return ""
    parts = [agent.get("kind"), agent.get("name"), agent.get("model")]
    return " · ".join(str(p) for p in parts if p)


def call_markdown(trial: Trial, md: Callable[[str], str]) -> list[str]:
    """The call's "Agent under test" lines (none for other calls); ``md`` escapes."""
    from replay.audit.agent_measures import measures_of_trial

    row = measures_of_trial(trial)
    if row is None:
        return []
    lines = [f"**Agent under test** ({md(_agent_label(trial))})", ""]
    lines += ["| measure | value | out of |", "| --- | --- | --- |"]
    lines += [f"| {md(a)} | {md(b)} | {md(c)} |" for a, b, c, _ in call_lines(row)]
    return [*lines, ""]


def call_html(trial: Trial, h: Callable[[object], str]) -> list[str]:
    """The call's "Agent under test" table (none for other calls); ``h`` escapes."""
    from replay.audit.agent_measures import measures_of_trial

    row = measures_of_trial(trial)
    if row is None:
        return []
    out = [
        f'<p><b>Agent under test</b> <span class="meta">{h(_agent_label(trial))}</span></p>',
        "<table><tr><th>measure</th><th>value</th><th>out of</th><th>field</th></tr>",
    ]
    for label, value, of, name in call_lines(row):
        out.append(
            f'<tr><td>{h(label)}</td><td class="num">{h(value)}</td><td>{h(of)}</td>'
            f"<td><code>{h(name)}</code></td></tr>"
        )
    out.append("</table>")
    return out


__all__ = ["DEFINITIONS", "agent_table", "call_html", "call_lines", "call_markdown"]
