"""Ticks → segments → turns, interruptions and backchannels."""

from __future__ import annotations

import pytest

from replay.model import TickTimeline, UserBackchannel, UserInterruption
from replay.tau2.tick_turns import analyze
from replay.tau2.ticks import out_of_turn_effects, segments, timeline_from_tau2

from .tickspec import ticks


def timeline(agent: str, user: str, **kw: object) -> TickTimeline:
    return timeline_from_tau2(ticks(agent, user, **kw), 0.2)  # type: ignore[arg-type]


def test_segments_are_runs_of_speech_with_context_at_both_ends() -> None:
    tl = timeline("AAAAAA......", "....UUUU....")
    (a,) = segments(tl, "agent")
    (u,) = segments(tl, "user")
    assert (a.start_tick, a.end_tick, a.other_at_start, a.other_at_end) == (0, 6, False, True)
    assert (u.start_tick, u.end_tick, u.other_at_start, u.other_at_end) == (4, 8, True, False)
    assert u.is_interruption and not u.is_backchannel
    assert u.start_s == pytest.approx(0.8) and u.duration_s == pytest.approx(0.8)


def test_missing_chunk_is_silence_and_missing_flag_is_speech() -> None:
    raw = ticks("AA..", "....")
    raw[0]["agent_chunk"] = None
    del raw[2]["agent_chunk"]["contains_speech"]  # τ2's default is True
    tl = timeline_from_tau2(raw, 0.2)
    assert tl.agent_speech == [False, True, True, False]


def test_end_of_call_stop_tick_is_dropped_before_analysis() -> None:
    tl = timeline("AAA...", ".....U")
    analysis = analyze(tl)
    assert len(analysis.timeline) == 5 and analysis.user_segments == []
    kept = analyze(timeline("AAA...", "....UU"))
    assert len(kept.user_segments) == 1


def test_turns_join_close_segments_of_one_speaker() -> None:
    #        agent talks, 2-tick pause (0.4 s, joins), talks; user answers after 1 s.
    tl = timeline(
        "AAAA..AAAA.....",
        "...............UUUU....." + "",
    )
    analysis = analyze(tl)
    assert [(t.speaker, t.number) for t in analysis.turns] == [("agent", 0), ("user", 0)]
    agent = analysis.turns[0]
    assert agent.start == 0.0 and agent.end == pytest.approx(2.0)
    assert agent.meta["segments"] == [0, 1]


def test_a_long_silence_starts_a_new_turn_of_the_same_speaker() -> None:
    analysis = analyze(timeline("AAA........AAA....", ""))  # 1.6 s of silence
    assert [t.number for t in analysis.turns] == [0, 1]


def test_interruption_marks_the_agent_turn_with_yield_latency_and_talk_over() -> None:
    analysis = analyze(timeline("AAAAAAAA........", "....UUUUUU......"))
    agent, user = analysis.turns
    assert agent.interrupted and agent.cut_t == pytest.approx(0.8)
    (event,) = agent.events_of(UserInterruption)
    assert event.data["yielded"] is True
    assert event.data["yield_latency_s"] == pytest.approx(0.8)
    assert event.data["talk_over_s"] == pytest.approx(0.8)
    assert user.speaker == "user" and user.start == pytest.approx(0.8)
    assert len(analysis.interruptions) == 1 and analysis.backchannels == []


def test_backchannel_is_an_inline_event_not_a_turn() -> None:
    analysis = analyze(timeline("AAAAAAAAAAAAAAAA", "....UU..........", actions={4: "backchannel"}))
    (agent,) = analysis.turns
    (bc,) = agent.events_of(UserBackchannel)
    assert bc.t == pytest.approx(0.8) and bc.data["yielded"] is False
    assert not agent.interrupted
    assert len(analysis.backchannels) == 1


def test_backchannel_the_agent_stops_for_and_answers() -> None:
    #            stops 2 ticks after the "mm-hmm", then starts answering it.
    analysis = analyze(
        timeline("AAAAAA...AAAA.......", "....UU..............", actions={4: "backchannel"})
    )
    (bc,) = analysis.backchannels
    assert bc.yielded and bc.yield_latency_s == pytest.approx(0.4) and bc.answered


def test_agent_starting_over_the_user_is_an_event_on_the_user_turn() -> None:
    analysis = analyze(timeline("......AAAA......", "UUUUUUUU........"))
    user = analysis.turns[0]
    assert user.speaker == "user"
    assert [e.kind for e in user.events] == ["agent_interruption"]
    assert len(analysis.agent_interruptions) == 1


def test_effects_in_silence_become_inline_events_and_spans() -> None:
    tl = timeline(
        "AAAAAAAA..........",
        "...........UUU....",
        source_inserts={
            3: ("non_directed_phrase", "Hold on."),
            4: ("non_directed_phrase", "Hold on."),
        },
    )
    (span,) = out_of_turn_effects(tl)
    assert (span.kind, span.start_tick, span.end_tick) == ("non_directed_speech", 3, 5)
    agent = analyze(tl).turns[0]
    assert [(e.kind, e.label) for e in agent.events] == [("non_directed_speech", "Hold on.")]


def test_chunk_text_becomes_turn_text() -> None:
    analysis = analyze(
        timeline("..........AAA", "UUU", user_text={0: "I need ", 1: "help", 2: "."})
    )
    assert analysis.turns[0].text == "I need help."
