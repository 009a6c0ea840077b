"""Planning a headless batch (`cutin simulate`): scenarios × conditions × runs.

Pure: no files, no clocks. The plan is a list of :class:`CallSpec`, one per call,
each with a file name and a seed that depend only on the base seed, the scenario,
the condition and the run, so a rerun of the same command plans the same calls
and can skip the ones already on disk. Tallying what a finished call did (agent
turns, interruptions, backchannels) is here too, for the end-of-batch table.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sessions.log.models import LAG_LIMIT_S, EndEvent, ErrorEvent, Event, FrameLag, LineEvent
from sessions.log.realized import RealizedCounter

RATE_JITTER_DEFAULT = 0.05
"""Each run speaks up to ±5 % faster or slower than the base rate."""

_SEED_SPACE = 2**31 - 1


class PlanError(ValueError):
    """A batch that cannot be planned (no scenarios, no runs, clashing names)."""


def _num(x: float) -> str:
    """A dial value as it appears in labels and file names: 0, 0.3, 1."""
    return f"{x:g}"


@dataclass(frozen=True, slots=True, order=True)
class Condition:
    """One point of the α × β × γ grid."""

    alpha: float
    beta: float
    gamma: float

    @property
    def label(self) -> str:
        return f"a{_num(self.alpha)}_b{_num(self.beta)}_g{_num(self.gamma)}"

    def as_dict(self) -> dict[str, float]:
        return {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma}


@dataclass(frozen=True, slots=True)
class CallSpec:
    """One call of a batch: what to run and where its log goes."""

    scenario: str
    """The scenario's name (its ``name`` field, not the path it was loaded from)."""
    condition: Condition
    run: int
    """1-based run index within (scenario, condition)."""
    seed: int
    words_per_minute: float
    batch: str
    """The batch's name (recorded in every header)."""
    base_seed: int = 0
    """The batch's ``--seed``: with the scenario and run it names the session, which
    the audit pairs across conditions."""
    paired: bool = False
    """Planned with ``paired``: every condition of a session has the same call seed."""

    @property
    def stem(self) -> str:
        return f"{self.scenario}__{self.condition.label}__run{self.run:02d}"

    @property
    def file_name(self) -> str:
        return f"{self.stem}.jsonl"

    def batch_info(self) -> dict[str, object]:
        """What goes into ``header.batch``."""
        return {
            "batch": self.batch,
            "condition": self.condition.as_dict(),
            "run": self.run,
            "seed": self.base_seed,
            "paired": self.paired,
        }


def conditions(
    alphas: Sequence[float], betas: Sequence[float], gammas: Sequence[float]
) -> list[Condition]:
    """The grid, in the order given (β varies slower than γ), duplicates dropped."""
    out: dict[str, Condition] = {}
    for a in alphas:
        for b in betas:
            for g in gammas:
                c = Condition(float(a), float(b), float(g))
                out.setdefault(c.label, c)
    return list(out.values())


def derive_seed(base: int, scenario: str, condition: Condition | None, run: int) -> int:
    """A stable seed (same on every machine and Python) for one call.

    ``condition=None`` leaves the condition out, so every condition of a run shares
    the same speech timings (paired comparison)."""
    label = condition.label if condition is not None else "*"
    key = f"cutin.batch/1|{base}|{scenario}|{label}|{run}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % _SEED_SPACE


def speaking_rate(base_wpm: float, jitter: float, seed: int) -> float:
    """The run's speaking rate: ``base_wpm`` moved by up to ±``jitter`` (a fraction)."""
    if jitter <= 0:
        return base_wpm
    u = random.Random(seed ^ 0x5EED).uniform(-1.0, 1.0)
    return round(base_wpm * (1.0 + jitter * u), 1)


