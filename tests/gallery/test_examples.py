"""Every shipped example runs on the virtual clock and shows the type it names.

Each test reads the events the real call loop reported; the checks are written out
here (not only through the entry's own ``expect``), so a data file that drifts
from its claim fails in words a reader can follow.
"""

from __future__ import annotations

from functools import cache
from typing import TypeVar

import pytest

from replay.gallery import (
    GalleryEntry,
    GalleryRun,
    check_expectations,
    rule_actions,
    run_entry,
    shipped_entries,
)
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    Backchannel,
    Interruption,
    UserTurn,
    WordTiming,
)

OVERLAP_TYPES = {
    "continuer",
    "terminal-overlap",
    "conditional-access",
    "choral",
    "interruption-successful",
    "interruption-unsuccessful",
    "talk-over",
    "false-interruption",
}
TYPICAL_DISFLUENCIES = {"filled-pause", "repetition", "pause", "self-repair"}
STUTTERING_LIKE = {"part-word-repetition", "prolongation", "block"}
YIELD_WINDOW_S = 0.05
"""The agent counts as yielding when its turn ends within this long of the interruption."""


@cache
def entries() -> dict[str, GalleryEntry]:
    return {e.id: e for e in shipped_entries()}


@cache
def run(entry_id: str) -> GalleryRun:
    return run_entry(entries()[entry_id])


E = TypeVar("E")


def of(r: GalleryRun, kind: type[E]) -> list[E]:
    return [e for e in r.events if isinstance(e, kind)]


def turn_end(r: GalleryRun, turn: int) -> AgentTurnEnd:
    return next(e for e in of(r, AgentTurnEnd) if e.turn == turn)


def agent_words(r: GalleryRun, turn: int) -> list[WordTiming]:
    return [w for e in of(r, AgentWords) if e.turn == turn for w in e.words]


def test_the_gallery_has_every_type_the_brief_names() -> None:
    ids = set(entries())
    assert ids >= OVERLAP_TYPES | TYPICAL_DISFLUENCIES | STUTTERING_LIKE
    for entry_id in OVERLAP_TYPES:
        assert entries()[entry_id].kind == "overlap"
    for entry_id in TYPICAL_DISFLUENCIES | STUTTERING_LIKE:
        assert entries()[entry_id].kind == "disfluency"


@pytest.mark.parametrize("entry_id", sorted(OVERLAP_TYPES | TYPICAL_DISFLUENCIES | STUTTERING_LIKE))
def test_each_example_meets_its_own_expectations(entry_id: str) -> None:
    r = run(entry_id)
    assert r.events[-1].type == "end"
    assert check_expectations(entries()[entry_id], r) == []


def test_runs_are_deterministic() -> None:
    a = run_entry(entries()["talk-over"])
    b = run_entry(entries()["talk-over"])
    assert [e.model_dump() for e in a.events] == [e.model_dump() for e in b.events]


def test_continuer_is_the_rules_backchannel_and_the_agent_keeps_talking() -> None:
    r = run("continuer")
    bcs = of(r, Backchannel)
    assert bcs and all(b.trigger == "auto" for b in bcs)
    assert {o.decision for o in rule_actions(r)} == {"BACKCHANNEL"}
    end = turn_end(r, bcs[0].turn)
    assert not end.interrupted and end.spoken == end.text
    assert of(r, Interruption) == []


def test_terminal_overlap_starts_just_before_the_agents_last_word_ends() -> None:
    r = run("terminal-overlap")
    (cut,) = of(r, Interruption)
    last = agent_words(r, cut.turn)[-1]
    assert 0.1 <= last.end - cut.t <= 0.4
    assert cut.t > last.start - 0.5, "the caller comes in on the last word, not earlier"
    end = turn_end(r, cut.turn)
    assert end.spoken == end.text and 0 < (end.talk_over_s or 0) < 0.5
    assert rule_actions(r) == []


def test_conditional_access_comes_in_at_the_word_search_and_the_agent_takes_it_up() -> None:
    r = run("conditional-access")
    (cut,) = of(r, Interruption)
    end = turn_end(r, cut.turn)
    assert end.spoken.endswith("uh") and end.t == cut.t
    assert "heart clinic" in cut.text.lower()
    nxt = next(e for e in of(r, AgentTurnStart) if e.turn == cut.turn + 1)
    assert nxt.text is not None and "heart clinic" in nxt.text.lower()


