"""The audit's tests, per dial. Pure; JSON-ready rows.

**Trend tests**: for each dial among the ``--by`` fields, within each combination of
the other fields that has at least two levels of it, Kendall's τ-b between the dial
and the per-observation value: α ↔ each user turn's fillers + repetitions per 1,000
words (turns with no words left out), β ↔ interruptions in each agent turn, γ ↔
backchannels in each agent turn.

**Paired tests against the baseline, by session.** A condition's baseline for a
metric is the condition equal in every other field with the metric's dial at 0:
interruptions ↔ β, backchannels ↔ γ, disfluencies (fillers + repetitions) ↔ α. The
negative control (pauses per minute of agent speech before any action) and the raw
pause events (which a cut moves: it takes the rest of the turn's pauses with it)
compare each condition with any dial above 0 to the condition with all dials at 0. A pair
is one *session* under both conditions: the same :func:`~replay.audit.sessions.pair_key`
(scenario · run · base seed, as logged), so 20 runs of one scenario are 20 pairs.
A key seen twice within one condition cannot pair one to one: those sessions are
left out and counted (``unpaired``). ``same_seed`` says whether every pair's call
seeds agree (``cutin simulate --paired``: identical timings). Below
:data:`MIN_PAIRS` pairs the row carries a ``note``: the smallest two-sided p the
signed-rank test can give with ``n`` pairs is ``2 / 2**n``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from replay.audit.groups import Group, Key, Row, condition_key, interval
from replay.audit.sessions import DIALS, PAIR_KEY_DOC, Conversation
from replay.audit.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, kendall_trend, paired_test

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


def _trend_observations(convs: Sequence[Conversation], dial: str) -> tuple[str, list[float]]:
    if dial == "alpha":
        return "combined_per_1k_per_turn", [
            1000.0 * t.combined / t.words for c in convs for t in c.turns if t.words
        ]
    pick = "interruptions" if dial == "beta" else "backchannels"
    return f"{pick}_per_agent_turn", [
        float(v) for c in convs if c.turn_taking for v in getattr(c, pick).per_agent_turn
    ]


def trend_rows(groups: Sequence[Group], by: Sequence[str]) -> list[Row]:
    """Kendall τ-b of each dial in ``by`` against its realized value, per stratum."""
    rows: list[Row] = []
    for dial in (d for d in DIALS if d in by):
        others = [f for f in by if f != dial]
        strata: dict[Key, list[Group]] = {}
        for g in groups:
            if g.condition.get(dial) is None:
                continue
            stratum = {f: g.condition[f] for f in others}
            strata.setdefault(condition_key(stratum), []).append(g)
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
    treatment: Group,
    baseline: Group,
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
        "ci": interval(test.ci),
        "w": test.w,
        "p": test.p,
        "note": pairs_note(test.pairs),
    }


def paired_rows(
    groups: Sequence[Group],
    by: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[Row]:
    """Each condition against its baseline per metric, then the negative control."""
    index = {condition_key(g.condition): g for g in groups}
    dials = [d for d in DIALS if d in by]
    rows: list[Row] = []

    def baseline_of(cond: dict[str, Any], zeroed: Sequence[str]) -> Group | None:
        return index.get(condition_key({k: (0.0 if k in zeroed else v) for k, v in cond.items()}))

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


__all__ = [
    "MIN_PAIRS",
    "NEGATIVE_CONTROL",
    "OPENING_CONTROL",
    "paired_rows",
    "pairs_note",
    "trend_rows",
]
