"""The batch page's numbers (:mod:`.batch_page` draws them): each call's facts (its
scenario, dials, run, agent, frame lag, realized counts and agent-under-test counts,
timing-free when it lagged, :func:`replay.audit.lag.timing_free`), the scenarios'
``[expect]`` evaluated as ``cutin check`` evaluates them, and per condition the realized
interruptions and backchannels per agent turn with their 95% bootstrap intervals over
calls and the agent's pooled row (:func:`replay.audit.agent_measures.condition_row`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sessions.log.models import LAG_LIMIT_S

if TYPE_CHECKING:
    from replay.audit.agent_measures import AgentCall
    from replay.check.evaluate import CheckResult
    from replay.model import Trial

RESAMPLES = 1000
"""Bootstrap resamples of the page's intervals (seeded: the page is reproducible)."""
DIALS = (("alpha", "α"), ("beta", "β"), ("gamma", "γ"))


@dataclass(slots=True)
class CallFacts:
    """One call as the batch page needs it."""

    index: int
    trial: Trial
    scenario: str | None
    dials: dict[str, float]
    run: int | None
    agent: str
    lag_p99_s: float | None
    realized: Mapping[str, int] | None
    agent_call: AgentCall | None
    """Its agent-under-test counts, timing-free when lagged (None: not a black-box call)."""
    raw_call: AgentCall | None
    """The same with its timings, for its own row (marked when lagged)."""

    @property
    def lagged(self) -> bool:
        return self.lag_p99_s is not None and self.lag_p99_s > LAG_LIMIT_S

    @property
    def condition(self) -> tuple[tuple[str, float], ...]:
        return tuple((k, self.dials[k]) for k, _ in DIALS if k in self.dials)

    @property
    def name(self) -> str:
        """``airline-rebooking · α 0.5 · β 1 · γ 0 · run 2``; a trial with no scenario
        (a τ2 simulation) its id and task."""
        t = self.trial
        parts = (
            [self.scenario] if self.scenario else [t.id, *([f"task {t.task_id}"] * bool(t.task_id))]
        )
        if self.dials:
            parts.append(condition_name(self.condition))
        if self.run is not None:
            parts.append(f"run {self.run}")
        return " · ".join(str(p) for p in parts)


def condition_name(condition: Sequence[tuple[str, float]]) -> str:
    letters = dict(DIALS)
    return " · ".join(f"{letters[k]} {v:g}" for k, v in condition) or "all"


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


def call_facts(trials: Sequence[Trial]) -> list[CallFacts]:
    """Every trial's facts, in the report's order."""
    from replay.audit.agent_measures import call_of_trial
    from replay.audit.lag import timing_free

    out: list[CallFacts] = []
    for i, t in enumerate(trials):
        head = t.header
        tend = head.get("tendencies")
        dials = {}
        if isinstance(tend, Mapping):
            dials = {k: float(v) for k, _ in DIALS if (v := _number(tend.get(k))) is not None}
        batch = head.get("batch")
        run = batch.get("run") if isinstance(batch, Mapping) else None
        agent = head.get("agent")
        who = "—"
        if isinstance(agent, Mapping):
            who = " · ".join(str(agent[k]) for k in ("kind", "name") if agent.get(k))
        lag = t.meta.get("frame_lag")
        p99 = _number(lag.get("p99_s")) if isinstance(lag, Mapping) else None
        raw = call_of_trial(t) if t.kind == "cutin" else None
        facts = CallFacts(
            index=i,
            trial=t,
            scenario=head.get("scenario") if isinstance(head.get("scenario"), str) else None,
            dials=dials,
            run=run if isinstance(run, int) and not isinstance(run, bool) else None,
            agent=who,
            lag_p99_s=p99,
            realized=t.meta.get("realized_counts"),
            agent_call=raw,
            raw_call=raw,
        )
        if raw is not None and facts.lagged:
            facts.agent_call = timing_free(raw)
        out.append(facts)
    return out


# ---------------------------------------------------------------- expectations
def expectations_result(facts: Sequence[CallFacts]) -> CheckResult | None:
    """The shipped scenarios' ``[expect]`` tables over the batch, as ``cutin check``
    evaluates them; None when no scenario of the batch has one."""
    from replay.check.evaluate import evaluate
    from replay.check.expectations import merge
    from replay.check.load import RunCall
    from sessions.scenarios import (
        ScenarioError,
        line_scenario_names,
        load_scenario,
        shipped_scenario_names,
    )

    shipped = {*shipped_scenario_names(), *line_scenario_names()}
    found = []
    for name in sorted({f.scenario for f in facts if f.scenario in shipped}):
        try:
            found.append(load_scenario(str(name)).expectations)
        except ScenarioError:
            continue
    merged = merge(found)
    if not merged:
        return None
    calls = [RunCall(f.name, f.scenario, f.trial, f.raw_call, f.lag_p99_s) for f in facts]
    return evaluate(merged, calls, resamples=RESAMPLES)


# ---------------------------------------------------------------- per condition
@dataclass(slots=True)
class ConditionRow:
    condition: tuple[tuple[str, float], ...]
    calls: list[CallFacts]
    interruptions: tuple[float | None, tuple[float, float] | None, int]
    backchannels: tuple[float | None, tuple[float, float] | None, int]
    agent: dict[str, Any] | None

    @property
    def label(self) -> str:
        return condition_name(self.condition)

    @property
    def lagged(self) -> int:
        return sum(f.lagged for f in self.calls)


def _per_turn(
    calls: Sequence[CallFacts], key: str
) -> tuple[float | None, tuple[float, float] | None, int]:
    """Pooled ``key`` per agent turn, its 95% bootstrap interval over calls, the count."""
    from replay.audit.stats import percentile_interval, resample_counts

    counted = [f.realized for f in calls if isinstance(f.realized, Mapping)]
    if not counted:
        return None, None, 0
    m = np.asarray([[r.get(key, 0), r.get("agent_turns", 0)] for r in counted], dtype=np.float64)
    events, turns = m.sum(axis=0)
    if not turns:
        return None, None, int(events)
    interval = None
    if len(counted) > 1:
        boot = resample_counts(len(counted), RESAMPLES, 0).astype(np.float64) @ m
        with np.errstate(divide="ignore", invalid="ignore"):
            ci = percentile_interval(boot[:, 0] / boot[:, 1])
        interval = None if ci is None else (float(ci[0]), float(ci[1]))
    return float(events / turns), interval, int(events)


def condition_rows(facts: Sequence[CallFacts]) -> list[ConditionRow]:
    from replay.audit.agent_measures import condition_row

    groups: dict[tuple[tuple[str, float], ...], list[CallFacts]] = {}
    for f in facts:
        groups.setdefault(f.condition, []).append(f)
    rows = []
    for cond in sorted(groups):
        calls = groups[cond]
        agent_calls = [f.agent_call for f in calls if f.agent_call is not None]
        agent = condition_row(dict(cond), agent_calls, resamples=RESAMPLES) if agent_calls else None
        rows.append(
            ConditionRow(
                cond,
                calls,
                _per_turn(calls, "interruptions"),
                _per_turn(calls, "backchannels"),
                agent,
            )
        )
    return rows


__all__ = [
    "DIALS",
    "RESAMPLES",
    "CallFacts",
    "ConditionRow",
    "call_facts",
    "condition_name",
    "condition_rows",
    "expectations_result",
]
