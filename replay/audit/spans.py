"""The dials a call ran under, span by span: which condition each decision belongs to.

A call starts under the header's dials (α, β, γ and the auto toggles). The tester may
move a dial mid-call (a ``dials`` event); from then on the decisions are made under
the new one. Every ``opportunity``, ``interruption`` and ``backchannel`` logs the dials
in force (``tendencies``, ``autos``); logs written before that field existed are read
by log order (the header's dials, then each ``dials`` event's).

A call whose dials changed is *mixed*: it belongs to no single condition. The audit
leaves it out of its condition tables and tests and lists it span by span instead
(:func:`dial_spans`), with plain counts and no interval: spans of one call are not
independent sessions (what was decided under the first dial shapes the conversation
the second one sees), so they cannot be pooled with other calls or resampled as if
they were, nor paired with a baseline session.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replay.audit.counter import TurnCounts, count
from sessions.log.models import (
    AgentTurnStart,
    Backchannel,
    DialsChanged,
    Event,
    Interruption,
    Opportunity,
    TendencyValues,
    UserTurn,
)
from sessions.log.realized import BACKCHANNEL, INTERRUPT


@dataclass(frozen=True, slots=True)
class DialState:
    """The dials in force: the three tendencies and the two auto toggles."""

    alpha: float
    beta: float
    gamma: float
    interrupt: bool = True
    backchannel: bool = True

    @classmethod
    def of(
        cls,
        tendencies: TendencyValues | Mapping[str, Any] | None,
        autos: Mapping[str, Any] | None,
        base: DialState | None = None,
    ) -> DialState:
        """From a logged ``tendencies`` and ``autos``; what they leave out is ``base``'s."""
        b = base or cls(0.0, 0.0, 0.0)
        if isinstance(tendencies, TendencyValues):
            a, be, g = tendencies.alpha, tendencies.beta, tendencies.gamma
        elif isinstance(tendencies, Mapping):
            a = _num(tendencies.get("alpha"), b.alpha)
            be = _num(tendencies.get("beta"), b.beta)
            g = _num(tendencies.get("gamma"), b.gamma)
        else:
            a, be, g = b.alpha, b.beta, b.gamma
        autos = autos or {}
        return cls(
            float(a),
            float(be),
            float(g),
            bool(autos.get("interrupt", b.interrupt)),
            bool(autos.get("backchannel", b.backchannel)),
        )

    def label(self) -> str:
        """``α 0.5 · β 0.8 · γ 0.5`` (and which auto was off)."""
        text = f"α {self.alpha:g} · β {self.beta:g} · γ {self.gamma:g}"
        if not self.interrupt:
            text += " · auto-interrupt off"
        if not self.backchannel:
            text += " · auto-backchannel off"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "gamma": self.gamma,
            "auto_interrupt": self.interrupt,
            "auto_backchannel": self.backchannel,
        }


def _num(v: Any, default: float) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else default


@dataclass(slots=True)
class Span:
    """One stretch of a call under one set of dials, and what happened in it."""

    dials: DialState
    start_t: float
    end_t: float | None = None
    agent_turns: int = 0
    opportunities: int = 0
    interruptions: int = 0
    backchannels: int = 0
    manual: int = 0
    """Manual interruptions and backchannels."""
    turns: list[TurnCounts] = field(default_factory=list)
    """The caller's turns said in this span."""

    def as_row(self) -> dict[str, Any]:
        words = sum(t.words for t in self.turns)
        combined = sum(t.combined for t in self.turns)
        return {
            "dials": self.dials.as_dict(),
            "label": self.dials.label(),
            "start_t": round(self.start_t, 3),
            "end_t": None if self.end_t is None else round(self.end_t, 3),
            "agent_turns": self.agent_turns,
            "opportunities": self.opportunities,
            "interruptions": self.interruptions,
            "backchannels": self.backchannels,
            "manual": self.manual,
            "user_turns": len(self.turns),
            "words": words,
            "disfluencies": combined,
        }


def header_dials(header: Mapping[str, Any]) -> DialState:
    """The dials a call started under, from its header as plain data."""
    tendencies = header.get("tendencies")
    autos = header.get("autos")
    return DialState.of(
        tendencies if isinstance(tendencies, Mapping) else None,
        autos if isinstance(autos, Mapping) else None,
    )


def dial_spans(
    header: Mapping[str, Any],
    events: Sequence[Event],
    counted: Sequence[Opportunity],
) -> list[Span]:
    """The call's spans in time order (one when the dials never changed).

    ``counted`` are the acting policy's opportunities that count
    (:meth:`sessions.log.realized.RealizedCounter.counted`); a decision's span is the
    dials it logged (else the ones in force by log order). A ``dials`` event that sets
    the values already in force starts no span."""
    keep = {id(o) for o in counted}
    current = header_dials(header)
    spans = [Span(current, 0.0)]

    def enter(state: DialState, t: float) -> Span:
        span = spans[-1]
        if state != span.dials:
            span.end_t = t
            span = Span(state, t)
            spans.append(span)
        return span

    for e in events:
        if isinstance(e, DialsChanged):
            current = DialState.of(e.tendencies, e.autos, current)
            enter(current, e.t)
        elif isinstance(e, Opportunity):
            if id(e) not in keep:
                continue
            span = enter(DialState.of(e.tendencies, e.autos, current), e.t)
            current = span.dials
            span.opportunities += 1
            if e.executed and e.decision == INTERRUPT:
                span.interruptions += 1
            elif e.executed and e.decision == BACKCHANNEL:
                span.backchannels += 1
        elif isinstance(e, Interruption | Backchannel):
            if e.trigger == "manual":
                span = enter(DialState.of(e.tendencies, e.autos, current), e.t)
                current = span.dials
                span.manual += 1
        elif isinstance(e, AgentTurnStart):
            spans[-1].agent_turns += 1
        elif isinstance(e, UserTurn):
            spans[-1].turns.append(count(e.rendered))
    return spans


def changes(spans: Sequence[Span]) -> str:
    """``β 0 → 0.8 at 12.3 s`` for each change between consecutive spans."""
    out: list[str] = []
    for before, after in itertools.pairwise(spans):
        a, b = before.dials, after.dials
        moved = [
            f"{name} {x:g} → {y:g}"
            for name, x, y in (
                ("α", a.alpha, b.alpha),
                ("β", a.beta, b.beta),
                ("γ", a.gamma, b.gamma),
            )
            if x != y
        ]
        moved += [
            f"auto-{name} {'on' if y else 'off'}"
            for name, x, y in (
                ("interrupt", a.interrupt, b.interrupt),
                ("backchannel", a.backchannel, b.backchannel),
            )
            if x != y
        ]
        out.append(f"{', '.join(moved)} at {after.start_t:.1f} s")
    return "; ".join(out)


__all__ = ["DialState", "Span", "changes", "dial_spans", "header_dials"]
