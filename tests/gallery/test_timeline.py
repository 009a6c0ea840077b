"""Timeline geometry from events: lanes, overlaps, marks, windows, ticks, live building."""

from __future__ import annotations

import itertools

from replay.gallery import (
    Cell,
    MarkKind,
    TimelineBuilder,
    build_timeline,
    focus_window,
    follow_window,
    lane_cells,
    mark_cells,
    run_entry,
    shipped_entries,
    ticks,
)
from replay.gallery.runner import caller_word_timer, timeline_builder
from sessions.log.models import (
    AgentTurnEnd,
    AgentWords,
    Backchannel,
    EndEvent,
    Event,
    Interruption,
    Opportunity,
    UserTurn,
    WordTiming,
)


def words(*spans: tuple[str, float, float]) -> list[WordTiming]:
    return [WordTiming(word=w, start=a, end=b) for w, a, b in spans]


def cut_call() -> list[Event]:
    """Agent speaks 0–1 s and 1.5–2 s, is cut at 2 s; the caller talks 2–3 s."""
    return [
        AgentWords(t=1.0, turn=0, words=words(("One", 0.0, 0.5), ("two.", 0.5, 1.0))),
        AgentWords(t=2.0, turn=0, words=words(("Three", 1.5, 2.0))),
        Opportunity(t=1.2, index=0, pause_index=0, turn=0, decision="NOTHING"),
        Interruption(t=2.0, turn=0, trigger="auto", cut_t=2.0, cut_word=3, text="Stop."),
        AgentTurnEnd(
            t=2.0,
            turn=0,
            text="One two. Three four",
            spoken="One two. Three",
            unspoken="four",
            interrupted=True,
            cut_t=2.0,
            cut_word=3,
            talk_over_s=0.0,
        ),
        UserTurn(t=2.0, turn=0, original="Stop.", rendered="Stop.", end_t=3.0),
        EndEvent(t=3.5),
    ]


def test_agent_speech_is_split_at_pauses_and_caller_turns_are_spans() -> None:
    tl = build_timeline(cut_call())
    agent = tl.lane("agent")
    assert [(s.start, s.end, s.text) for s in agent] == [
        (0.0, 1.0, "One two."),
        (1.5, 2.0, "Three"),
    ]
    (caller,) = tl.lane("caller")
    assert (caller.start, caller.end, caller.text) == (2.0, 3.0, "Stop.")
    assert tl.overlaps() == [] and tl.end_t == 3.5


def test_marks_say_who_decided_and_where_the_agent_stopped() -> None:
    tl = build_timeline(cut_call())
    kinds = [(m.kind, m.t, m.by_rule) for m in tl.marks]
    assert (MarkKind.PAUSE, 1.2, False) in kinds
    assert (MarkKind.INTERRUPTION, 2.0, True) in kinds
    assert (MarkKind.CUT, 2.0, False) in kinds
    agent_line = next(line for line in tl.lines if line.speaker == "agent")
    assert agent_line.unspoken == "four" and agent_line.note == "stops"


def test_lane_cells_and_overlaps_at_a_coarse_scale() -> None:
    events: list[Event] = [
        AgentWords(t=4.0, turn=0, words=words(("long", 0.0, 4.0))),
        UserTurn(t=3.0, turn=0, original="x", rendered="x", end_t=5.0),
        Backchannel(t=1.0, turn=0, token="mm-hmm"),
    ]
    tl = build_timeline(events, backchannel_s=0.1)
    assert tl.overlaps() == [(1.0, 1.1), (3.0, 4.0)]
    assert tl.overlap_seconds() == 1.1
    agent = lane_cells(tl, "agent", 0.0, 6.0, 6)
    caller = lane_cells(tl, "caller", 0.0, 6.0, 6)
    # A 0.1 s backchannel still gets its cell at 1 cell = 1 s.
    assert caller[1] is Cell.OVERLAP
    assert agent == [Cell.SPEECH, Cell.OVERLAP, Cell.SPEECH, Cell.OVERLAP, Cell.EMPTY, Cell.EMPTY]
    assert caller[3] is Cell.OVERLAP and caller[4] is Cell.SPEECH and caller[5] is Cell.EMPTY
    # Live play: nothing is drawn after the playhead.
    assert lane_cells(tl, "caller", 0.0, 6.0, 6, until=3.5)[4] is Cell.EMPTY


def test_mark_cells_keep_the_most_important_mark_per_column() -> None:
    tl = build_timeline(cut_call())
    marks = mark_cells(tl, 0.0, 4.0, 4)
    assert marks[1].kind is MarkKind.PAUSE
    assert marks[2].kind is MarkKind.CUT
    only = mark_cells(tl, 0.0, 4.0, 4, kinds=frozenset({MarkKind.INTERRUPTION}))
    assert list(only) == [2]
    assert mark_cells(tl, 0.0, 4.0, 4, until=1.5).keys() == {1}


def test_focus_window_surrounds_what_matters() -> None:
    tl = build_timeline(cut_call())
    assert focus_window(tl, before_s=1.0, after_s=1.0, min_s=0.5) == (1.0, 3.0)
    assert focus_window(tl, min_s=8.0) == (0.0, 3.5), "clipped to the call"
    assert focus_window(tl, around=(2.0, 3.0), before_s=0.5, after_s=0.25, min_s=1) == (1.5, 3.25)


def test_the_live_window_slides_to_the_focus_holds_and_follows_the_playhead() -> None:
    focus = (10.0, 18.0)
    assert follow_window(focus, 0.0) == (0.0, 8.0)
    assert follow_window(focus, 12.0) == (6.0, 14.0)
    assert follow_window(focus, 16.0) == (10.0, 18.0)
    assert follow_window(focus, 17.2) == (10.0, 18.0)
    assert follow_window(focus, 20.0) == (12.8, 20.8)
    for now in (0.0, 5.0, 12.0, 17.0, 25.0):
        lo, hi = follow_window(focus, now)
        assert lo <= now <= hi and round(hi - lo, 6) == 8.0


def test_ticks_are_round() -> None:
    assert ticks(0.0, 10.0, 10) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    assert ticks(1.2, 9.2, 5) == [2.0, 4.0, 6.0, 8.0]
    assert ticks(0.0, 3.0, 10) == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]


def test_caller_words_are_retimed_on_the_calls_text_clock() -> None:
    entry = next(e for e in shipped_entries() if e.id == "block")
    run = run_entry(entry)
    (said,) = [e for e in run.events if isinstance(e, UserTurn)]
    timed = caller_word_timer(run.config)(said)
    assert timed is not None
    assert timed[0].start == said.t and abs(timed[-1].end - (said.end_t or 0)) < 1e-3
    gaps = [b.start - a.end for a, b in itertools.pairwise(timed)]
    assert max(gaps) > 0.3, "the written block is a real silence in the caller's lane"
    assert len(run.timeline.lane("caller")) >= 2
    # A turn the text clock did not produce is drawn as one block, not guessed.
    odd = said.model_copy(update={"end_t": (said.end_t or 0) + 1.0})
    assert caller_word_timer(run.config)(odd) is None


def test_building_live_gives_the_same_drawing_as_building_at_the_end() -> None:
    entry = next(e for e in shipped_entries() if e.id == "talk-over")
    run = run_entry(entry)
    live: TimelineBuilder = timeline_builder(run.config)
    for event in run.events:
        live.feed(event)
    assert live.timeline() == run.timeline
