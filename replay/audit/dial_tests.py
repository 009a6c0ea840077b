"""The audit's tests, per dial. Pure; JSON-ready rows.

**Trend tests**: for each dial among the ``--by`` fields, within each combination of
the other fields and each agent (kind, name and model: a trend never pools a scripted
agent with a black-box one) that has at least two levels of it, Kendall's τ-b between the dial
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
The key names the agent, so only calls of the same agent, agent kind and scenario
pair. A key seen twice within one condition cannot pair one to one: those sessions are
left out; every call left out is listed with the reason (``unpaired_calls``).
``same_seed`` says whether every pair's call seeds agree (``cutin simulate
--paired``: identical timings). Below :data:`MIN_PAIRS` pairs the row carries a
``note``: the smallest two-sided p the signed-rank test can give with ``n`` pairs
is ``2 / 2**n``; below :data:`~replay.audit.stats.MIN_EVENTS` pairs the mean
difference has no interval.

A negative control whose paired test comes out significant (p < 0.05) is flagged
(``flag``) with its likely cause, read from the same calls (:func:`control_cause`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from replay.audit.cells import condition_label
from replay.audit.groups import Group, Key, Row, condition_key, interval
from replay.audit.sessions import DIALS, PAIR_KEY_DOC, Conversation, agent_identity, agent_label
from replay.audit.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_EVENTS,
    kendall_trend,
    paired_test,
    too_few,
)

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
            agents: dict[tuple[str, ...], list[tuple[float, Conversation]]] = {}
            for g in members:
                for c in g.conversations:
                    agents.setdefault(agent_identity(c.header), []).append(
                        (float(g.condition[dial]), c)
                    )
            for calls in agents.values():
                row = _trend_row(dial, calls)
                if row is not None:
                    row["condition"] = {f: members[0].condition[f] for f in others}
                    rows.append(row)
    return rows


def _trend_row(dial: str, calls: Sequence[tuple[float, Conversation]]) -> Row | None:
    """τ-b over one agent's calls at two or more levels of ``dial``."""
    levels = sorted({level for level, _ in calls})
    if len(levels) < 2:
        return None
    xs: list[float] = []
    ys: list[float] = []
    metric = ""
    for level, c in calls:
        metric, values = _trend_observations([c], dial)
        xs.extend([level] * len(values))
        ys.extend(values)
    if not ys:
        return None
    trend = kendall_trend(xs, ys)
    return {
        "test": "kendall_tau_b",
        "field": dial,
        "agent": agent_label(calls[0][1].header),
        "levels": levels,
        "metric": metric,
        "n": trend.n,
        "tau_b": trend.tau_b,
        "p": trend.p,
    }


_Session = tuple[float, int | None, Conversation]


def _by_session(
    convs: Sequence[Conversation], value: Callable[[Conversation], float | None]
) -> tuple[dict[tuple[str, ...], _Session], list[tuple[Conversation, str]]]:
    """Each session's value, call seed and call, by pair key; and the calls left out
    because their key is missing or seen twice in this condition, with the reason."""
    out: dict[tuple[str, ...], _Session] = {}
    twice: set[tuple[str, ...]] = set()
    dropped: list[tuple[Conversation, str]] = []
    for c in convs:
        v = value(c)
        key = c.pair_key
        if v is None:
            continue
        if key is None:
            dropped.append((c, "no scenario to pair on"))
        elif key in out or key in twice:
            twice.add(key)
        else:
            out[key] = (v, c.call_seed, c)
    for key in twice:
        out.pop(key, None)
    dropped += [
        (c, "the same session (agent, scenario, run) twice in its condition")
        for c in convs
        if c.pair_key in twice and value(c) is not None
    ]
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
    if not (t or b or t_out or b_out):
        return None
    alone = [
        (t[k][2], f"no call of the same agent, kind and scenario under {condition_label(other)}")
        for k, other in ((k, baseline.condition) for k in sorted(set(t) - set(b)))
    ] + [
        (b[k][2], f"no call of the same agent, kind and scenario under {condition_label(other)}")
        for k, other in ((k, treatment.condition) for k in sorted(set(b) - set(t)))
    ]
    left_out = [*alone, *t_out, *b_out]
    unpaired_calls = [
        {"call": c.name, "agent": agent_label(c.header), "reason": why} for c, why in left_out
    ]
    if not shared:
        # Nothing to test; the row only says which calls found no partner and why.
        return {
            "test": "unpaired",
            "condition": treatment.condition,
            "baseline": baseline.condition,
            "metric": metric,
            "pairs": 0,
            "unpaired": len(left_out),
            "unpaired_calls": unpaired_calls,
        }
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
        "unpaired": len(left_out),
        "unpaired_calls": unpaired_calls,
        "nonzero": test.nonzero,
        "mean_diff": test.mean_diff,
        "ci": None if too_few(test.pairs, test.pairs) else interval(test.ci),
        "hidden": {"ci": why} if (why := too_few(test.pairs, test.pairs)) else {},
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
            if row is None:
                continue
            moved = row.get("p") is not None and row["p"] < CONTROL_ALPHA
            if moved and metric in (NEGATIVE_CONTROL, OPENING_CONTROL):
                row["flag"] = control_cause(g.conversations, base.conversations, metric)
            rows.append(row)
    return rows


