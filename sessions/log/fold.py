"""One pass over a session log's events → its turns and its call events.

Every reader of a log wants the same grouping: agent turns (start, words, end by turn
number), user turns, the events that happen inside turns (pauses, opportunities,
actions, errors, yields), the verdicts and how the call ended, plus the realized
counts (:mod:`sessions.log.realized`). :func:`fold` does it once, dispatching on each
event's model class (:data:`sessions.log.models.EVENT_CLASSES`) through a table, so a new
event kind is one row here rather than a branch in every reader; a class the table does
not name is inline (:data:`INLINE`), and tests/test_event_types.py checks that every
model is one or the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    AgentYield,
    Backchannel,
    CallerSound,
    DialsChanged,
    EndEvent,
    ErrorEvent,
    Event,
    Interruption,
    LineEvent,
    Opportunity,
    RuleCalibration,
    ShortPause,
    SpeechStart,
    TurnEnd,
    UnknownEvent,
    UserTurn,
    Verdict,
)
from sessions.log.realized import RealizedCounter


@dataclass(slots=True)
class AgentTurnLog:
    """One agent turn's own events, in log order."""

    number: int
    first_t: float
    """When the log first named this turn (its start, or its first words)."""
    starts: list[AgentTurnStart] = field(default_factory=list)
    words: list[AgentWords] = field(default_factory=list)
    end: AgentTurnEnd | None = None
    """None when the log never closed the turn (a crash mid-turn)."""


@dataclass(slots=True)
class CallLog:
    """A session log folded: what the readers of a log share."""

    agent: dict[int, AgentTurnLog] = field(default_factory=dict)
    """By turn number, in the order the log first named them."""
    user: list[UserTurn] = field(default_factory=list)
    inline: list[Event] = field(default_factory=list)
    """Events that happen within turns (pauses, turn ends, opportunities, actions,
    errors, yields, ...): every event that is not a turn's own, a verdict or the end."""
    pauses: list[ShortPause] = field(default_factory=list)
    """The agent's 200 ms silences (also inline)."""
    actions: list[Interruption | Backchannel] = field(default_factory=list)
    """Interruptions and backchannels as logged, automatic or manual (also inline)."""
    verdicts: list[Verdict] = field(default_factory=list)
    errors: list[ErrorEvent] = field(default_factory=list)
    dials: list[DialsChanged] = field(default_factory=list)
    end: EndEvent | None = None
    last_t: float = 0.0
    realized: RealizedCounter = field(default_factory=RealizedCounter)

    def add(self, event: Event) -> None:
        """Fold one event in (log order)."""
        self.last_t = max(self.last_t, event.t)
        self.realized.feed(event)
        _FOLD.get(type(event), CallLog._inline)(self, event)

    def _agent_turn(self, number: int, t: float) -> AgentTurnLog:
        turn = self.agent.get(number)
        if turn is None:
            turn = self.agent[number] = AgentTurnLog(number, t)
        return turn

    def _agent_start(self, e: Event) -> None:
        assert isinstance(e, AgentTurnStart)
        self._agent_turn(e.turn, e.t).starts.append(e)

    def _agent_words(self, e: Event) -> None:
        assert isinstance(e, AgentWords)
        self._agent_turn(e.turn, e.t).words.append(e)

    def _agent_end(self, e: Event) -> None:
        assert isinstance(e, AgentTurnEnd)
        self._agent_turn(e.turn, e.t).end = e

    def _user(self, e: Event) -> None:
        assert isinstance(e, UserTurn)
        self.user.append(e)

    def _verdict(self, e: Event) -> None:
        assert isinstance(e, Verdict)
        self.verdicts.append(e)

    def _end(self, e: Event) -> None:
        assert isinstance(e, EndEvent)
        self.end = e

    def _error(self, e: Event) -> None:
        assert isinstance(e, ErrorEvent)
        self.errors.append(e)
        self.inline.append(e)

    def _dials(self, e: Event) -> None:
        assert isinstance(e, DialsChanged)
        self.dials.append(e)
        self.inline.append(e)

    def _pause(self, e: Event) -> None:
        assert isinstance(e, ShortPause)
        self.pauses.append(e)
        self.inline.append(e)

    def _action(self, e: Event) -> None:
        assert isinstance(e, Interruption | Backchannel)
        self.actions.append(e)
        self.inline.append(e)

    def _inline(self, e: Event) -> None:
        self.inline.append(e)


_FOLD: dict[type[Event], Callable[[CallLog, Event], None]] = {
    AgentTurnStart: CallLog._agent_start,
    AgentWords: CallLog._agent_words,
    AgentTurnEnd: CallLog._agent_end,
    UserTurn: CallLog._user,
    Verdict: CallLog._verdict,
    EndEvent: CallLog._end,
    ErrorEvent: CallLog._error,
    DialsChanged: CallLog._dials,
    ShortPause: CallLog._pause,
    Interruption: CallLog._action,
    Backchannel: CallLog._action,
}
"""Event model → where it goes; any other model is an inline event."""

INLINE: frozenset[type[Event]] = frozenset(
    {
        SpeechStart,
        TurnEnd,
        Opportunity,
        RuleCalibration,
        AgentYield,
        LineEvent,
        CallerSound,
        UnknownEvent,
    }
)
"""The models that go to :attr:`CallLog.inline` only (named, so that a new model is a
choice: the table above, or here)."""


def fold(events: Iterable[Event]) -> CallLog:
    """The whole log folded in one pass."""
    log = CallLog()
    for e in events:
        log.add(e)
    return log


__all__ = ["INLINE", "AgentTurnLog", "CallLog", "fold"]
