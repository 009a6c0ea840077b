"""Realized counts of a call so far, folded one session-log event at a time.

Pure and incremental, so the live screen can keep them current and a test can
recompute them from a log file. Definitions (DESIGN.md, "Pauses and opportunities"):

* **agent turns**: agent turns that started speaking;
* **opportunities**: short pauses the acting policy was consulted at, or its
  consultations when it polls on a schedule (shadow decisions are not
  opportunities). A pause that later grew into a turn end is a legitimate
  turn-end silence and leaves the per-opportunity denominator (``mid_turn``);
  it is counted in ``at_turn_end`` instead;
* **interruptions / backchannels**: every one, automatic or manual. Per turn =
  all of them / agent turns. Per opportunity = the automatic ones taken *at* a
  mid-turn opportunity / mid-turn opportunities (a manual key press is not an
  opportunity's outcome).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sessions.log.models import (
    AgentTurnStart,
    Backchannel,
    Event,
    Interruption,
    Opportunity,
    TurnEnd,
)

INTERRUPT = "INTERRUPT"
BACKCHANNEL = "BACKCHANNEL"


@dataclass
class LiveCounts:
    """Counts so far; feed events in log order with :meth:`add`."""

    agent_turns: int = 0
    opportunities: int = 0
    at_turn_end: int = 0
    interruptions_auto: int = 0
    interruptions_manual: int = 0
    backchannels_auto: int = 0
    backchannels_manual: int = 0
    taken_interrupt: int = 0
    """Automatic interruptions executed at an opportunity still counted mid-turn."""
    taken_backchannel: int = 0
    _taken_at_pause: dict[int, str] = field(default_factory=dict, repr=False)
    _opportunity_pauses: set[int] = field(default_factory=set, repr=False)
    _turn_end_pauses: set[int] = field(default_factory=set, repr=False)

    def add(self, event: Event) -> bool:
        """Fold one event in; True when a count changed."""
        if isinstance(event, AgentTurnStart):
            self.agent_turns += 1
        elif isinstance(event, Opportunity):
            pause = event.pause_index
            if event.mode == "shadow" or (pause is not None and pause in self._opportunity_pauses):
                return False
            self.opportunities += 1
            taken = event.executed and event.decision in (INTERRUPT, BACKCHANNEL)
            if taken:
                self._count_taken(event.decision, +1)
            if pause is None:
                # A polling policy's consultation: no pause, so it never becomes a turn end.
                return True
            self._opportunity_pauses.add(pause)
            if taken:
                self._taken_at_pause[pause] = event.decision
            if pause in self._turn_end_pauses:
                self._leave_denominator(pause)
        elif isinstance(event, TurnEnd):
            index = event.short_pause_index
            if index is None or index in self._turn_end_pauses:
                return False
            self._turn_end_pauses.add(index)
            if index not in self._opportunity_pauses:
                return False
            self._leave_denominator(index)
        elif isinstance(event, Interruption):
            if event.trigger == "manual":
                self.interruptions_manual += 1
            else:
                self.interruptions_auto += 1
        elif isinstance(event, Backchannel):
            if event.trigger == "manual":
                self.backchannels_manual += 1
            else:
                self.backchannels_auto += 1
        else:
            return False
        return True

    def _leave_denominator(self, pause_index: int) -> None:
        self.at_turn_end += 1
        taken = self._taken_at_pause.pop(pause_index, None)
        if taken is not None:
            self._count_taken(taken, -1)

    def _count_taken(self, decision: str, delta: int) -> None:
        if decision == INTERRUPT:
            self.taken_interrupt += delta
        else:
            self.taken_backchannel += delta

    @property
    def mid_turn(self) -> int:
        """Opportunities in the per-opportunity denominator."""
        return self.opportunities - self.at_turn_end

    @property
    def interruptions(self) -> int:
        return self.interruptions_auto + self.interruptions_manual

    @property
    def backchannels(self) -> int:
        return self.backchannels_auto + self.backchannels_manual

    def per_turn(self, count: int) -> float | None:
        """``count`` per agent turn, or None before the first turn."""
        return count / self.agent_turns if self.agent_turns else None

    def per_opportunity(self, taken: int) -> float | None:
        """``taken`` per mid-turn opportunity, or None before the first."""
        return taken / self.mid_turn if self.mid_turn else None


def count_events(events: Iterable[Event]) -> LiveCounts:
    """The counts for a whole list of events (e.g. a session log's)."""
    counts = LiveCounts()
    for event in events:
        counts.add(event)
    return counts
