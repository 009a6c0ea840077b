"""Two runs of the same calls compared, measure by measure: did the agent get worse?

Pure: the two sides come loaded (:mod:`replay.check.compare_load`). For every measure of
:data:`replay.check.measures.SPECS` (one definition of each, shared with ``cutin check``):

* **base** and **new** are the audit's pooled values over each side's calls (the audit's
  own computation, :func:`replay.audit.agent_measures.condition_row`'s; lagged calls
  left out as in the audit unless kept);
* **difference** = new − base, with a 95% interval from a bootstrap over calls
  (:data:`~replay.audit.stats.DEFAULT_RESAMPLES` resamples, seeded: the same input gives
  the same interval). When both runs hold the same calls by (scenario, seed), as two
  ``cutin simulate`` batches with the same ``--seed`` do, the calls are **paired**: a
  resample picks the same calls on both sides, so what the scenario and the caller's
  seeded barge-ins contribute cancels and the interval is the agent's change alone.
  Otherwise each side is resampled on its own (a different stream of the same seed);
* **verdict**: *regressed* when the interval lies wholly on the measure's worse side of
  0 (which side is worse is the spec's ``better``), *improved* on its better side, *no
  change* when it holds 0, *not enough data* when either side has fewer events than the
  check needs (:attr:`~replay.check.measures.MeasureSpec.min_n`), or the interval has no
  defined resample. A side read from an ``audit --json`` file holds per-call counts and
  sums, not the events: its medians and p95 are not enough data.

What would make the comparison not like for like is **flagged**, never silently
compared: the runs' scenarios, dials (α, β, γ, policy, profile, disfluency style,
autos) or cutin versions differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np

from replay.audit.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, percentile_interval, resample_counts
from replay.check.compare_resample import Pairing, pairing, pooled, resampled
from replay.check.measures import SPECS, MeasureSpec

if TYPE_CHECKING:
    from replay.audit.agent_measures import AgentCall

Verdict = Literal["regressed", "improved", "no change", "not enough data"]
REGRESSED: Final = "regressed"
IMPROVED: Final = "improved"
NO_CHANGE: Final = "no change"
NOT_ENOUGH: Final = "not enough data"
VERDICTS: tuple[Verdict, ...] = (REGRESSED, IMPROVED, NO_CHANGE, NOT_ENOUGH)
FAIL_ON = ("regressed", "any-change")
EVENT_MEASURES = frozenset({"yield_latency_median", "yield_latency_p95", "response_latency_median"})
"""Measures over the pooled events themselves (not a sum over calls)."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One call of a side."""

    name: str
    key: tuple[str, int] | None
    """(scenario, seed) when the call's log names both: what pairs it with the other run's."""
    agent: AgentCall


@dataclass(slots=True)
class Side:
    """One run, loaded: its calls to the agent under test and what it was run with."""

    label: str
    """``base`` or ``new``."""
    units: list[Unit]
    calls: int = 0
    """Calls in the input (all kinds, lagged ones included)."""
    lagged: int = 0
    """Calls left out because their frames lagged."""
    events: bool = True
    """The per-event values are known (False: rebuilt from an ``audit --json`` file)."""
    scenarios: frozenset[str] = frozenset()
    dials: frozenset[str] = frozenset()
    versions: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)
    run: str = ""
    """The folder or file it was read from, as shown."""
    event_values: dict[str, float | None] = field(default_factory=dict)
    """Without events (an ``audit --json`` file): the medians and p95 as the audit
    printed them (one condition row), shown but not compared."""


