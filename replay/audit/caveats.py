"""The rows and notes that keep the audit's condition tables from misleading: the calls
whose dials changed mid-call (listed by span, in no condition), a condition that pools
calls to different agents, and the agent-under-test intervals over too few events.
docs/audit.md says what each means."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.audit.cells import condition_label
from replay.audit.groups import Row
from replay.audit.provenance import agent_label
from replay.audit.sessions import Conversation
from replay.audit.spans import changes
from replay.audit.stats import MIN_EVENTS, too_few

AGENT_EVENTS: dict[str, str] = {
    "yield_rate_ci": "yield_total",
    "yield_latency_mean_ci": "yields",
    "false_yield_rate_ci": "backchannel_total",
    "selectivity_backchannel_ci": "backchannel_total",
    "response_latency_mean_ci": "response_total",
    "talk_over_per_turn_s_ci": "talk_over_turns",
    "pauses_per_min_ci": "short_pauses",
}
"""The agent-under-test table's intervals and the count of events each is over."""


def gate_agent_rows(rows: list[Row]) -> list[Row]:
    """The agent-under-test rows with each interval over fewer than
    :data:`~replay.audit.stats.MIN_EVENTS` events, or over one call, set to None and
    the reason in ``hidden`` (an interval this module does not know the events of is
    gated on the number of calls only)."""
    for row in rows:
        hidden: dict[str, str] = row.setdefault("hidden", {})
        for key in [k for k in row if k.endswith("_ci") and row[k] is not None]:
            events = row.get(AGENT_EVENTS.get(key, ""))
            count = float(events) if isinstance(events, int | float) else MIN_EVENTS
            why = too_few(count, int(row.get("calls") or 0))
            if why is not None:
                row[key] = None
                hidden[key] = why.replace("conversation", "call")
    return rows


def mixed_rows(convs: Sequence[Conversation]) -> list[Row]:
    """Each mixed call's spans: plain counts, no rates' intervals, no test."""
    return [
        {
            "call": c.name,
            "agent": agent_label(c.header),
            "scenario": c.scenario,
            "changes": changes(c.spans),
            "spans": [s.as_row() for s in c.spans],
        }
        for c in convs
    ]


def pooled_agents(groups: Sequence[Any]) -> list[str]:
    """A note per condition that pools calls to more than one agent."""
    out: list[str] = []
    for g in groups:
        agents = sorted({agent_label(c.header) for c in g.conversations if c.kind == "cutin"})
        if len(agents) > 1:
            out.append(
                f"condition {condition_label(g.condition)} pools calls to {len(agents)} agents "
                f"({'; '.join(agents)}): --by agent_kind,agent splits them (tests never "
                "pair or trend across agents)"
            )
    return out


__all__ = ["AGENT_EVENTS", "gate_agent_rows", "mixed_rows", "pooled_agents"]
