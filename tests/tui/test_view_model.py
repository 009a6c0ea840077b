"""The screen's pure parts: counts, the timeline layout, decision words, the view fold.

Fed with events from real calls on the virtual clock (the loop, the scripted agent),
plus a few hand-made events for edges a scripted call does not reach."""

from __future__ import annotations

from controls import Tendencies
from cutin_tui.views.call_view import AgentEntry, CallView, NoteEntry, UserEntry
from cutin_tui.views.explain import check_words, outcome_words
from cutin_tui.views.live_counts import count_events
from cutin_tui.views.timeline_layout import CELL_S, layout, runs, window_start
from sessions.agents.scripted import ScriptedAgent
from sessions.call.commands import InterruptNow
from sessions.call.config import CallConfig
from sessions.call.setup.simulated_call import simulated_call
from sessions.callers.users import ScriptedUser
from sessions.log.models import (
    Backchannel,
    EndEvent,
    Event,
    Opportunity,
    ShortPause,
    TurnEnd,
)
from sessions.scenarios import load_scenario


def _call(beta: float, gamma: float, seed: int = 1, *, cut_at: float | None = 3.0) -> list[Event]:
    scenario = load_scenario("retail-order-change")
    events: list[Event] = []
    loop = simulated_call(
        CallConfig(scenario, Tendencies(0.5, beta, gamma), seed=seed),
        ScriptedAgent(scenario),
        user=ScriptedUser(scenario),
        listeners=[events.append],
    )
    if cut_at is not None:
        loop.schedule(cut_at, InterruptNow("hang on a second"))
    loop.run_virtual(max_seconds=300)
    return events


def test_counts_follow_the_method_definitions() -> None:
    events = _call(beta=0.0, gamma=0.7)
    c = count_events(events)
    grown = {e.short_pause_index for e in events if isinstance(e, TurnEnd)}
    opportunities = [e for e in events if isinstance(e, Opportunity)]
    mid = [o for o in opportunities if o.pause_index not in grown or o.executed]
    assert c.mid_turn == len(mid) > 0
    assert c.at_turn_end == len(opportunities) - len(mid) > 0
    taken_bc = [o for o in mid if o.executed and o.decision == "BACKCHANNEL"]
    assert c.taken_backchannel == len(taken_bc) > 0
    assert (c.interruptions_manual, c.interruptions_auto) == (1, 0)
    assert c.backchannels == sum(isinstance(e, Backchannel) for e in events)
    assert c.per_opportunity(c.taken_backchannel) == len(taken_bc) / len(mid)
    assert c.per_turn(c.backchannels) == c.backchannels / c.agent_turns


def test_the_panel_counts_exactly_as_the_audit_does() -> None:
    from sessions.log.realized import realized

    events = _call(beta=0.0, gamma=1.0)
    c = count_events(events)
    r = realized(events)
    assert (c.mid_turn, c.taken_backchannel, c.agent_turns) == (
        r.opportunities,
        r.backchannels,
        r.agent_turns,
    )


def test_a_backchannel_taken_at_a_pause_that_became_a_turn_end_stays_counted() -> None:
    events: list[Event] = [
        ShortPause(t=1.0, index=0, silence_start=0.8, turn=1),
        Opportunity(t=1.0, index=0, pause_index=0, turn=1, decision="BACKCHANNEL", executed=True),
        Backchannel(t=1.0, turn=1, token="yeah"),
        TurnEnd(t=1.3, silence_start=0.8, turn=1, short_pause_index=0),
        Opportunity(t=2.0, index=1, pause_index=1, turn=1, decision="NOTHING", mode="shadow"),
        ShortPause(t=3.0, index=1, silence_start=2.8, turn=2),
        Opportunity(t=3.0, index=2, pause_index=2, turn=2, decision="NOTHING"),
        TurnEnd(t=3.3, silence_start=2.8, turn=2, short_pause_index=2),
    ]
    c = count_events(events)
    # The acted-on pause stays (the audit's rule); the idle one left for the turn end.
    assert (c.mid_turn, c.at_turn_end) == (1, 1)
    assert c.taken_backchannel == 1 and c.backchannels == 1
    assert c.per_opportunity(c.taken_backchannel) == 1.0