CONTROL_ALPHA = 0.05
"""A negative control whose paired p falls below this is flagged."""
RATE_CHANGE = 0.05
"""The agent's speaking rate (words per second) differing by more than this share
between conditions is a change of rhythm."""
LENGTH_CHANGE = 0.15
"""The words of its replies as written (before any cut) per turn differing by more
than this share is a change of how long it means to speak."""


def control_cause(
    treatment: Sequence[Conversation], baseline: Sequence[Conversation], metric: str
) -> str:
    """The likely cause of a negative control that moved (no dial can move it): too few
    pauses or agent turns to measure it, the agent's speaking rate or the length of its
    replies as written (which cuts do not shorten) differing between the conditions,
    or an LLM agent whose replies differ."""
    opening = metric == OPENING_CONTROL

    def tally(convs: Sequence[Conversation]) -> tuple[int, int, int, float]:
        pauses = sum((c.opening_pauses if opening else c.pre_action_pauses) or 0 for c in convs)
        turns = sum(c.agent_turns for c in convs)
        words = sum(c.agent_words or 0 for c in convs)
        speech = sum(c.agent_speech_s or 0.0 for c in convs)
        return pauses, turns, words, speech

    tp, tt, tw, ts = tally(treatment)
    bp, bt, bw, bs = tally(baseline)
    causes: list[str] = []
    if min(tp, bp) < MIN_EVENTS or min(tt, bt) < MIN_EVENTS:
        causes.append(
            f"too few to measure ({bp} and {tp} pauses, {bt} and {tt} agent turns; "
            f"at least {MIN_EVENTS} of each)"
        )
    if bs > 0 and ts > 0:
        before, after = bw / bs, tw / ts
        if before > 0 and abs(after / before - 1) > RATE_CHANGE:
            causes.append(f"the agent's speaking rate changed ({before:.2f} → {after:.2f} words/s)")
    planned = [
        (sum(c.planned_words or 0 for c in convs), sum(c.planned_turns for c in convs))
        for convs in (baseline, treatment)
    ]
    if all(words and turns for words, turns in planned):
        before, after = (words / turns for words, turns in planned)
        if abs(after / before - 1) > LENGTH_CHANGE:
            causes.append(
                f"the agent's replies were written {'longer' if after > before else 'shorter'}"
                f" ({before:.1f} → {after:.1f} words per turn)"
            )
    models = sorted(
        {str(m) for c in [*treatment, *baseline] if (m := c.header.get("agent", {}).get("model"))}
    )
    if models:
        causes.append(f"an LLM agent ({', '.join(models)}): its replies differ between conditions")
    if not causes:
        causes.append("no cause found in the logs: the rule may be acting where it should not")
    return "; ".join(causes)


__all__ = [
    "MIN_PAIRS",
    "NEGATIVE_CONTROL",
    "OPENING_CONTROL",
    "control_cause",
    "paired_rows",
    "pairs_note",
    "trend_rows",
]
