"""A call's "Agent under test" section of ``cutin report`` (Markdown, HTML): the
black-box agent's measures (:mod:`replay.audit.agent_measures`) of that one call. The
audit's table of them pooled per condition is :mod:`replay.audit.render_agent`; both
read their cells from :mod:`replay.audit.cells`. Text from the log is escaped as the
rest of each output escapes it; a value with no denominator shows as "—", never NaN."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from replay.audit.agent_measures import measures_of_trial
from replay.audit.cells import fraction, num, pct
from replay.plural import noun, plural

if TYPE_CHECKING:
    from replay.model import Trial

Row = dict[str, Any]


def call_lines(row: Row) -> list[tuple[str, str, str, str]]:
    """``(measure, value, out of, field)`` for one call's measures."""
    return [
        (
            "R_Y yield rate after interruptions",
            pct(row["yield_rate"]),
            f"{fraction(row['yields'], row['yield_total'])} "
            + noun(row["yield_total"], "interruption"),
            "yield_rate",
        ),
        (
            "L_Y yield latency, mean · median · p95 (s)",
            " · ".join(
                num(row[k], 3)
                for k in ("yield_latency_mean", "yield_latency_median", "yield_latency_p95")
            ),
            plural(row["yields"], "yield"),
            "yield_latency_mean",
        ),
        (
            "false yields after backchannels",
            pct(row["false_yield_rate"]),
            f"{fraction(row['false_yields'], row['backchannel_total'])} "
            + noun(row["backchannel_total"], "backchannel"),
            "false_yield_rate",
        ),
        (
            "S_BC selectivity: backchannels",
            num(row["selectivity_backchannel"], 3),
            plural(row["backchannel_total"], "backchannel"),
            "selectivity_backchannel",
        ),
        (
            "L_R response latency, mean · median (s)",
            f"{num(row['response_latency_mean'], 3)} · {num(row['response_latency_median'], 3)}",
            f"{plural(row['response_total'], 'agent turn')} after a caller turn",
            "response_latency_mean",
        ),
        (
            "R_R response rate",
            pct(row["response_rate"]),
            f"{fraction(row['responses'], row['response_total'])} "
            f"{noun(row['response_total'], 'caller turn')} answered"
            f" ({row['no_responses']} no_response)",
            "response_rate",
        ),
        (
            "response latency after a backchannel, mean (s)",
            num(row["backchannel_response_latency_mean"], 3),
            f"{plural(row['backchannel_responses'], 'answer')} after a false yield",
            "backchannel_response_latency_mean",
        ),
        (
            "I_A agent interruptions per caller turn",
            num(row["agent_interruption_rate"], 3),
            f"{plural(row['agent_interruptions'], 'agent turn')} begun inside a caller turn",
            "agent_interruption_rate",
        ),
        (
            "dead air (s), total · share of the call · longest gap",
            f"{num(row['dead_air_s'], 2)} · {pct(row['dead_air_fraction'])}"
            f" · {num(row['dead_air_max_gap_s'], 2)}",
            f"{plural(row['dead_air_long_gaps'], 'gap')} over 3 s in {row['duration_s']:.1f} s",
            "dead_air_s",
        ),
        (
            "S_VT selectivity: vocal tics",
            num(row.get("selectivity_vocal_tic"), 3),
            f"{plural(row.get('vocal_tic_errors', 0), 'error')} in "
            + plural(row.get("vocal_tic_total", 0), "tic"),
            "selectivity_vocal_tic",
        ),
        (
            "S_ND selectivity: side talk not meant for the agent",
            num(row.get("selectivity_non_directed"), 3),
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
            f"{num(row['talk_over_s'], 2)} · {num(row['talk_over_per_turn_s'], 3)}",
            plural(row["talk_over_turns"], "agent turn"),
            "talk_over_s",
        ),
        (
            "pauses ≥ 200 ms per minute of agent speech",
            num(row["pauses_per_min"], 1),
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
    row = measures_of_trial(trial)
    if row is None:
        return []
    lines = [f"**Agent under test** ({md(_agent_label(trial))})", ""]
    lines += ["| measure | value | out of |", "| --- | --- | --- |"]
    lines += [f"| {md(a)} | {md(b)} | {md(c)} |" for a, b, c, _ in call_lines(row)]
    return [*lines, ""]


def call_html(trial: Trial, h: Callable[[object], str]) -> list[str]:
    """The call's "Agent under test" table (none for other calls); ``h`` escapes."""
    row = measures_of_trial(trial)
    if row is None:
        return []
    out = [
        f'<p><b>Agent under test</b> <span class="meta">{h(_agent_label(trial))}</span></p>',
        "<table><tr><th>measure</th><th>value</th><th>out of</th></tr>",
    ]
    for label, value, of, name in call_lines(row):  # the field name is the tooltip
        out.append(
            f'<tr><td title="{h(name)}">{h(label)}</td><td class="num">{h(value)}</td>'
            f"<td>{h(of)}</td></tr>"
        )
    out.append("</table>")
    return out


__all__ = ["call_html", "call_lines", "call_markdown"]
