"""Conversations → the audit's rows: disfluency, turn-taking, tests. Pure; JSON-ready.

Rows are grouped by *condition*: the values of the ``--by`` fields (default α, β, γ,
policy, model) in each conversation's header.

**Disfluency row** (conversations that have user turns): totals, rates per 1,000
words, the combined rate's and turn-initial share's 95% bootstrap intervals and the
VMR of per-turn fillers + repetitions with its interval (:mod:`replay.audit`).

**Turn-taking rows** (conversations that record turn-taking), one per behaviour:
opportunities, actions, actions per opportunity, agent turns, actions per agent
turn, manual actions apart, and where actions land (``positions``: how many took
the turn's 1st, 2nd, ... opportunity; ``first_share``). Shadow policies get their
own rows (``mode: "shadow"``).

**Trend tests**: for each dial among the ``--by`` fields, within each combination of
the other fields that has at least two levels of it, Kendall's τ-b between the dial
and the per-observation value: α ↔ each user turn's fillers + repetitions per 1,000
words (turns with no words left out), β ↔ interruptions in each agent turn, γ ↔
backchannels in each agent turn.

Each turn-taking row also carries the **negative control** beside the rates:
mid-turn pauses per minute of agent speech before any action in the turn
(:mod:`replay.audit_sessions`), which no dial can move, and the raw pause events,
which cuts do move.

**Paired tests against the baseline, by session.** A condition's baseline for a
metric is the condition equal in every other field with the metric's dial at 0:
interruptions ↔ β, backchannels ↔ γ, disfluencies (fillers + repetitions) ↔ α. The
negative control (pauses per minute of agent speech before any action) and the raw
pause events (which a cut moves: it takes the rest of the turn's pauses with it)
compare each condition with any dial above 0 to the condition with all dials at 0. A pair
is one *session* under both conditions: the same :func:`~replay.audit_sessions.pair_key`
(scenario · run · base seed, as logged), so 20 runs of one scenario are 20 pairs.
A key seen twice within one condition cannot pair one to one: those sessions are
left out and counted (``unpaired``). ``same_seed`` says whether every pair's call
seeds agree (``cutin simulate --paired``: identical timings). Below
:data:`MIN_PAIRS` pairs the row carries a ``note``: the smallest two-sided p the
signed-rank test can give with ``n`` pairs is ``2 / 2**n``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from replay.audit import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    ConversationSums,
    disfluency_stats,
    kendall_trend,
    paired_test,
    ratio,
)
from replay.audit_sessions import DIALS, PAIR_KEY_DOC, Behaviour, Conversation, condition_of

Row = dict[str, Any]
Key = tuple[tuple[str, str], ...]

MIN_PAIRS = 6
"""Fewer pairs than this and a two-sided signed-rank p cannot go below 0.05."""
NEGATIVE_CONTROL = "pauses_per_min_before_action"
OPENING_CONTROL = "pauses_per_min_opening"
"""The same rate in every turn's first six words, where no rule can act under any dial."""

# metric -> (dial, per-conversation value)
_PAIRED: dict[str, tuple[str, Callable[[Conversation], float | None]]] = {
    "interruptions": (
        "beta",
        lambda c: float(c.interruptions.actions) if c.turn_taking else None,
    ),
    "backchannels": (
        "gamma",
        lambda c: float(c.backchannels.actions) if c.turn_taking else None,
    ),
    "disfluencies": (
        "alpha",
        lambda c: float(sum(t.combined for t in c.turns)) if c.turns else None,
    ),
}


@dataclass(slots=True)
class AuditReport:
    """What ``cutin audit`` prints; :meth:`as_json` is the machine form."""

    by: list[str]
    disfluency: list[Row] = field(default_factory=list)
    disfluency_by: list[str] = field(default_factory=list)
    """The disfluency table's grouping fields (``by`` unless told otherwise)."""
    turn_taking: list[Row] = field(default_factory=list)
    tests: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    agent_under_test: list[Row] = field(default_factory=list)
    """Per condition, the black-box agent's measures (:mod:`replay.agent_measures`)."""

    def as_json(self) -> dict[str, list[Row]]:
        out = {"disfluency": self.disfluency, "turn_taking": self.turn_taking, "tests": self.tests}
        if self.agent_under_test:  # only when a call in the input was to a black-box agent
            out["agent_under_test"] = self.agent_under_test
        return out


def _norm(v: Any) -> Any:
    # 0 and 0.0 are one condition.
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


def _key(condition: dict[str, Any]) -> Key:
    return tuple((k, json.dumps(_norm(v), sort_keys=True)) for k, v in condition.items())