@dataclass(frozen=True, slots=True)
class CompareRow:
    measure: str
    base: float | None
    new: float | None
    difference: float | None
    interval: tuple[float, float] | None
    n_base: int
    n_new: int
    verdict: Verdict
    note: str = ""
    unit: str = ""
    better: str = ""
    asked: bool = False
    """Named with ``--only``: not enough data fails (never a silent pass)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "base": self.base,
            "new": self.new,
            "difference": self.difference,
            "interval": list(self.interval) if self.interval is not None else None,
            "n_base": self.n_base,
            "n_new": self.n_new,
            "better": self.better,
            "verdict": self.verdict,
            "note": self.note,
        }


@dataclass(slots=True)
class CompareResult:
    rows: list[CompareRow]
    base: Side
    new: Side
    paired: bool
    flags: list[str]
    """What differs between the runs besides the agent (scenarios, dials, versions)."""
    notes: list[str]
    fail_on: str = "regressed"
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    pairs: int = 0
    """Calls paired by scenario and seed (all of both runs' when ``paired``)."""

    def counts(self) -> dict[str, int]:
        return {v: sum(r.verdict == v for r in self.rows) for v in VERDICTS}

    def failing(self, row: CompareRow) -> bool:
        """Whether this row makes the comparison exit 1."""
        if row.verdict == REGRESSED:
            return True
        if row.verdict == IMPROVED:
            return self.fail_on == "any-change"
        return row.verdict == NOT_ENOUGH and row.asked

    @property
    def compared(self) -> int:
        """Measures with enough data on both sides to say anything."""
        return sum(r.verdict != NOT_ENOUGH for r in self.rows)

    @property
    def exit_code(self) -> int:
        """1 when a measure regressed (or, ``--fail-on any-change``, changed), a measure
        named with ``--only`` had too little data, or no measure could be compared."""
        return 1 if any(self.failing(r) for r in self.rows) or not self.compared else 0

    @property
    def headline(self) -> str:
        """Why it exits as it does, in a few words."""
        if any(r.verdict == REGRESSED for r in self.rows):
            return "regressed"
        if self.fail_on == "any-change" and any(r.verdict == IMPROVED for r in self.rows):
            return "changed"
        if any(self.failing(r) for r in self.rows):
            return "not enough data"
        if not self.compared:
            return "nothing compared"
        return "no regression"

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.headline,
            "regressed": any(r.verdict == REGRESSED for r in self.rows),
            "exit_code": self.exit_code,
            "fail_on": self.fail_on,
            "paired": self.paired,
            "pairs": self.pairs,
            "flags": self.flags,
            "base": _side_dict(self.base),
            "new": _side_dict(self.new),
            "counts": self.counts(),
            "resamples": self.resamples,
            "seed": self.seed,
            "rows": [r.as_dict() for r in self.rows],
            "notes": self.notes,
        }


def _side_dict(side: Side) -> dict[str, Any]:
    return {
        "run": side.run,
        "calls": side.calls,
        "agent_calls": len(side.units),
        "lagged_left_out": side.lagged,
        "scenarios": sorted(side.scenarios),
        "dials": sorted(side.dials),
        "cutin_versions": sorted(side.versions),
    }


# ---- the comparison --------------------------------------------------------------------


def _flags(base: Side, new: Side) -> list[str]:
    out = []
    for what, a, b in (
        ("scenarios", base.scenarios, new.scenarios),
        ("dials", base.dials, new.dials),
        ("cutin versions", base.versions, new.versions),
    ):
        if a and b and a != b:
            out.append(f"different {what}: base {_listed(a)}; new {_listed(b)}")
    return out


def _listed(values: frozenset[str]) -> str:
    shown = sorted(values)
    return ", ".join(shown[:4]) + (f" and {len(shown) - 4} more" if len(shown) > 4 else "")


