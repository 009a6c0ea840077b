"""The live panel's counts: a thin view over :mod:`sessions.log.realized`.

The definitions are the audit's (one place, so the panel, ``cutin audit`` and the
batch summary never disagree): an opportunity is a non-shadow ``opportunity`` event,
taken back if its pause grows into a turn end unless it was acted on; automatic
interruptions/backchannels are executed opportunities; manual key presses are
counted apart. The panel also shows how many pauses left the denominator because
they became turn ends.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sessions.log.models import Event
from sessions.log.realized import Realized, RealizedCounter


@dataclass
class LiveCounts:
    """Counts so far; feed events in log order with :meth:`add`."""

    _counter: RealizedCounter = field(default_factory=RealizedCounter, repr=False)

    def add(self, event: Event) -> bool:
        """Fold one event in; True when a count changed."""
        before = self._counter.snapshot
        return self._counter.feed(event) != before

    @property
    def snapshot(self) -> Realized:
        return self._counter.snapshot

    @property
    def at_turn_end(self) -> int:
        """Opportunities whose pause became a turn end (not in the denominator)."""
        return self.snapshot.taken_back

    @property
    def opportunities(self) -> int:
        """Every opportunity the acting policy saw, turn-end pauses included."""
        return self.snapshot.seen_opportunities

    @property
    def agent_turns(self) -> int:
        return self.snapshot.agent_turns

    @property
    def mid_turn(self) -> int:
        """Opportunities in the per-opportunity denominator."""
        return self.snapshot.opportunities

    @property
    def interruptions_auto(self) -> int:
        return self.snapshot.interruptions

    @property
    def interruptions_manual(self) -> int:
        return self.snapshot.manual_interruptions

    @property
    def backchannels_auto(self) -> int:
        return self.snapshot.backchannels

    @property
    def backchannels_manual(self) -> int:
        return self.snapshot.manual_backchannels

    @property
    def taken_interrupt(self) -> int:
        return self.snapshot.interruptions

    @property
    def taken_backchannel(self) -> int:
        return self.snapshot.backchannels

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
