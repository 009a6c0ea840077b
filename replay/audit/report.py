"""Conversations → the audit's rows: disfluency, turn-taking, tests. Pure; JSON-ready.

Rows are grouped by *condition*: the values of the ``--by`` fields (default α, β, γ,
policy, model) in each conversation's header.

**Disfluency row** (conversations that have user turns): totals, rates per 1,000
words, the combined rate's and turn-initial share's 95% bootstrap intervals and the
VMR of per-turn fillers + repetitions with its interval (:mod:`replay.audit.stats`).

**Turn-taking rows** (conversations that record turn-taking), one per behaviour:
opportunities, actions, actions per opportunity, agent turns, actions per agent
turn, manual actions apart, and where actions land (``positions``: how many took
the turn's 1st, 2nd, ... opportunity; ``first_share``). Shadow policies get their
own rows (``mode: "shadow"``).

Each turn-taking row also carries the **negative control** beside the rates:
mid-turn pauses per minute of agent speech before any action in the turn
(:mod:`replay.audit.sessions`), which no dial can move, and the raw pause events,
which cuts do move.

**Trend and paired tests** (:mod:`replay.audit.dial_tests`): Kendall's τ-b of each
dial against its realized value, and each condition against its baseline by session.

What keeps the rows from misleading (docs/audit.md says what each note means):

* a call whose dials changed mid-call (:mod:`replay.audit.spans`) is in no condition
  row and no test: it is listed span by span (``mixed_calls``);
* a rate over fewer than :data:`~replay.audit.stats.MIN_EVENTS` events, or over one
  conversation, has no interval (the row's ``hidden`` says why), and the tables print
  its count instead of a percentage;
* disfluency is also given per source of the caller's text (``disfluency_by_source``:
  typed, scenario line, LLM caller, interruption), so α is compared within a source;
* a condition that pools calls to different agents is noted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from replay.audit.caveats import gate_agent_rows, mixed_rows, pooled_agents
from replay.audit.counter import TurnCounts
from replay.audit.dial_tests import (
    MIN_PAIRS,
    NEGATIVE_CONTROL,
    OPENING_CONTROL,
    paired_rows,
    pairs_note,
    trend_rows,
)
from replay.audit.groups import Row, group, interval
from replay.audit.sessions import SOURCES, Behaviour, Conversation, untranscribed_note
from replay.audit.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_EVENTS,
    ConversationSums,
    disfluency_stats,
    ratio,
    too_few,
)


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
    """Per condition, the black-box agent's measures (:mod:`replay.audit.agent_measures`)."""
    by_source: list[Row] = field(default_factory=list)
    """The disfluency rows again, per source of the caller's text."""
    mixed: list[Row] = field(default_factory=list)
    """Calls whose dials changed mid-call, span by span (in no condition row)."""
    notes: list[str] = field(default_factory=list)
    """What the reader must know to read the tables right (pooled agents, ...)."""

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "disfluency": self.disfluency,
            "disfluency_by_source": self.by_source,
            "turn_taking": self.turn_taking,
            "tests": self.tests,
            "mixed_calls": self.mixed,
            "notes": self.notes,
            "min_events": MIN_EVENTS,
        }
        if self.agent_under_test:  # only when a call in the input was to a black-box agent
            out["agent_under_test"] = self.agent_under_test
        return out


def _sums(convs: Sequence[Sequence[TurnCounts]]) -> ConversationSums:
    """Per-conversation totals of each conversation's turns."""
    cols = np.zeros((len(convs), 8))
    for i, turns in enumerate(convs):
        for t in turns:
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