def test_the_view_shows_words_cuts_and_backchannels_in_place() -> None:
    events = _call(beta=0.0, gamma=1.0)
    view = CallView()
    view.apply(events)
    agents = [e for e in view.entries if isinstance(e, AgentEntry)]
    first = agents[0]
    assert first.interrupted and first.cut_word is not None and first.unspoken
    assert " ".join(first.words) + " " + first.unspoken == _planned(events, 0)
    later = [a for a in agents[1:] if a.backchannels]
    assert later, "γ = 1 backchannels from the second agent turn"
    for entry in later:
        assert all(0 < heard <= len(entry.words) for heard, _ in entry.backchannels)
    users = [e for e in view.entries if isinstance(e, UserEntry)]
    assert users[0].source == "interruption" and users[0].original == "hang on a second"
    assert view.ended == next(e.reason for e in events if isinstance(e, EndEvent))


def _planned(events: list[Event], turn: int) -> str:
    return next(
        e.text
        for e in events
        if e.type == "agent_turn_end" and e.turn == turn  # type: ignore[union-attr]
    )


def test_queued_text_is_marked_and_cleared_when_said() -> None:
    view = CallView()
    view.note_queued("my order is 48213")
    events = _call(beta=0.0, gamma=0.0)
    view.apply(events)  # the scripted caller never says it, so it stays queued to the end
    notes = [e for e in view.entries if isinstance(e, NoteEntry) and "48213" in e.text]
    assert notes and notes[0].text.startswith("(never said")


def test_timeline_places_every_mark_in_its_cell() -> None:
    events = _call(beta=1.0, gamma=0.5, cut_at=None)
    view = CallView()
    view.apply(events)
    tl = view.timeline
    cut = tl.cuts[0]
    rows = layout(tl, now=cut + 1.0, cells=100)
    start = window_start(cut + 1.0, 100)
    assert start == 0.0
    index = int(cut / CELL_S + 1e-9)
    assert rows["agent"][index] == ("✂", "cut")
    assert rows["you"][index] == ("▲", "interrupt")
    assert rows["pauses"][index] == ("▲", "interrupt")
    assert rows["agent"][2][0] == "█"  # the agent speaks from 0 s
    assert "".join(ch for ch, _ in rows["time"]).startswith("╹0s")
    # Later the window scrolls: its last cell holds "now", its start snaps to a cell.
    late = layout(tl, now=200.03, cells=100)
    assert window_start(200.03, 100) == round((1000 + 1 - 100) * CELL_S, 9)
    assert all(len(row) == 100 for row in late.values())
    assert runs([("a", "x"), ("b", "x"), ("c", "")]) == [("ab", "x"), ("c", "")]


def test_check_words_say_what_passed_and_failed() -> None:
    assert (
        check_words(
            {
                "rule": "interrupt",
                "name": "speaking_s",
                "passed": False,
                "value": 1.23,
                "needed": "≥ 7.45",
            }
        ).text
        == "speaking 1.2 s ≥ 7.45"
    )
    assert (
        check_words(
            {
                "rule": "backchannel",
                "name": "enabled",
                "passed": True,
                "value": 0.7,
                "needed": "γ > 0",
            }
        ).text
        == "γ 0.7 > 0"
    )
    assert (
        check_words(
            {
                "rule": "interrupt",
                "name": "not_question",
                "passed": False,
                "value": True,
                "needed": "",
            }
        ).text
        == "question/request"
    )
    words = outcome_words(
        "NOTHING", executed=False, autos={"interrupt": False, "backchannel": True}, at_turn_end=True
    )
    assert "auto-interrupt off" in words and "turn end" in words


def test_each_dial_shows_what_it_realized_as_the_audit_counts_it() -> None:
    from cutin_tui.views.call_view import realized_by_dial
    from replay.audit.counter import count

    events = _call(beta=0.0, gamma=1.0, cut_at=None)
    view = CallView()
    view.apply(events)
    shown = realized_by_dial(view)
    rendered = [e.rendered for e in events if e.type == "user_turn"]  # type: ignore[attr-defined]
    words = sum(count(r).words for r in rendered)
    combined = sum(count(r).combined for r in rendered)
    assert shown["alpha"] == f"{1000 * combined / words:.0f}/1k words"
    c = count_events(events)
    assert shown["gamma"].startswith(f"{c.taken_backchannel / c.agent_turns:.2f}/turn")
    assert shown["beta"].startswith("0.00/turn")
