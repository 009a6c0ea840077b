"""What a call realized: the one count of agent turns, opportunities and actions.

The live panel, ``cutin simulate``'s summary, ``cutin audit`` and the reports all
count through here, so they never disagree (it lives in the log layer because
``sessions`` may not import ``replay``):

* *agent turns* are ``agent_turn_start`` events;
* an *opportunity* is an ``opportunity`` event that is not ``shadow``; it is taken
  back when its pause grows into a turn end (a ``turn_end`` naming its
  ``short_pause`` index, or the pause marked ``became_turn_end`` by
  :func:`sessions.log.read_session`) unless it was executed: the action itself is
  what ended the turn. An opportunity without a pause (a polling policy's
  consultation) cannot grow into a turn end;
* *interruptions* and *backchannels* are executed opportunities by decision;
  ``manual`` key presses are counted apart, and the logged ``auto`` action events
  are kept as a cross-check (an action delayed by a policy's latency may never
  happen);
* *shadow* opportunities get the same take-back; their actions are the decisions
  they would have made.

Use :func:`realized` on a list of events, or keep a :class:`RealizedCounter` and
:meth:`~RealizedCounter.feed` it each event as it is logged (O(1) per event).
:meth:`RealizedCounter.counted` gives the opportunities that count, per opportunity,
for what needs more than totals (where in its agent turn an action lands).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from sessions.log.models import (
    AgentTurnStart,
    Backchannel,
    Event,
    Interruption,
    Opportunity,
    ShortPause,
    TurnEnd,
)

INTERRUPT = "INTERRUPT"
BACKCHANNEL = "BACKCHANNEL"


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
    seen_opportunities: int = 0
    """Every non-shadow opportunity, the ones taken back included."""
    taken_back: int = 0
    """Non-shadow opportunities whose pause became a turn end (not in the denominator)."""
    interruption_events: int = 0
    """Logged ``interruption`` events triggered automatically (the cross-check)."""
    backchannel_events: int = 0
    """Logged ``backchannel`` events triggered automatically (the cross-check)."""
    pauses: int = 0
    """``short_pause`` events."""

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
    agent_turn_numbers: list[int] = field(default_factory=list)
    """The agent turns started, in log order (for per-turn series)."""
    _counted: dict[int, Opportunity] = field(default_factory=dict)
    """Arrival number → opportunity, for every opportunity still counted (shadow too)."""
    _open: dict[int, list[int]] = field(default_factory=dict)
    """Pause index → arrival numbers of its counted, not executed opportunities: what
    a later turn end at that pause takes back."""
    _grown: set[int] = field(default_factory=set)
    """Pauses known to have become turn ends."""
    _arrivals: int = 0

    def feed(self, event: Event) -> Realized:
        """Account for one event; returns the new snapshot."""
        handler = _FEED.get(type(event))
        if handler is not None:
            self.snapshot = handler(self, event, self.snapshot)
        return self.snapshot

    def counted(self, *, shadow: bool = False) -> list[Opportunity]:
        """The opportunities that count so far, in log order: the acting policy's, or
        with ``shadow`` the shadow policies'."""
        return [o for o in self._counted.values() if (o.mode == "shadow") == shadow]

    def _agent_turn_start(self, e: Event, s: Realized) -> Realized:
        self.agent_turn_numbers.append(getattr(e, "turn", len(self.agent_turn_numbers)))
        return replace(s, agent_turns=s.agent_turns + 1)

    def _short_pause(self, e: Event, s: Realized) -> Realized:
        if getattr(e, "became_turn_end", False):  # marked when a finished log was read
            self._grown.add(getattr(e, "index", -1))
        return replace(s, pauses=s.pauses + 1)

    def _opportunity(self, e: Event, s: Realized) -> Realized:
        assert isinstance(e, Opportunity)
        shadow = e.mode == "shadow"
        if not shadow:
            s = replace(s, seen_opportunities=s.seen_opportunities + 1)
        if not e.executed and e.pause_index is not None:
            if e.pause_index in self._grown:
                return s if shadow else replace(s, taken_back=s.taken_back + 1)
            self._open.setdefault(e.pause_index, []).append(self._arrivals)
        self._counted[self._arrivals] = e
        self._arrivals += 1
        return _add(s, shadow, e.decision, e.executed, +1)

    def _turn_end(self, e: Event, s: Realized) -> Realized:
        # The pause grew into a turn end: it was never a mid-turn opportunity.
        pause = getattr(e, "short_pause_index", None)
        if pause is None:
            return s
        self._grown.add(pause)
        for key in self._open.pop(pause, []):
            o = self._counted.pop(key)
            shadow = o.mode == "shadow"
            s = _add(s, shadow, o.decision, False, -1)
            if not shadow:
                s = replace(s, taken_back=s.taken_back + 1)
        return s

    def _interruption(self, e: Event, s: Realized) -> Realized:
        if getattr(e, "trigger", "auto") == "manual":
            return replace(s, manual_interruptions=s.manual_interruptions + 1)
        return replace(s, interruption_events=s.interruption_events + 1)

    def _backchannel(self, e: Event, s: Realized) -> Realized:
        if getattr(e, "trigger", "auto") == "manual":
            return replace(s, manual_backchannels=s.manual_backchannels + 1)
        return replace(s, backchannel_events=s.backchannel_events + 1)


_FEED: dict[type[Event], Callable[[RealizedCounter, Event, Realized], Realized]] = {
    AgentTurnStart: RealizedCounter._agent_turn_start,
    ShortPause: RealizedCounter._short_pause,
    Opportunity: RealizedCounter._opportunity,
    TurnEnd: RealizedCounter._turn_end,
    Interruption: RealizedCounter._interruption,
    Backchannel: RealizedCounter._backchannel,
}
"""Event model → how it moves the counts (every other event leaves them alone)."""


def _add(s: Realized, shadow: bool, decision: str, executed: bool, sign: int) -> Realized:
    interrupt = decision == INTERRUPT
    backchannel = decision == BACKCHANNEL
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


def count(events: Iterable[Event]) -> RealizedCounter:
    """A counter fed every event of ``events`` (in log order)."""
    counter = RealizedCounter()
    for e in events:
        counter.feed(e)
    return counter


def realized(events: Iterable[Event]) -> Realized:
    """Realized counts over ``events`` (in log order)."""
    return count(events).snapshot


__all__ = ["BACKCHANNEL", "INTERRUPT", "Realized", "RealizedCounter", "count", "realized"]
