"""sessions.log.fold and sessions.log.realized: one pass over a log gives its turns,
its call events and the realized counts every reader shares."""

from __future__ import annotations

from sessions.log.fold import fold
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    Backchannel,
    DialsChanged,
    EndEvent,
    ErrorEvent,
    Event,
    Interruption,
    Opportunity,
    ShortPause,
    TendencyValues,
    TurnEnd,
    UserTurn,
    WordTiming,
)
from sessions.log.realized import count, realized


def opp(t: float, pause: int, turn: int, decision: str = "NOTHING", **kw: object) -> Opportunity:
    return Opportunity(t=t, index=pause, pause_index=pause, turn=turn, decision=decision, **kw)


def log() -> list[Event]:
    words = [
        WordTiming(word="hello", start=0.1, end=0.4),
        WordTiming(word="there", start=0.5, end=0.8),
    ]
    return [
        AgentTurnStart(t=0.0, turn=0, text="hello there"),
        AgentWords(t=0.8, turn=0, words=words),
        ShortPause(t=1.0, index=0, silence_start=0.8, turn=0),
        opp(1.0, 0, 0, "BACKCHANNEL", executed=True),
        Backchannel(t=1.0, turn=0),
        ShortPause(t=1.6, index=1, silence_start=1.4, turn=0),
        opp(1.6, 1, 0),
        opp(1.6, 1, 0, "INTERRUPT", mode="shadow", policy="tau-voice"),
        TurnEnd(t=1.9, silence_start=1.4, turn=0, short_pause_index=1),
        AgentTurnEnd(t=1.9, turn=0, text="hello there", spoken="hello there"),
        UserTurn(t=2.0, turn=0, original="yes", rendered="um yes"),
        DialsChanged(t=2.1, tendencies=TendencyValues(alpha=0.5)),
        AgentTurnStart(t=2.5, turn=1),
        Interruption(t=3.0, turn=1, trigger="manual"),
        ErrorEvent(t=3.1, where="agent", message="boom"),
        EndEvent(t=4.0, reason="hangup"),
    ]


def test_one_pass_groups_turns_and_call_events() -> None:
    folded = fold(log())
    assert list(folded.agent) == [0, 1]
    first = folded.agent[0]
    assert first.end is not None and [w.word for e in first.words for w in e.words] == [
        "hello",
        "there",
    ]
    assert folded.agent[1].end is None  # never closed
    assert [u.rendered for u in folded.user] == ["um yes"]
    assert [p.index for p in folded.pauses] == [0, 1]
    assert [type(a).__name__ for a in folded.actions] == ["Backchannel", "Interruption"]
    assert [e.message for e in folded.errors] == ["boom"]
    assert len(folded.dials) == 1
    assert folded.end is not None and folded.end.reason == "hangup"
    assert folded.last_t == 4.0
    kinds = [e.type for e in folded.inline]
    assert "agent_words" not in kinds and "user_turn" not in kinds and "end" not in kinds
    assert kinds.count("opportunity") == 3 and "error" in kinds


def test_a_pause_that_became_a_turn_end_is_taken_back_unless_acted_on() -> None:
    counter = fold(log()).realized
    s = counter.snapshot
    # The executed backchannel at pause 0 counts; pause 1 grew into the turn end.
    assert (s.agent_turns, s.opportunities, s.backchannels, s.interruptions) == (2, 1, 1, 0)
    assert (s.seen_opportunities, s.taken_back, s.shadow_opportunities) == (2, 1, 0)
    assert (s.manual_interruptions, s.backchannel_events, s.pauses) == (1, 1, 2)
    assert [o.pause_index for o in counter.counted()] == [0]
    assert counter.counted(shadow=True) == []
    assert counter.agent_turn_numbers == [0, 1]


def test_a_reader_marked_pause_takes_the_opportunity_back_as_a_turn_end_does() -> None:
    events = log()
    marked = [
        e.model_copy(update={"became_turn_end": True})
        if isinstance(e, ShortPause) and e.index == 1
        else e
        for e in events
        if not isinstance(e, TurnEnd)
    ]
    assert realized(marked) == realized(events)
    assert count(marked).counted() == count(events).counted()