def _sort_value(v: Any) -> tuple[int, float, str]:
    if v is None:
        return (2, 0.0, "")
    if isinstance(v, bool):
        return (1, 0.0, str(v))
    if isinstance(v, int | float):
        return (0, float(v), "")
    return (1, 0.0, str(v))


@dataclass(slots=True)
class _Group:
    condition: dict[str, Any]
    conversations: list[Conversation] = field(default_factory=list)


def group(conversations: Iterable[Conversation], by: Sequence[str]) -> list[_Group]:
    """Conversations by condition, conditions in sorted order of their values."""
    groups: dict[Key, _Group] = {}
    for conv in conversations:
        cond = condition_of(conv, by)
        groups.setdefault(_key(cond), _Group(cond)).conversations.append(conv)
    return sorted(groups.values(), key=lambda g: [_sort_value(g.condition[f]) for f in by])


def _sums(convs: Sequence[Conversation]) -> ConversationSums:
    cols = np.zeros((len(convs), 8))
    for i, conv in enumerate(convs):
        for t in conv.turns:
            comb = t.combined
            cols[i] += (
                t.words,
                t.fillers,
                t.repetitions,
                t.initial_filler,
                1,
                comb > 0,
                comb,
                comb * comb,
            )
    return ConversationSums(*(np.ascontiguousarray(cols[:, j]) for j in range(8)))


