"""The measure table a check (and a comparison of two runs) reads: for each measure
an expectation may name, what its ``n`` counts, where its 95% interval is, and which way
is better. Values come from the audit's pooled agent-under-test row
(:func:`replay.audit.agent_measures.condition_row`), so a check and ``cutin audit
--json`` print the same numbers.

A *rate* or *latency* over fewer than :data:`~replay.audit.stats.MIN_EVENTS` events is
not enough data; a *floor* measure (dead air) is time over the calls' seconds and
needs one call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from replay.audit.stats import MIN_EVENTS
from sessions.scenarios.expect import METRICS, Better

Kind = Literal["rate", "latency", "floor"]


@dataclass(frozen=True, slots=True)
class MeasureSpec:
    name: str
    kind: Kind
    n_key: str
    """The row's count of the events the measure is over (``calls`` for floor measures)."""
    better: Better
    unit: str = ""

    @property
    def min_n(self) -> int:
        return 1 if self.kind == "floor" else MIN_EVENTS


def _spec(name: str, kind: Kind, n_key: str, unit: str = "") -> MeasureSpec:
    return MeasureSpec(name, kind, n_key, METRICS[name], unit)


SPECS: dict[str, MeasureSpec] = {
    s.name: s
    for s in (
        _spec("yield_rate", "rate", "yield_total"),
        _spec("yield_latency_mean", "latency", "yields", "s"),
        _spec("yield_latency_median", "latency", "yields", "s"),
        _spec("yield_latency_p95", "latency", "yields", "s"),
        _spec("false_yield_rate", "rate", "backchannel_total"),
        _spec("selectivity_backchannel", "rate", "backchannel_total"),
        _spec("selectivity_vocal_tic", "rate", "vocal_tic_total"),
        _spec("selectivity_non_directed", "rate", "non_directed_total"),
        _spec("response_rate", "rate", "response_total"),
        _spec("response_latency_mean", "latency", "responses", "s"),
        _spec("response_latency_median", "latency", "responses", "s"),
        _spec("backchannel_response_latency_mean", "latency", "backchannel_responses", "s"),
        _spec("agent_interruption_rate", "rate", "response_total"),
        _spec("dead_air_fraction", "floor", "calls"),
        _spec("dead_air_max_gap_s", "floor", "calls", "s"),
        _spec("talk_over_per_turn_s", "latency", "talk_over_turns", "s"),
        _spec("pauses_per_min", "rate", "short_pauses", "/min"),
    )
}


@dataclass(frozen=True, slots=True)
class Measured:
    """One measure read off a pooled row."""

    value: float | None
    interval: tuple[float, float] | None
    """The audit's 95% bootstrap interval over calls (None for medians, p95, a max)."""
    n: int

    def enough(self, spec: MeasureSpec) -> bool:
        return self.value is not None and self.n >= spec.min_n


def measured(row: Mapping[str, Any], name: str) -> Measured:
    """``name`` in a pooled agent-under-test row (ungated intervals: ``<name>_ci``)."""
    spec = SPECS[name]
    value = row.get(name)
    ci = row.get(f"{name}_ci")
    n = row.get(spec.n_key)
    return Measured(
        float(value) if isinstance(value, int | float) else None,
        (float(ci[0]), float(ci[1])) if isinstance(ci, list | tuple) and len(ci) == 2 else None,
        int(n) if isinstance(n, int | float) else 0,
    )


__all__ = ["SPECS", "Kind", "MeasureSpec", "Measured", "measured"]
