"""controls.decide against DESIGN.md "Turn-taking decision at a short pause", edge by edge."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controls import (
    Action,
    Decision,
    Situation,
    Tendencies,
    backchannel_spacing_words,
    decide,
    interruption_patience_seconds,
    question_or_request,
)

STATEMENT = (
    "Thanks for holding. I have your order open, and I can see the address we have on "
    "file, which is the Elm Street one from last year"
)
QUESTION = "Thanks for holding. Could you confirm the address we have on file?"


def situation(**changes: object) -> Situation:
    """A mid-turn pause where every check of both rules passes at β = γ = 1."""
    base = Situation(
        agent_speaking_seconds=12.0,
        agent_words=30,
        agent_text=STATEMENT,
        agent_turn_index=2,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def check(decision: Decision, rule: str, name: str) -> bool:
    matches = [c for c in decision.checks if c.rule == rule and c.name == name]
    assert len(matches) == 1, (rule, name, decision.checks)
    return matches[0].passed


INTERRUPT_ONLY = dict(gamma=0.0)
BACKCHANNEL_ONLY = dict(beta=0.0)


# --- interruption thresholds ------------------------------------------------------------


@pytest.mark.parametrize(
    ("beta", "enough", "short"),
    [(0.3, 7.45, 7.44), (1.0, 1.5, 1.49), (0.5, 5.75, 5.74), (0.1, 9.15, 9.14)],
)
def test_interruption_needs_ten_minus_eight_and_a_half_beta_seconds(
    beta: float, enough: float, short: float
) -> None:
    tend = Tendencies(beta=beta)
    assert interruption_patience_seconds(beta) == pytest.approx(10 - 8.5 * beta)
    passes = decide(situation(agent_speaking_seconds=enough), tend)
    fails = decide(situation(agent_speaking_seconds=short), tend)
    assert passes.action is Action.INTERRUPT
    assert fails.action is Action.NOTHING
    assert check(passes, "interrupt", "speaking_s") and not check(fails, "interrupt", "speaking_s")


def test_beta_zero_needs_ten_seconds_but_is_disabled_anyway() -> None:
    assert interruption_patience_seconds(0.0) == 10.0
    decision = decide(situation(agent_speaking_seconds=3600.0), Tendencies(beta=0.0))
    assert decision.action is Action.NOTHING
    assert not check(decision, "interrupt", "enabled")


def test_interruption_needs_twelve_words() -> None:
    tend = Tendencies(beta=1.0)
    assert decide(situation(agent_words=12), tend).action is Action.INTERRUPT
    eleven = decide(situation(agent_words=11), tend)
    assert eleven.action is Action.NOTHING
    assert not check(eleven, "interrupt", "words")


def test_at_most_one_interruption_per_agent_turn() -> None:
    decision = decide(situation(interrupted_this_turn=True), Tendencies(beta=1.0))
    assert decision.action is Action.NOTHING
    assert not check(decision, "interrupt", "first_in_turn")
    # A later agent turn starts afresh.
    assert decide(situation(agent_turn_index=3), Tendencies(beta=1.0)).action is Action.INTERRUPT


def test_interruption_may_fire_in_the_agents_first_turn() -> None:
    decision = decide(situation(agent_turn_index=0), Tendencies(beta=1.0, gamma=1.0))
    assert decision.action is Action.INTERRUPT


# --- backchannel thresholds ------------------------------------------------------------


def test_the_agents_first_turn_never_backchannels() -> None:
    decision = decide(situation(agent_turn_index=0), Tendencies(gamma=1.0))
    assert decision.action is Action.NOTHING
    assert not check(decision, "backchannel", "not_first_turn")
    assert decide(situation(agent_turn_index=1), Tendencies(gamma=1.0)).action is (
        Action.BACKCHANNEL
    )


@given(
    st.builds(
        Situation,
        agent_speaking_seconds=st.floats(0, 120),
        agent_words=st.integers(0, 400),
        agent_text=st.sampled_from([STATEMENT, QUESTION, "", "Okay."]),
        agent_turn_index=st.just(0),
        interrupted_this_turn=st.booleans(),
        backchannels_this_turn=st.integers(0, 5),
        words_at_last_backchannel=st.integers(0, 400),
    ),
    st.floats(0, 1),
    st.floats(0, 1),
)
def test_no_backchannel_in_the_first_turn_whatever_else(
    s: Situation, beta: float, gamma: float
) -> None:
    assert decide(s, Tendencies(beta=beta, gamma=gamma)).action is not Action.BACKCHANNEL


def test_first_backchannel_of_a_turn_needs_six_words() -> None:
    tend = Tendencies(gamma=0.3)
    assert decide(situation(agent_words=6), tend).action is Action.BACKCHANNEL
    five = decide(situation(agent_words=5), tend)
    assert five.action is Action.NOTHING
    assert not check(five, "backchannel", "words")


@pytest.mark.parametrize(
    ("gamma", "spacing", "enough"),
    [(0.3, 19.9, 20), (1.0, 8.0, 8), (0.5, 16.5, 17), (0.01, 24.83, 25)],
)
def test_later_backchannels_are_spaced_twenty_five_minus_seventeen_gamma_words(
    gamma: float, spacing: float, enough: int
) -> None:
    assert backchannel_spacing_words(gamma) == pytest.approx(spacing)
    tend = Tendencies(gamma=gamma)
    last = 9
    base = dict(backchannels_this_turn=1, words_at_last_backchannel=last)
    assert decide(situation(agent_words=last + enough, **base), tend).action is Action.BACKCHANNEL
    short = decide(situation(agent_words=last + enough - 1, **base), tend)
    assert short.action is Action.NOTHING
    assert not check(short, "backchannel", "words")


def test_gamma_zero_disables_backchannels() -> None:
    decision = decide(situation(), Tendencies(gamma=0.0))
    assert decision.action is Action.NOTHING
    assert not check(decision, "backchannel", "enabled")


# --- priority and blocking -------------------------------------------------------------


def test_interruption_pre_empts_a_backchannel() -> None:
    decision = decide(situation(), Tendencies(beta=1.0, gamma=1.0))
    assert decision.action is Action.INTERRUPT
    assert decision.failed("backchannel") == []  # the backchannel was due as well


def test_after_the_interruption_a_backchannel_may_follow() -> None:
    decision = decide(situation(interrupted_this_turn=True), Tendencies(beta=1.0, gamma=1.0))
    assert decision.action is Action.BACKCHANNEL


@pytest.mark.parametrize(
    "text",
    [
        QUESTION,
        "Thanks for holding. I have your order open. Can you read me the order number",
        "Alright, I see the charge from Tuesday. Please hold the line while I check",
        "I have two options for you. Which one would you prefer, the refund or a credit",
    ],
)
def test_a_question_or_request_blocks_both(text: str) -> None:
    assert question_or_request(text)
    decision = decide(situation(agent_text=text), Tendencies(beta=1.0, gamma=1.0))
    assert decision.action is Action.NOTHING
    assert not check(decision, "interrupt", "not_question")
    assert not check(decision, "backchannel", "not_question")


# --- what a decision carries -----------------------------------------------------------


def test_every_check_is_returned_with_its_value() -> None:
    s = situation(
        agent_speaking_seconds=4.2049,
        agent_words=31,
        agent_turn_index=3,
        backchannels_this_turn=2,
        words_at_last_backchannel=20,
    )
    decision = decide(s, Tendencies(beta=0.7, gamma=0.3))
    by_name = {(c.rule, c.name): c for c in decision.checks}
    assert set(by_name) == {
        ("interrupt", "enabled"),
        ("interrupt", "first_in_turn"),
        ("interrupt", "speaking_s"),
        ("interrupt", "words"),
        ("interrupt", "not_question"),
        ("backchannel", "enabled"),
        ("backchannel", "not_first_turn"),
        ("backchannel", "not_question"),
        ("backchannel", "words"),
    }
    assert by_name["interrupt", "enabled"].value == 0.7
    assert by_name["interrupt", "first_in_turn"].value is False
    assert by_name["interrupt", "speaking_s"].value == 4.205
    assert by_name["interrupt", "speaking_s"].needed == "≥ 4.05"
    assert by_name["interrupt", "words"].value == 31
    assert by_name["interrupt", "not_question"].value is False
    assert by_name["backchannel", "enabled"].value == 0.3
    assert by_name["backchannel", "not_first_turn"].value == 3
    assert by_name["backchannel", "words"].value == 31
    assert by_name["backchannel", "words"].needed == "≥ 39.9"
    assert decision.action is Action.INTERRUPT
    assert decision.failed("backchannel") == [by_name["backchannel", "words"]]
    line = decision.explain()
    assert line.startswith("INTERRUPT | interrupt: ")
    assert "speaking_s 4.205 ≥ 4.05 ✓" in line
    assert "words 31 ≥ 39.9 ✗" in line
    data = decision.as_dict()
    assert data["action"] == "INTERRUPT"
    assert isinstance(data["checks"], list) and len(data["checks"]) == 9


def _spec_action(s: Situation, t: Tendencies) -> Action:
    """The DESIGN.md rule, transcribed."""
    asking = question_or_request(s.agent_text)
    if (
        t.beta > 0
        and not s.interrupted_this_turn
        and s.agent_speaking_seconds >= 10.0 - 8.5 * t.beta - 1e-9
        and s.agent_words >= 12
        and not asking
    ):
        return Action.INTERRUPT
    needed = 6 if s.backchannels_this_turn == 0 else s.words_at_last_backchannel + 25 - 17 * t.gamma
    if t.gamma > 0 and s.agent_turn_index > 0 and not asking and s.agent_words >= needed - 1e-9:
        return Action.BACKCHANNEL
    return Action.NOTHING


@given(
    st.builds(
        Situation,
        agent_speaking_seconds=st.floats(0, 30).map(lambda x: round(x, 2)),
        agent_words=st.integers(0, 120),
        agent_text=st.sampled_from([STATEMENT, QUESTION, "Okay so", "Tell me more"]),
        agent_turn_index=st.integers(0, 6),
        interrupted_this_turn=st.booleans(),
        backchannels_this_turn=st.integers(0, 3),
        words_at_last_backchannel=st.integers(0, 100),
    ),
    st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0]),
    st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0]),
)
def test_decide_matches_the_transcribed_rule(s: Situation, beta: float, gamma: float) -> None:
    tend = Tendencies(beta=beta, gamma=gamma)
    decision = decide(s, tend)
    assert decision.action is _spec_action(s, tend)
    assert decide(s, tend) == decision  # pure


def test_situation_as_dict_leaves_out_the_text() -> None:
    data = situation().as_dict()
    assert "agent_text" not in data
    assert data["agent_words"] == 30