def plan_batch(
    scenarios: Sequence[str],
    grid: Sequence[Condition],
    *,
    runs: int,
    seed: int = 0,
    batch: str = "batch",
    words_per_minute: float = 165.0,
    rate_jitter: float = RATE_JITTER_DEFAULT,
    paired: bool = False,
) -> list[CallSpec]:
    """Every call of the batch, run-major: all of run 1, then all of run 2, ...

    Run-major order means a batch stopped half way still covers every condition."""
    if not scenarios:
        raise PlanError("no scenarios to run")
    if len(set(scenarios)) != len(scenarios):
        dupes = sorted({s for s in scenarios if list(scenarios).count(s) > 1})
        raise PlanError(f"scenario named twice: {', '.join(dupes)}")
    if not grid:
        raise PlanError("no conditions to run")
    if runs < 1:
        raise PlanError(f"--runs must be at least 1, got {runs}")
    if not 0.0 <= rate_jitter < 0.5:
        raise PlanError(f"speaking-rate jitter must be in [0, 0.5), got {rate_jitter}")
    specs: list[CallSpec] = []
    for run in range(1, runs + 1):
        for scenario in scenarios:
            for condition in grid:
                call_seed = derive_seed(seed, scenario, None if paired else condition, run)
                wpm = speaking_rate(words_per_minute, rate_jitter, call_seed)
                specs.append(
                    CallSpec(scenario, condition, run, call_seed, wpm, batch, seed, paired)
                )
    return specs


# ---- what a finished call did ---------------------------------------------------------


@dataclass(slots=True)
class CallTally:
    """Counts from one call's events: the realized counts of
    :mod:`sessions.log.realized` (the audit's and the live panel's), with every
    logged interruption and backchannel event (automatic or manual) as the actions,
    plus the errors and how the call ended."""

    agent_turns: int = 0
    opportunities: int = 0
    interruptions: int = 0
    backchannels: int = 0
    errors: list[str] = field(default_factory=list)
    end_reason: str | None = None
    frame_lag: FrameLag | None = None
    """A real-time call's frame lag, from its end event (None on the virtual clock)."""
    no_responses: int = 0
    """``line`` events of kind ``no_response`` (the agent did not answer in time); in a
    lagged call they may be this machine's lag, and the report says so."""
    _counter: RealizedCounter = field(default_factory=RealizedCounter, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        """The call reached its end (a crash's ``end`` does not count)."""
        return self.end_reason is not None and self.end_reason != "crash"

    def add(self, event: Event) -> None:
        """Count one event (usable as a call-loop listener)."""
        s = self._counter.feed(event)
        self.agent_turns = s.agent_turns
        self.opportunities = s.opportunities
        self.interruptions = s.interruption_events + s.manual_interruptions
        self.backchannels = s.backchannel_events + s.manual_backchannels
        if isinstance(event, ErrorEvent):
            self.errors.append(f"{event.where}: {event.message}" if event.where else event.message)
        elif isinstance(event, EndEvent):
            self.end_reason = event.reason
            self.frame_lag = event.frame_lag
        elif isinstance(event, LineEvent) and event.kind == "no_response":
            self.no_responses += 1

    @property
    def lagged(self) -> bool:
        """The call's p99 frame lag exceeded one frame: its timings are not trusted."""
        return self.frame_lag is not None and self.frame_lag.p99_s > LAG_LIMIT_S


def tally(events: Iterable[Event]) -> CallTally:
    """Count what happened in a call."""
    out = CallTally()
    for e in events:
        out.add(e)
    return out


@dataclass(slots=True)
class ConditionSummary:
    """One row of the end-of-batch table: every call of one condition, all scenarios."""

    condition: Condition
    calls: int = 0
    agent_turns: int = 0
    opportunities: int = 0
    interruptions: int = 0
    backchannels: int = 0

    @property
    def interruptions_per_turn(self) -> float | None:
        return self.interruptions / self.agent_turns if self.agent_turns else None

    @property
    def backchannels_per_turn(self) -> float | None:
        return self.backchannels / self.agent_turns if self.agent_turns else None

    def as_dict(self) -> dict[str, object]:
        return {
            "condition": self.condition.as_dict(),
            "label": self.condition.label,
            "calls": self.calls,
            "agent_turns": self.agent_turns,
            "opportunities": self.opportunities,
            "interruptions": self.interruptions,
            "backchannels": self.backchannels,
            "interruptions_per_turn": self.interruptions_per_turn,
            "backchannels_per_turn": self.backchannels_per_turn,
        }


def summarize(results: Iterable[tuple[CallSpec, CallTally]]) -> list[ConditionSummary]:
    """Per condition (in the order first seen), totals over the calls given."""
    rows: dict[Condition, ConditionSummary] = {}
    for spec, t in results:
        row = rows.setdefault(spec.condition, ConditionSummary(spec.condition))
        row.calls += 1
        row.agent_turns += t.agent_turns
        row.opportunities += t.opportunities
        row.interruptions += t.interruptions
        row.backchannels += t.backchannels
    return list(rows.values())
