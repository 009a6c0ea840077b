"""The call loop on a virtual clock: the rule fires where and only where it should."""

from __future__ import annotations

import itertools

import pytest

from controls import question_or_request
from controls.turn_taking import backchannel_spacing_words
from sessions.call.commands import BackchannelNow, InterruptNow, SubmitText
from sessions.call.engine.engine import CallEngine
from sessions.call.far_ends.simulated import SimulatedFarEnd
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    Backchannel,
    EndEvent,
    Interruption,
    Opportunity,
    ShortPause,
    UserTurn,
)
from sessions.scenarios import shipped_scenario_names

from .helpers import of_type, run_call

SCENARIOS = shipped_scenario_names()


def test_three_realistic_scenarios_ship() -> None:
    assert {"retail-order-change", "airline-rebooking", "clinic-triage"} <= set(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_beta_one_interrupts_long_turns_after_patience_and_twelve_words(scenario: str) -> None:
    _loop, events, _ = run_call(scenario, beta=1.0)
    interruptions = [e for e in events if isinstance(e, Interruption)]
    opps = {e.index: e for e in events if isinstance(e, Opportunity)}
    assert interruptions, "β = 1 must interrupt the scripted agent's long turns"
    starts = {e.turn: e.t for e in events if isinstance(e, AgentTurnStart)}
    for opp in opps.values():
        if opp.executed:
            assert opp.decision == "INTERRUPT"
            assert opp.situation["agent_speaking_seconds"] >= 1.5
            assert opp.situation["agent_words"] >= 12
    for itr in interruptions:
        assert itr.trigger == "auto"
        assert itr.cut_t is not None and itr.cut_t - starts[itr.turn] >= 1.5
        assert itr.cut_word is not None and itr.cut_word >= 12
        end = next(e for e in events if isinstance(e, AgentTurnEnd) and e.turn == itr.turn)
        assert not question_or_request(end.spoken), "never interrupt on a question"
    # At most one interruption per agent turn.
    turns = [i.turn for i in interruptions]
    assert len(turns) == len(set(turns))


def test_a_simulated_call_is_stepped_by_the_call_engine() -> None:
    loop, events, _ = run_call(beta=1.0)
    assert isinstance(loop, CallEngine) and isinstance(loop.far, SimulatedFarEnd)
    assert loop.line is None and loop.ended
    assert any(isinstance(e, Interruption) for e in events)


def test_question_pauses_are_never_taken() -> None:
    _, events, _ = run_call("airline-rebooking", beta=1.0, gamma=1.0)
    for opp in of_type(events, "opportunity"):
        assert isinstance(opp, Opportunity)
        asked = next(c for c in opp.checks if c["name"] == "not_question")
        if asked["value"] is True:
            assert opp.decision == "NOTHING" and not opp.executed


def test_gamma_one_backchannels_from_second_turn_with_rule_spacing() -> None:
    _, events, _ = run_call("retail-order-change", gamma=1.0)
    bcs = [e for e in events if isinstance(e, Backchannel)]
    assert bcs, "γ = 1 must backchannel"
    assert all(b.turn >= 1 for b in bcs), "the agent's first turn never gets a backchannel"
    spacing = backchannel_spacing_words(1.0)
    by_turn: dict[int, list[int]] = {}
    for b in bcs:
        assert b.words_heard is not None
        by_turn.setdefault(b.turn, []).append(b.words_heard)
    for words in by_turn.values():
        assert words[0] >= 6
        for prev, cur in itertools.pairwise(words):
            assert cur >= prev + spacing
    assert len(by_turn) >= 2


def test_gamma_zero_and_beta_zero_never_act() -> None:
    _, events, _ = run_call("clinic-triage")
    assert of_type(events, "opportunity"), "pauses are still evaluated"
    assert not of_type(events, "interruption") and not of_type(events, "backchannel")
    assert all(not o.executed for o in of_type(events, "opportunity"))  # type: ignore[attr-defined]


def test_opportunities_only_while_the_caller_is_silent() -> None:
    _, events, _ = run_call("retail-order-change", gamma=1.0)
    busy: list[tuple[float, float]] = []
    for e in events:
        if isinstance(e, Backchannel):
            busy.append((e.t, e.t + 0.45))
    for opp in of_type(events, "opportunity"):
        assert not any(a < opp.t < b for a, b in busy)


def test_cut_splits_spoken_and_unspoken_and_history_keeps_only_spoken() -> None:
    loop, events, spy = run_call("retail-order-change", beta=1.0)
    ends = [e for e in events if isinstance(e, AgentTurnEnd) and e.interrupted]
    assert ends
    first = ends[0]
    planned = first.text.split()
    assert first.cut_word is not None
    assert first.spoken.split() == planned[: first.cut_word]
    assert first.unspoken.split() == planned[first.cut_word :]
    # The words reported as heard are exactly the spoken ones, and all ended before the cut.
    heard = [
        w
        for e in of_type(events, "agent_words")
        if e.turn == first.turn  # type: ignore[attr-defined]
        for w in e.words  # type: ignore[attr-defined]
    ]
    assert [w.word for w in heard] == planned[: first.cut_word]
    assert first.cut_t is not None and all(w.end <= first.cut_t + 1e-6 for w in heard)
    # The next reply was asked for with a history whose assistant message is the spoken part.
    later = [h for h in spy.seen if any(m.truncated for m in h)]
    assert later
    truncated = next(m for m in later[0] if m.truncated)
    assert truncated.content == first.spoken
    assert first.unspoken not in " ".join(m.content for m in later[0])
    assert all(m.content != first.text for m in loop.history)


def test_after_cut_the_scripted_agent_reoffers_what_was_missed() -> None:
    _, events, _ = run_call("retail-order-change", beta=1.0)
    ends = [e for e in events if isinstance(e, AgentTurnEnd)]
    assert any("to finish what I was saying" in e.text for e in ends[1:])


def test_typed_turns_are_injected_but_history_keeps_the_original() -> None:
    loop, events, _ = run_call("retail-order-change", alpha=1.0)
    users = [e for e in events if isinstance(e, UserTurn)]
    assert users and any(u.rendered != u.original for u in users)
    originals = [m.content for m in loop.history if m.role == "user"]
    assert originals == [u.original for u in users]
    for u in users:
        assert len(u.rendered.split()) == len(u.original.split()) + len(u.insertions)


def test_manual_keys_work_with_autos_off() -> None:
    _loop, events, _ = run_call(
        "airline-rebooking",
        beta=1.0,
        gamma=1.0,
        headless_user=False,
        auto_interrupt=False,
        auto_backchannel=False,
        schedule=[
            (19.0, SubmitText("Sure, it's K7QX2M.")),
            (26.0, BackchannelNow()),
            (30.0, InterruptNow("Sorry, is that the direct one?")),
        ],
        max_seconds=60.0,
    )
    opps = of_type(events, "opportunity")
    assert opps and all(not o.executed for o in opps)  # type: ignore[attr-defined]
    bcs = [e for e in events if isinstance(e, Backchannel)]
    itrs = [e for e in events if isinstance(e, Interruption)]
    assert [b.trigger for b in bcs] == ["manual"]
    assert [i.trigger for i in itrs] == ["manual"]
    assert itrs[0].text == "Sorry, is that the direct one?"
    assert abs(itrs[0].t - 30.0) < 0.04
    cut = next(e for e in events if isinstance(e, AgentTurnEnd) and e.interrupted)
    assert cut.cut_t == itrs[0].t and cut.unspoken


def test_empty_interrupt_key_uses_a_scenario_line() -> None:
    _, events, _ = run_call(
        "clinic-triage",
        headless_user=False,
        schedule=[(5.0, InterruptNow(""))],
        max_seconds=20.0,
    )
    itr = next(e for e in events if isinstance(e, Interruption))
    from sessions.scenarios import load_scenario

    assert itr.text in load_scenario("clinic-triage").user.interruptions


def test_short_pauses_only_at_sentence_ends_of_the_text_clock() -> None:
    _, events, _ = run_call("retail-order-change")
    starts = {e.turn: e for e in events if isinstance(e, AgentTurnStart)}
    assert starts
    pauses = [e for e in events if isinstance(e, ShortPause)]
    words = [w for e in of_type(events, "agent_words") for w in e.words]  # type: ignore[attr-defined]
    for p in pauses:
        before = [w for w in words if w.end <= p.silence_start + 1e-3]
        assert before, "a short pause follows speech"
        assert before[-1].word.endswith((".", "!", "?")), before[-1].word
        assert p.t - p.silence_start >= 0.2 - 1e-6


def test_same_seed_same_call_other_seed_other_timings() -> None:
    _, a, _ = run_call("retail-order-change", alpha=0.5, gamma=0.7, seed=3)
    _, b, _ = run_call("retail-order-change", alpha=0.5, gamma=0.7, seed=3)
    _, c, _ = run_call("retail-order-change", alpha=0.5, gamma=0.7, seed=4)
    dump = [e.model_dump() for e in a]
    assert dump == [e.model_dump() for e in b]
    assert dump != [e.model_dump() for e in c]


def test_call_ends_with_an_end_event() -> None:
    loop, events, _ = run_call("clinic-triage", gamma=0.5)
    assert isinstance(events[-1], EndEvent)
    assert loop.end_reason in {"user_hangup", "agent_done"}


def test_text_typed_during_agent_speech_is_said_after_the_interruption() -> None:
    _, events, _ = run_call(
        "retail-order-change",
        beta=1.0,
        headless_user=False,
        schedule=[(1.0, SubmitText("my order is 48213"))],
        max_seconds=40.0,
    )
    users = [e for e in events if isinstance(e, UserTurn)]
    itr = next(e for e in events if isinstance(e, Interruption))
    assert users[0].source == "interruption"
    # The typed text follows the caller's interruption line, before the agent speaks again.
    assert users[1].original == "my order is 48213"
    assert users[1].t == pytest.approx(users[0].end_t, abs=0.04)
    next_agent = next(e for e in events if isinstance(e, AgentTurnStart) and e.turn == 1)
    assert users[1].t < next_agent.t
    assert itr.turn == 0


def test_dial_changes_mid_call_are_logged() -> None:
    from controls import Tendencies
    from sessions.call.commands import SetAutos, SetTendencies
    from sessions.log.models import DialsChanged

    _, events, _ = run_call(
        "clinic-triage",
        headless_user=False,
        schedule=[
            (2.0, SetTendencies(Tendencies(0.2, 0.7, 0.1))),
            (3.0, SetAutos(backchannel=False)),
        ],
        max_seconds=10.0,
    )
    dials = [e for e in events if isinstance(e, DialsChanged)]
    assert [(d.tendencies.beta, d.autos["backchannel"]) for d in dials] == [
        (0.7, True),
        (0.7, False),
    ]
    assert dials[0].t == pytest.approx(2.0, abs=0.04)
