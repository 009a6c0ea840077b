"""Realized rates so far, for the live call's panel: pure, cheap, incremental.

Counted exactly as ``cutin audit`` counts a finished log (:mod:`replay.audit_sessions`),
so the panel and the audit never disagree: agent turns are ``agent_turn_start``
events; an opportunity is an ``opportunity`` event that is not ``shadow``, dropped
again if its pause later grows into a turn end (a ``turn_end`` naming its
``short_pause`` index) unless it was executed; interruptions and backchannels are
executed opportunities (``auto``), with ``manual`` key presses counted apart.

Use :func:`realized` on a list of events, or keep a :class:`RealizedCounter` and
:meth:`~RealizedCounter.feed` it each event as it is logged (O(1) per event).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessions.log.models import Event


@dataclass(frozen=True, slots=True)
class Realized:
    """A snapshot of the call so far."""

    agent_turns: int = 0
    opportunities: int = 0
    interruptions: int = 0
    """Automatic (executed opportunities)."""
    backchannels: int = 0
    manual_interruptions: int = 0
    manual_backchannels: int = 0
    shadow_opportunities: int = 0
    shadow_interruptions: int = 0
    shadow_backchannels: int = 0

    @staticmethod
    def _rate(num: int, den: int) -> float | None:
        return num / den if den else None

    @property
    def interruptions_per_turn(self) -> float | None:
        return self._rate(self.interruptions, self.agent_turns)

    @property
    def interruptions_per_opportunity(self) -> float | None:
        return self._rate(self.interruptions, self.opportunities)

    @property
    def backchannels_per_turn(self) -> float | None:
        return self._rate(self.backchannels, self.agent_turns)

    @property
    def backchannels_per_opportunity(self) -> float | None:
        return self._rate(self.backchannels, self.opportunities)

    def line(self) -> str:
        """The panel's one line, e.g. ``agent turns 4 · opportunities 11 ·
        interruptions 2 (0.50/turn, 18%) · backchannels 3 (0.75/turn, 27%)``."""

        def part(name: str, n: int, per_turn: float | None, per_opp: float | None, man: int) -> str:
            rates = []
            if per_turn is not None:
                rates.append(f"{per_turn:.2f}/turn")
            if per_opp is not None:
                rates.append(f"{100 * per_opp:.0f}%")
            text = f"{name} {n}" + (f" ({', '.join(rates)})" if rates else "")
            return text + (f" +{man} manual" if man else "")

        return " · ".join(
            (
                f"agent turns {self.agent_turns}",
                f"opportunities {self.opportunities}",
                part(
                    "interruptions",
                    self.interruptions,
                    self.interruptions_per_turn,
                    self.interruptions_per_opportunity,
                    self.manual_interruptions,
                ),
                part(
                    "backchannels",
                    self.backchannels,
                    self.backchannels_per_turn,
                    self.backchannels_per_opportunity,
                    self.manual_backchannels,
                ),
            )
        )


@dataclass(slots=True)
class RealizedCounter:
    """Running counts; :attr:`snapshot` is always current."""

    snapshot: Realized = field(default_factory=Realized)
    _open: dict[int, list[tuple[bool, str]]] = field(default_factory=dict)
    """Pause index → (shadow?, decision) of the counted, not executed opportunities
    there: what a later turn end at that pause takes back."""

    def feed(self, event: Event) -> Realized:
        """Account for one event; returns the new snapshot."""
        kind = getattr(event, "type", None)
        s = self.snapshot
        if kind == "agent_turn_start":
            s = replace(s, agent_turns=s.agent_turns + 1)
        elif kind == "opportunity":
            s = self._opportunity(event, s)
        elif kind == "turn_end":
            s = self._turn_end(getattr(event, "short_pause_index", None), s)
        elif kind == "interruption" and getattr(event, "trigger", "") == "manual":
            s = replace(s, manual_interruptions=s.manual_interruptions + 1)
        elif kind == "backchannel" and getattr(event, "trigger", "") == "manual":
            s = replace(s, manual_backchannels=s.manual_backchannels + 1)
        self.snapshot = s
        return s

    def _opportunity(self, e: Event, s: Realized) -> Realized:
        decision = str(getattr(e, "decision", ""))
        pause = getattr(e, "pause_index", None)
        executed = bool(getattr(e, "executed", False))
        shadow = getattr(e, "mode", "auto") == "shadow"
        if pause is not None and not executed:
            self._open.setdefault(pause, []).append((shadow, decision))
        return _add(s, shadow, decision, executed, +1)

    def _turn_end(self, pause: int | None, s: Realized) -> Realized:
        # The pause grew into a turn end: it was never a mid-turn opportunity.
        for shadow, decision in self._open.pop(pause, []) if pause is not None else []:
            s = _add(s, shadow, decision, False, -1)
        return s


def _add(s: Realized, shadow: bool, decision: str, executed: bool, sign: int) -> Realized:
    interrupt = decision == "INTERRUPT"
    backchannel = decision == "BACKCHANNEL"
    if shadow:
        return replace(
            s,
            shadow_opportunities=s.shadow_opportunities + sign,
            shadow_interruptions=s.shadow_interruptions + sign * interrupt,
            shadow_backchannels=s.shadow_backchannels + sign * backchannel,
        )
    return replace(
        s,
        opportunities=s.opportunities + sign,
        interruptions=s.interruptions + sign * (executed and interrupt),
        backchannels=s.backchannels + sign * (executed and backchannel),
    )


def realized(events: Iterable[Event]) -> Realized:
    """Realized counts over ``events`` (in log order)."""
    counter = RealizedCounter()
    for e in events:
        counter.feed(e)
    return counter.snapshot


__all__ = ["Realized", "RealizedCounter", "realized"]
