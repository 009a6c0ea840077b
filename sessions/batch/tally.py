"""What a finished call did (agent turns, interruptions, backchannels, errors, how it
ended), counted from its events, and the end-of-batch table per condition."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sessions.batch.plan import CallSpec, Condition
from sessions.log.models import LAG_LIMIT_S, EndEvent, ErrorEvent, Event, FrameLag, LineEvent
from sessions.log.realized import RealizedCounter

# ---- what a finished call did ---------------------------------------------------------


@dataclass(slots=True)
class CallTally:
    """Counts from one call's events: the realized counts of
    :mod:`sessions.log.realized` (the audit's and the live panel's), with every
    logged interruption and backchannel event (automatic or manual) as the actions,
    plus the errors and how the call ended."""

    agent_turns: int = 0
    opportunities: int = 0
    interruptions: int = 0
    backchannels: int = 0
    errors: list[str] = field(default_factory=list)
    end_reason: str | None = None
    frame_lag: FrameLag | None = None
    """A real-time call's frame lag, from its end event (None on the virtual clock)."""
    no_responses: int = 0
    """``line`` events of kind ``no_response`` (the agent did not answer in time); in a
    lagged call they may be this machine's lag, and the report says so."""
    _counter: RealizedCounter = field(default_factory=RealizedCounter, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        """The call reached its end (a crash's ``end`` does not count)."""
        return self.end_reason is not None and self.end_reason != "crash"

    def add(self, event: Event) -> None:
        """Count one event (usable as a call-loop listener)."""
        s = self._counter.feed(event)
        self.agent_turns = s.agent_turns
        self.opportunities = s.opportunities
        self.interruptions = s.interruption_events + s.manual_interruptions
        self.backchannels = s.backchannel_events + s.manual_backchannels
        if isinstance(event, ErrorEvent):
            self.errors.append(f"{event.where}: {event.message}" if event.where else event.message)
        elif isinstance(event, EndEvent):
            self.end_reason = event.reason
            self.frame_lag = event.frame_lag
        elif isinstance(event, LineEvent) and event.kind == "no_response":
            self.no_responses += 1

    @property
    def lagged(self) -> bool:
        """The call's p99 frame lag exceeded one frame: its timings are not trusted."""
        return self.frame_lag is not None and self.frame_lag.p99_s > LAG_LIMIT_S


def tally(events: Iterable[Event]) -> CallTally:
    """Count what happened in a call."""
    out = CallTally()
    for e in events:
        out.add(e)
    return out


@dataclass(slots=True)
class ConditionSummary:
    """One row of the end-of-batch table: every call of one condition, all scenarios."""

    condition: Condition
    calls: int = 0
    agent_turns: int = 0
    opportunities: int = 0
    interruptions: int = 0
    backchannels: int = 0

    @property
    def interruptions_per_turn(self) -> float | None:
        return self.interruptions / self.agent_turns if self.agent_turns else None

    @property
    def backchannels_per_turn(self) -> float | None:
        return self.backchannels / self.agent_turns if self.agent_turns else None

    def as_dict(self) -> dict[str, object]:
        return {
            "condition": self.condition.as_dict(),
            "label": self.condition.label,
            "calls": self.calls,
            "agent_turns": self.agent_turns,
            "opportunities": self.opportunities,
            "interruptions": self.interruptions,
            "backchannels": self.backchannels,
            "interruptions_per_turn": self.interruptions_per_turn,
            "backchannels_per_turn": self.backchannels_per_turn,
        }


def summarize(results: Iterable[tuple[CallSpec, CallTally]]) -> list[ConditionSummary]:
    """Per condition (in the order first seen), totals over the calls given."""
    rows: dict[Condition, ConditionSummary] = {}
    for spec, t in results:
        row = rows.setdefault(spec.condition, ConditionSummary(spec.condition))
        row.calls += 1
        row.agent_turns += t.agent_turns
        row.opportunities += t.opportunities
        row.interruptions += t.interruptions
        row.backchannels += t.backchannels
    return list(rows.values())