def disfluency_row(
    condition: dict[str, Any],
    convs: Sequence[Conversation],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Row:
    """One condition's disfluency row (conversations without user turns left out)."""
    with_turns = [c.turns for c in convs if c.turns]
    row = _disfluency_numbers(with_turns, resamples=resamples, seed=seed)
    return {"condition": condition, **row}


def _disfluency_numbers(convs: Sequence[Sequence[TurnCounts]], *, resamples: int, seed: int) -> Row:
    """The disfluency figures of these conversations' turns; an interval over too few
    events or one conversation is None, and ``hidden`` says why."""
    s = disfluency_stats(_sums(convs), resamples=resamples, seed=seed)
    forms = {"adjacent": 0, "filler_separated": 0, "phrase": 0}
    for turns in convs:
        for t in turns:
            forms["adjacent"] += t.adjacent
            forms["filler_separated"] += t.filler_separated
            forms["phrase"] += t.phrase
    hidden: dict[str, str] = {}
    shown: dict[str, list[float] | None] = {}
    for key, ci, events in (
        ("combined_ci", s.combined_ci, s.fillers + s.repetitions),
        ("initial_ci", s.initial_ci, s.fillers),
        ("vmr_ci", s.vmr_ci, s.turns),
    ):
        why = too_few(events, s.conversations)
        if why is not None:
            hidden[key] = why
        shown[key] = None if why is not None else interval(ci)
    return {
        "conversations": s.conversations,
        "turns": s.turns,
        "words": s.words,
        "fillers": s.fillers,
        "repetitions": s.repetitions,
        "repetition_forms": forms,
        "fillers_per_1k": s.fillers_per_1k,
        "repetitions_per_1k": s.repetitions_per_1k,
        "combined_per_1k": s.combined_per_1k,
        "combined_ci": shown["combined_ci"],
        "initial_fillers": s.initial_fillers,
        "initial_share": s.initial_share,
        "initial_ci": shown["initial_ci"],
        "any_share": s.any_share,
        "vmr": s.vmr,
        "vmr_ci": shown["vmr_ci"],
        "hidden": hidden,
    }


def by_source_rows(
    condition: dict[str, Any],
    convs: Sequence[Conversation],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[Row]:
    """The condition's disfluency per source of the caller's text (:data:`SOURCES`).
    An interruption's turn opens with a scenario opener, so at the same α a call at
    β > 0 says other text than one at β 0: α is compared within one source."""
    sources: dict[str, list[list[TurnCounts]]] = {}
    for conv in convs:
        mine: dict[str, list[TurnCounts]] = {}
        for i, t in enumerate(conv.turns):
            mine.setdefault(conv.source_of(i), []).append(t)
        for source, turns in mine.items():
            sources.setdefault(source, []).append(turns)
    order = list(SOURCES)
    return [
        {
            "condition": condition,
            "source": source,
            "source_label": SOURCES.get(source, source),
            **_disfluency_numbers(sources[source], resamples=resamples, seed=seed),
        }
        for source in sorted(sources, key=lambda x: (order.index(x) if x in order else 99, x))
    ]


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
        counts = (
            ("per_opportunity", opportunities),
            ("per_turn", agent_turns),
            ("first_share", len(positions)),
            (NEGATIVE_CONTROL, control["pre_action_pauses"] or 0),
            (OPENING_CONTROL, control["opening_pauses"] or 0),
        )
        hidden = {key: why for key, events in counts if (why := too_few(events)) is not None}
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
                "hidden": hidden,
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
    report = AuditReport(list(by), resamples=resamples, seed=seed)
    mixed = [c for c in conversations if c.mixed]
    conversations = [c for c in conversations if not c.mixed]
    report.mixed = mixed_rows(mixed)
    if mixed:
        report.notes.append(
            f"{len(mixed)} call{'s' if len(mixed) != 1 else ''} whose dials changed mid-call "
            "left out of the condition tables and tests (listed by span): the spans of one "
            "call are not independent sessions"
        )
    groups = group(conversations, by)
    report.disfluency_by = list(by if disfluency_by is None else disfluency_by)
    for g in group(conversations, report.disfluency_by) if disfluency_by is not None else groups:
        if any(c.turns for c in g.conversations):
            report.disfluency.append(
                disfluency_row(g.condition, g.conversations, resamples=resamples, seed=seed)
            )
            report.by_source.extend(
                by_source_rows(g.condition, g.conversations, resamples=resamples, seed=seed)
            )
    report.notes.extend(pooled_agents(groups))
    untranscribed = untranscribed_note(conversations)
    if untranscribed is not None:
        report.notes.append(untranscribed)
    for g in groups:
        report.turn_taking.extend(turn_taking_rows(g.condition, g.conversations))
    report.tests.extend(trend_rows(groups, by))
    report.tests.extend(paired_rows(groups, by, resamples=resamples, seed=seed))
    from replay.audit.agent_measures import condition_rows

    report.agent_under_test = gate_agent_rows(
        condition_rows(groups, resamples=resamples, seed=seed)
    )
    report.warnings.extend(w for c in [*conversations, *mixed] for w in c.warnings)
    return report


__all__ = [
    "MIN_PAIRS",
    "NEGATIVE_CONTROL",
    "AuditReport",
    "Row",
    "build_report",
    "by_source_rows",
    "disfluency_row",
    "group",
    "negative_control",
    "paired_rows",
    "pairs_note",
    "trend_rows",
    "turn_taking_rows",
]