def test_choral_talk_overlaps_and_nobody_stops() -> None:
    r = run("choral")
    (cut,) = of(r, Interruption)
    end = turn_end(r, cut.turn)
    assert end.spoken == end.text, "the agent says its whole goodbye"
    assert r.timeline.overlap_seconds() >= 0.2
    assert cut.text.lower().startswith("bye")
    assert end.text.lower().rstrip("!").endswith("bye-bye")


def test_successful_interruption_the_agent_stops_within_its_yield_window() -> None:
    r = run("interruption-successful")
    (cut,) = of(r, Interruption)
    assert cut.trigger == "auto", "the rule fires it"
    end = turn_end(r, cut.turn)
    assert end.interrupted and end.unspoken
    assert end.t - cut.t <= YIELD_WINDOW_S
    assert end.talk_over_s == 0.0
    assert end.cut_word == cut.cut_word and cut.cut_word is not None and cut.cut_word >= 12


def test_unsuccessful_interruption_the_agent_keeps_the_floor_and_the_caller_drops_out() -> None:
    r = run("interruption-unsuccessful")
    (cut,) = of(r, Interruption)
    assert cut.trigger == "auto"
    end = turn_end(r, cut.turn)
    assert end.spoken == end.text and (end.talk_over_s or 0) > 2.0
    bid = next(u for u in of(r, UserTurn) if u.source == "interruption")
    assert bid.end_t is not None and bid.end_t - bid.t < 1.5, "a short bid, then silence"


def test_talk_over_has_talk_over_seconds_in_the_agent_turn_end() -> None:
    r = run("talk-over")
    (cut,) = of(r, Interruption)
    end = turn_end(r, cut.turn)
    assert end.talk_over_s is not None and end.talk_over_s > 0
    assert end.talk_over_s >= 3.0
    assert r.timeline.overlap_seconds() >= 2.0


def test_false_interruption_the_agent_stops_at_a_cough() -> None:
    r = run("false-interruption")
    (bc,) = of(r, Backchannel)
    assert bc.token == "(cough)" and bc.trigger == "manual"
    end = turn_end(r, bc.turn)
    assert end.interrupted and end.unspoken and end.t == bc.t
    nxt = next(e for e in of(r, AgentTurnStart) if e.turn == bc.turn + 1)
    assert nxt.text == "Sorry, did you say something?"


@pytest.mark.parametrize(
    ("entry_id", "kind", "token"),
    [
        ("filled-pause", "filler", "um,"),
        ("repetition", "repetition", "to-"),
        ("pause", "pause", "—"),
    ],
)
def test_injected_disfluencies_come_from_cutins_injection(
    entry_id: str, kind: str, token: str
) -> None:
    r = run(entry_id)
    entry = entries()[entry_id]
    assert entry.disfluency is not None
    (said,) = [u for u in of(r, UserTurn) if u.original == entry.disfluency.original]
    assert [(i.kind, i.token) for i in said.insertions] == [(kind, token)]
    assert token in said.rendered.split()


@pytest.mark.parametrize("entry_id", sorted(STUTTERING_LIKE | {"self-repair"}))
def test_written_examples_say_so_and_the_caller_says_the_written_line(entry_id: str) -> None:
    entry = entries()[entry_id]
    r = run(entry_id)
    assert entry.made_by == "written"
    assert "written example, not produced by cutin's injection" in entry.explanation
    assert entry.disfluency is not None
    said = entry.disfluency.spoken or entry.disfluency.rendered
    assert any(u.rendered == said and not u.insertions for u in of(r, UserTurn))


def test_only_the_stuttering_like_types_are_flagged() -> None:
    flagged = {e.id for e in entries().values() if e.stuttering_like}
    assert flagged == STUTTERING_LIKE
    for entry_id in flagged:
        assert "stuttering-like" in entries()[entry_id].explanation


def test_expectations_fail_when_the_example_stops_showing_its_type() -> None:
    """The checks can fail: a talk-over example whose agent yields is no talk-over."""
    entry = entries()["talk-over"].model_copy(deep=True)
    assert not isinstance(entry.scenario, str)
    entry.scenario.agent.yields_when_interrupted = True
    failures = check_expectations(entry, run_entry(entry))
    assert any("talk-over" in f for f in failures)
    assert any("finish its turn" in f for f in failures)