def _interval(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


def disfluency_row(
    condition: dict[str, Any],
    convs: Sequence[Conversation],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Row:
    """One condition's disfluency row (conversations without user turns left out)."""
    with_turns = [c for c in convs if c.turns]
    s = disfluency_stats(_sums(with_turns), resamples=resamples, seed=seed)
    forms = {"adjacent": 0, "filler_separated": 0, "phrase": 0}
    for conv in with_turns:
        for t in conv.turns:
            forms["adjacent"] += t.adjacent
            forms["filler_separated"] += t.filler_separated
            forms["phrase"] += t.phrase
    return {
        "condition": condition,
        "conversations": s.conversations,
        "turns": s.turns,
        "words": s.words,
        "fillers": s.fillers,
        "repetitions": s.repetitions,
        "repetition_forms": forms,
        "fillers_per_1k": s.fillers_per_1k,
        "repetitions_per_1k": s.repetitions_per_1k,
        "combined_per_1k": s.combined_per_1k,
        "combined_ci": _interval(s.combined_ci),
        "initial_fillers": s.initial_fillers,
        "initial_share": s.initial_share,
        "initial_ci": _interval(s.initial_ci),
        "any_share": s.any_share,
        "vmr": s.vmr,
        "vmr_ci": _interval(s.vmr_ci),
    }


def _positions(values: Iterable[int]) -> dict[str, int]:
    out: dict[int, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return {str(k): out[k] for k in sorted(out)}


def negative_control(convs: Sequence[Conversation]) -> Row:
    """Pooled over the conversations: pauses per minute of agent speech before any
    action, its counts, and the raw pause events."""
    measured = [c for c in convs if c.pre_action_pauses is not None]
    pauses = sum(c.pre_action_pauses or 0 for c in measured)
    speech = sum(c.pre_action_speech_s or 0.0 for c in measured)
    opening = sum(c.opening_pauses or 0 for c in measured)
    opening_speech = sum(c.opening_speech_s or 0.0 for c in measured)
    events = [c.pause_events for c in convs if c.pause_events is not None]
    return {
        "pause_events": sum(events) if events else None,
        "pre_action_pauses": pauses if measured else None,
        "pre_action_speech_s": round(speech, 3) if measured else None,
        NEGATIVE_CONTROL: ratio(60.0 * pauses, speech) if measured else None,
        "opening_pauses": opening if measured else None,
        "opening_speech_s": round(opening_speech, 3) if measured else None,
        OPENING_CONTROL: ratio(60.0 * opening, opening_speech) if measured else None,
    }


def turn_taking_rows(condition: dict[str, Any], convs: Sequence[Conversation]) -> list[Row]:
    """The condition's interruption and backchannel rows, then any shadow rows."""
    tt = [c for c in convs if c.turn_taking]
    if not tt:
        return []
    agent_turns = sum(c.agent_turns for c in tt)
    units = sorted({c.opportunity_unit for c in tt})
    control = negative_control(tt)
    rows: list[Row] = []
    for name in ("interruption", "backchannel"):
        parts: list[Behaviour] = [
            c.interruptions if name == "interruption" else c.backchannels for c in tt
        ]
        opportunities = sum(p.opportunities for p in parts)
        actions = sum(p.actions for p in parts)
        manual = sum(p.manual for p in parts)
        positions = [pos for p in parts for pos in p.positions]
        rows.append(
            {
                "condition": condition,
                "behavior": name,
                "mode": "auto",
                "policy": None,
                "unit": "/".join(units),
                "conversations": len(tt),
                "opportunities": opportunities,
                "actions": actions,
                "per_opportunity": ratio(actions, opportunities),
                "agent_turns": agent_turns,
                "per_turn": ratio(actions, agent_turns),
                "manual": manual,
                "manual_per_turn": ratio(manual, agent_turns),
                "auto_events": sum(p.auto_events for p in parts),
                "positions": _positions(positions),
                "first_share": ratio(sum(1 for p in positions if p == 1), len(positions)),
                **control,
            }
        )
    policies = sorted({name for c in tt for name in c.shadows})
    for policy in policies:
        shadows = [c.shadows[policy] for c in tt if policy in c.shadows]
        opportunities = sum(s.opportunities for s in shadows)
        for name, actions in (
            ("interruption", sum(s.interruptions for s in shadows)),
            ("backchannel", sum(s.backchannels for s in shadows)),
        ):
            rows.append(
                {
                    "condition": condition,
                    "behavior": name,
                    "mode": "shadow",
                    "policy": policy,
                    "unit": "/".join(units),
                    "conversations": len(shadows),
                    "opportunities": opportunities,
                    "actions": actions,
                    "per_opportunity": ratio(actions, opportunities),
                    "agent_turns": agent_turns,
                    "per_turn": ratio(actions, agent_turns),
                }
            )
    return rows


def _trend_observations(convs: Sequence[Conversation], dial: str) -> tuple[str, list[float]]:
    if dial == "alpha":
        return "combined_per_1k_per_turn", [
            1000.0 * t.combined / t.words for c in convs for t in c.turns if t.words
        ]
    pick = "interruptions" if dial == "beta" else "backchannels"
    return f"{pick}_per_agent_turn", [
        float(v) for c in convs if c.turn_taking for v in getattr(c, pick).per_agent_turn
    ]


def trend_rows(groups: Sequence[_Group], by: Sequence[str]) -> list[Row]:
    """Kendall τ-b of each dial in ``by`` against its realized value, per stratum."""
    rows: list[Row] = []
    for dial in (d for d in DIALS if d in by):
        others = [f for f in by if f != dial]
        strata: dict[Key, list[_Group]] = {}
        for g in groups:
            if g.condition.get(dial) is None:
                continue
            stratum = {f: g.condition[f] for f in others}
            strata.setdefault(_key(stratum), []).append(g)
        for members in strata.values():
            levels = sorted({float(g.condition[dial]) for g in members})
            if len(levels) < 2:
                continue
            xs: list[float] = []
            ys: list[float] = []
            metric = ""
            for g in members:
                metric, values = _trend_observations(g.conversations, dial)
                xs.extend([float(g.condition[dial])] * len(values))
                ys.extend(values)
            if not ys:
                continue
            trend = kendall_trend(xs, ys)
            rows.append(
                {
                    "test": "kendall_tau_b",
                    "condition": {f: members[0].condition[f] for f in others},
                    "field": dial,
                    "levels": levels,
                    "metric": metric,
                    "n": trend.n,
                    "tau_b": trend.tau_b,
                    "p": trend.p,
                }
            )
    return rows


def _by_session(
    convs: Sequence[Conversation], value: Callable[[Conversation], float | None]
) -> tuple[dict[tuple[str, ...], tuple[float, int | None]], int]:
    """Each session's value and call seed, by pair key; and how many sessions were
    left out because their key is missing or seen twice in this condition."""
    out: dict[tuple[str, ...], tuple[float, int | None]] = {}
    twice: set[tuple[str, ...]] = set()
    dropped = 0
    for c in convs:
        v = value(c)
        key = c.pair_key
        if v is None:
            continue
        if key is None:
            dropped += 1
        elif key in out or key in twice:
            twice.add(key)
        else:
            out[key] = (v, c.call_seed)
    for key in twice:
        out.pop(key, None)
    dropped += sum(1 for c in convs if c.pair_key in twice and value(c) is not None)
    return out, dropped


def pairs_note(pairs: int) -> str | None:
    """Why a p from this few pairs says little (None from :data:`MIN_PAIRS` on)."""
    if pairs >= MIN_PAIRS:
        return None
    floor = 2.0 / 2.0**pairs
    return (
        f"only {pairs} pair{'s' if pairs != 1 else ''}: the smallest two-sided p a "
        f"signed-rank test can give is {floor:.2g}; run more sessions (--runs)"
    )


def _paired_row(
    metric: str,
    treatment: _Group,
    baseline: _Group,
    value: Callable[[Conversation], float | None],
    *,
    resamples: int,
    seed: int,
) -> Row | None:
    t, t_out = _by_session(treatment.conversations, value)
    b, b_out = _by_session(baseline.conversations, value)
    shared = sorted(set(t) & set(b))
    if not shared:
        return None
    test = paired_test(
        [t[k][0] for k in shared], [b[k][0] for k in shared], resamples=resamples, seed=seed
    )
    seeds = [(t[k][1], b[k][1]) for k in shared]
    same_seed = (
        None if any(x is None or y is None for x, y in seeds) else all(x == y for x, y in seeds)
    )
    return {
        "test": "wilcoxon",
        "condition": treatment.condition,
        "baseline": baseline.condition,
        "metric": metric,
        "paired_by": "session",
        "pair_key": PAIR_KEY_DOC,
        "same_seed": same_seed,
        "pairs": test.pairs,
        "unpaired": (len(t) - len(shared)) + (len(b) - len(shared)) + t_out + b_out,
        "nonzero": test.nonzero,
        "mean_diff": test.mean_diff,
        "ci": _interval(test.ci),
        "w": test.w,
        "p": test.p,
        "note": pairs_note(test.pairs),
    }


def paired_rows(
    groups: Sequence[_Group],
    by: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[Row]:
    """Each condition against its baseline per metric, then the negative control."""
    index = {_key(g.condition): g for g in groups}
    dials = [d for d in DIALS if d in by]
    rows: list[Row] = []

    def baseline_of(cond: dict[str, Any], zeroed: Sequence[str]) -> _Group | None:
        return index.get(_key({k: (0.0 if k in zeroed else v) for k, v in cond.items()}))

    for metric, (dial, value) in _PAIRED.items():
        if dial not in dials:
            continue
        for g in groups:
            level = g.condition.get(dial)
            if not isinstance(level, int | float) or level == 0:
                continue
            base = baseline_of(g.condition, [dial])
            if base is None or base is g:
                continue
            row = _paired_row(metric, g, base, value, resamples=resamples, seed=seed)
            if row is not None:
                rows.append(row)
    for g in groups:
        active = [d for d in dials if isinstance(g.condition.get(d), int | float)]
        if not any(g.condition[d] != 0 for d in active):
            continue
        base = baseline_of(g.condition, active)
        if base is None or base is g:
            continue
        controls: list[tuple[str, Callable[[Conversation], float | None]]] = [
            (NEGATIVE_CONTROL, lambda c: c.pauses_per_minute_before_action),
            (OPENING_CONTROL, lambda c: c.pauses_per_minute_opening),
            ("pause_events", lambda c: None if c.pause_events is None else float(c.pause_events)),
        ]
        for metric, value in controls:
            row = _paired_row(metric, g, base, value, resamples=resamples, seed=seed)
            if row is not None:
                rows.append(row)
    return rows


def build_report(
    conversations: Sequence[Conversation],
    by: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    disfluency_by: Sequence[str] | None = None,
) -> AuditReport:
    """Every row of an audit of ``conversations`` grouped by the ``by`` fields; the
    disfluency table by ``disfluency_by`` when given (e.g. the user simulator's model)."""
    groups = group(conversations, by)
    report = AuditReport(list(by), resamples=resamples, seed=seed)
    report.disfluency_by = list(by if disfluency_by is None else disfluency_by)
    for g in group(conversations, report.disfluency_by) if disfluency_by is not None else groups:
        if any(c.turns for c in g.conversations):
            report.disfluency.append(
                disfluency_row(g.condition, g.conversations, resamples=resamples, seed=seed)
            )
    for g in groups:
        report.turn_taking.extend(turn_taking_rows(g.condition, g.conversations))
    report.tests.extend(trend_rows(groups, by))
    report.tests.extend(paired_rows(groups, by, resamples=resamples, seed=seed))
    from replay.agent_measures import condition_rows

    report.agent_under_test = condition_rows(groups, resamples=resamples, seed=seed)
    report.warnings.extend(w for c in conversations for w in c.warnings)
    return report


__all__ = [
    "MIN_PAIRS",
    "NEGATIVE_CONTROL",
    "AuditReport",
    "Row",
    "build_report",
    "disfluency_row",
    "group",
    "negative_control",
    "paired_rows",
    "pairs_note",
    "trend_rows",
    "turn_taking_rows",
]