def compare(
    base: Side,
    new: Side,
    *,
    only: Sequence[str] = (),
    fail_on: str = "regressed",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> CompareResult:
    """Every measure (or those ``only`` names, in that order) of ``new`` against ``base``."""
    names = list(only) if only else list(SPECS)
    notes = [*base.notes, *new.notes]
    p = found = pairing(base, new)
    if len(p.base) < 2 or len(p.base_rest) == 1 or len(p.new_rest) == 1:
        # A stratum of one call cannot vary when resampled: resample each run whole.
        p = Pairing([], [], list(base.units), list(new.units))
    varies = min(len(base.units), len(new.units)) >= 2
    # A stratified bootstrap: the paired calls are picked together (one draw for both
    # runs), the rest of each run on its own (draws of their own).
    shared = resample_counts(len(p.base), resamples, seed)
    base_units, new_units = [*p.base, *p.base_rest], [*p.new, *p.new_rest]
    base_counts = np.hstack([shared, resample_counts(len(p.base_rest), resamples, seed + 1)])
    new_counts = np.hstack([shared, resample_counts(len(p.new_rest), resamples, seed + 2)])
    paired = bool(p.base) and not p.base_rest and not p.new_rest
    if base.units and new.units and not paired:
        notes.append(
            f"{len(p.base)} calls paired by scenario and seed; "
            f"{len(p.base_rest)} of base and {len(p.new_rest)} of new have no partner "
            "(resampled on their own)"
            if p.base
            else f"{len(found.base)} calls pair by scenario and seed, too few to resample "
            "apart from the rest: each run resampled on its own"
            if found.base
            else "no call pairs by scenario and seed: each run resampled on its own"
        )
    base_row = pooled([u.agent for u in base_units]) if base_units else {}
    new_row = pooled([u.agent for u in new_units]) if new_units else {}
    if base_units and new_units:
        diffs = resampled(new_units, new_counts, names) - resampled(base_units, base_counts, names)
    else:
        diffs = np.full((0, len(names)), np.nan)
    rows = [
        _row(
            SPECS[name], base_row, new_row, diffs[:, j], base, new, asked=bool(only), varies=varies
        )
        for j, name in enumerate(names)
    ]
    return CompareResult(
        rows, base, new, paired, _flags(base, new), notes, fail_on, resamples, seed, len(p.base),
    )  # fmt: skip


def _value(row: dict[str, Any], name: str) -> float | None:
    value = row.get(name)
    return float(value) if isinstance(value, int | float) else None


def _n(row: dict[str, Any], spec: MeasureSpec) -> int:
    n = row.get(spec.n_key)
    return int(n) if isinstance(n, int | float) else 0


def _row(
    spec: MeasureSpec,
    base_row: dict[str, Any],
    new_row: dict[str, Any],
    diffs: np.ndarray[Any, Any],
    base: Side,
    new: Side,
    *,
    asked: bool,
    varies: bool = True,
) -> CompareRow:
    b, n = _value(base_row, spec.name), _value(new_row, spec.name)
    if spec.name in EVENT_MEASURES:  # a side without events: the audit's own value, if any
        b = b if base.events else base.event_values.get(spec.name)
        n = n if new.events else new.event_values.get(spec.name)
    nb, nn = _n(base_row, spec), _n(new_row, spec)
    diff = None if b is None or n is None else n - b

    def row(verdict: Verdict, note: str, interval: tuple[float, float] | None = None) -> CompareRow:
        return CompareRow(spec.name, b, n, diff, interval, nb, nn, verdict, note, spec.unit,
                          spec.better, asked)  # fmt: skip

    what = "calls" if spec.kind == "floor" else "events"
    short = [
        f"{side.label} {count} {what}" + ("" if value is not None else " (undefined)")
        for side, count, value in ((base, nb, b), (new, nn, n))
        if value is None or count < spec.min_n
    ]
    if b is None and n is None and not nb and not nn:
        return row(NOT_ENOUGH, f"no {what} in either run")
    if short:
        return row(NOT_ENOUGH, f"fewer than {spec.min_n} {what}: " + ", ".join(short))
    if spec.name in EVENT_MEASURES and not (base.events and new.events):
        return row(NOT_ENOUGH, "an audit --json file holds no events to pool: compare run folders")
    if not varies:
        return row(NOT_ENOUGH, "one call on a side: resampling it cannot vary")
    interval = percentile_interval(diffs)
    if interval is None:
        return row(NOT_ENOUGH, "no resample defines it on both sides")
    lo, hi = interval
    if lo <= 0.0 <= hi:
        return row(NO_CHANGE, "the interval holds 0", interval)
    higher = lo > 0.0
    worse = higher == (spec.better == "lower")
    direction = "higher" if higher else "lower"
    verdict: Verdict = REGRESSED if worse else IMPROVED
    return row(verdict, f"{direction} ({spec.better} is better)", interval)


__all__ = [
    "EVENT_MEASURES",
    "FAIL_ON",
    "IMPROVED",
    "NOT_ENOUGH",
    "NO_CHANGE",
    "REGRESSED",
    "VERDICTS",
    "CompareResult",
    "CompareRow",
    "Side",
    "Unit",
    "compare",
]
