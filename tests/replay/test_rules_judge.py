"""The rule judge on crafted logs, real call-loop logs and τ2 tick trials."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.judges.rules import judge_trial, success_verdicts
from replay.load import load_paths
from replay.model import JudgeVerdict, Trial
from sessions.log.models import Event
from tests.conftest import TAU2_FIXTURES

from .craft import (
    A0,
    A1,
    agent_turn,
    backchannel,
    cut_time,
    interruption,
    standard_call,
    user,
    write_log,
)


def load(path: Path) -> Trial:
    (trial,) = load_paths([path])
    return trial


def named(verdicts: list[JudgeVerdict], prefix: str) -> list[JudgeVerdict]:
    return [v for v in verdicts if v.name.startswith(prefix)]


def test_a_well_behaved_call_passes_every_rule(tmp_path: Path) -> None:
    trial = load(standard_call(tmp_path / "call.jsonl"))
    verdicts = judge_trial(trial)
    assert {v.judge for v in verdicts} == {"rules"}
    assert all(v.label == "pass" for v in verdicts), [(v.name, v.rationale) for v in verdicts]
    (y,) = named(verdicts, "yield")
    assert y.turn == 2 and y.score == 0.0 and y.extra["talk_over_s"] == 0.0
    (bc,) = named(verdicts, "backchannel")
    assert bc.turn == 4 and "talked on" in bc.rationale
    (p,) = named(verdicts, "presumes_unspoken")
    assert p.turn == 4
    latencies = named(verdicts, "response_latency")
    assert [v.turn for v in latencies] == [2, 4]
    assert latencies[1].score == pytest.approx(14.5 - (cut_time(6.0, 14) + 1.5))


def test_an_agent_that_talks_over_the_cut_fails_yield(tmp_path: Path) -> None:
    events: list[Event] = [
        *agent_turn(0, 0.0, A1, cut_word=8, talk_over_s=3.2),
        *interruption(0, 0.0, 8, "wait, stop please", 0),
    ]
    trial = load(write_log(tmp_path / "over.jsonl", events))
    (y,) = named(judge_trial(trial), "yield")
    assert y.label == "fail" and y.score == pytest.approx(3.2)
    assert "did not stop within 2 s" in y.rationale and "3.20 s" in y.rationale


def test_yield_just_inside_the_window_passes(tmp_path: Path) -> None:
    events: list[Event] = [
        *agent_turn(0, 0.0, A1, cut_word=8, talk_over_s=2.0),
        *interruption(0, 0.0, 8, "wait", 0),
    ]
    (y,) = named(judge_trial(load(write_log(tmp_path / "edge.jsonl", events))), "yield")
    assert y.label == "pass"


def test_backchannel_treated_as_a_turn_fails(tmp_path: Path) -> None:
    # The agent stops dead at the "mm-hmm" (its turn is cut right there) and then
    # starts a new turn answering it; no tester turn in between.
    bc_t = cut_time(3.0, 9)
    events: list[Event] = [
        *agent_turn(0, 0.0, "Hello, this is the clinic line."),
        user(0, 2.0, "hi", seconds=0.5),
        *agent_turn(1, 3.0, A1, cut_word=9),
        *backchannel(1, bc_t),
        *agent_turn(2, bc_t + 0.8, "Yes? Did you want to say something?"),
    ]
    trial = load(write_log(tmp_path / "bc.jsonl", events))
    verdicts = judge_trial(trial)
    (bc,) = named(verdicts, "backchannel")
    assert bc.label == "fail" and bc.turn == 2
    assert "treated the backchannel 'mm-hmm'" in bc.rationale
    assert bc.extra == {"stopped": True, "answered": True}
    assert named(verdicts, "yield") == []  # a backchannel is not an interruption


def test_next_turn_using_words_the_tester_never_heard_fails(tmp_path: Path) -> None:
    events: list[Event] = [
        *agent_turn(0, 0.0, A1, cut_word=14),
        *interruption(0, 0.0, 14, "sorry, hang on a second", 0),
        *agent_turn(1, 8.5, "So, as I said, the Elm Street address stays unless you change it."),
    ]
    verdicts = judge_trial(load(write_log(tmp_path / "presume.jsonl", events)))
    (p,) = named(verdicts, "presumes_unspoken")
    assert p.label == "fail" and p.turn == 2
    assert set(p.extra["words"]) == {"elm", "street"}
    assert "never heard" in p.rationale


def test_words_the_tester_said_meanwhile_are_not_presumed(tmp_path: Path) -> None:
    events: list[Event] = [
        *agent_turn(0, 0.0, A1, cut_word=14),
        *interruption(0, 0.0, 14, "is that the Elm Street one?", 0),
        *agent_turn(1, 8.5, "Yes, the Elm Street one. What is the new address?"),
    ]
    (p,) = named(judge_trial(load(write_log(tmp_path / "said.jsonl", events))), "presumes_unspoken")
    assert p.label == "pass"


def test_only_a_back_reference_after_a_cut_is_a_warning(tmp_path: Path) -> None:
    events: list[Event] = [
        *agent_turn(0, 0.0, A1, cut_word=14),
        *interruption(0, 0.0, 14, "sorry, go on", 0),
        *agent_turn(1, 8.5, "As I mentioned, we can change it for you."),
    ]
    (p,) = named(judge_trial(load(write_log(tmp_path / "ref.jsonl", events))), "presumes_unspoken")
    assert p.label == "warn" and "as i mentioned" in p.rationale.lower()


def test_response_latency_slow_early_and_missing(tmp_path: Path) -> None:
    events: list[Event] = [
        *agent_turn(0, 0.0, "Hello."),
        user(0, 1.0, "I need help", seconds=1.0),  # ends 2.0
        *agent_turn(1, 6.5, "Sure."),  # 4.5 s later: slow
        user(1, 8.0, "My order is late", seconds=2.0),  # ends 10.0
        *agent_turn(2, 9.5, "I see."),  # began 0.5 s before the tester finished
        user(2, 12.0, "Hello?", seconds=0.5),
        user(3, 16.0, "Anyone there?", seconds=0.5),  # no answer in between
        *agent_turn(3, 18.0, "Sorry about that."),
    ]
    verdicts = named(
        judge_trial(load(write_log(tmp_path / "lat.jsonl", events))), "response_latency"
    )
    by_turn = {v.turn: v for v in verdicts}
    assert by_turn[2].label == "fail" and by_turn[2].score == pytest.approx(4.5)
    assert by_turn[4].label == "fail" and "before the tester finished" in by_turn[4].rationale
    assert by_turn[5].label == "fail" and "no agent response" in by_turn[5].rationale
    assert by_turn[7].label == "pass"


def test_success_phrases_must_be_in_spoken_words(tmp_path: Path) -> None:
    trial = load(standard_call(tmp_path / "call.jsonl"))
    verdicts = success_verdicts(trial, ["Confirmation email", "ELM STREET", "how can I help"])
    labels = {v.name: v.label for v in verdicts}
    assert labels == {
        "success: Confirmation email": "pass",
        "success: ELM STREET": "fail",  # only in the part nobody heard
        "success: how can I help": "pass",
        "success": "fail",
    }
    assert verdicts[-1].score == pytest.approx(2 / 3)
    assert all(v.scope == "call" for v in verdicts)
    assert named(judge_trial(trial), "success") == []  # no phrases, no verdicts
    assert len(named(judge_trial(trial, ["thanks for calling"]), "success")) == 2
    assert A0.startswith("Thanks for calling")


def test_tick_trials_get_yield_and_backchannel_verdicts() -> None:
    trials = load_paths([TAU2_FIXTURES / "voice_full_duplex"])
    verdicts = [v for t in trials for v in judge_trial(t)]
    yields = named(verdicts, "yield")
    assert len(yields) == 23 and all(v.label == "pass" for v in yields)  # R_Y = 1.0
    bcs = named(verdicts, "backchannel")
    assert len(bcs) == 3
    assert sum(v.label == "pass" for v in bcs) == 1  # S_BC = 1/3: two stopped
    assert named(verdicts, "presumes_unspoken") == []  # no words in trimmed ticks


# ---- the real call loop, recorded to a real log --------------------------------
def _recorded_call(tmp_path: Path, scenario_toml: str, **tendencies: float) -> Trial:
    from controls import Tendencies
    from sessions.agents.scripted import ScriptedAgent
    from sessions.call.config import CallConfig
    from sessions.call.recorder import Recorder
    from sessions.call.setup.simulated_call import simulated_call
    from sessions.callers.users import ScriptedUser
    from sessions.log.models import AgentInfo
    from sessions.scenarios.store import parse_scenario

    sc = parse_scenario(scenario_toml, "test.toml")
    config = CallConfig(scenario=sc, tendencies=Tendencies(**tendencies), seed=3)
    recorder = Recorder.create(tmp_path, config, AgentInfo(kind="scripted", name="test"))
    loop = simulated_call(config, ScriptedAgent(sc), user=ScriptedUser(sc), listeners=[recorder])
    loop.run_virtual(max_seconds=300)
    recorder.close()
    return load(recorder.path)


LONG = (
    "Thanks for holding. I have your order open and it is packed at our warehouse. "
    "It has not gone to the courier yet so we still have time to change it today. "
    "The address on file is the Elm Street one from last year and it ships on Friday. "
    "Our team will send the parcel by courier and you will get a text message the day before."
)


def _scenario(**agent: object) -> str:
    flags = "\n".join(
        f"{k} = {str(v).lower() if isinstance(v, bool) else repr(v)}" for k, v in agent.items()
    )
    return f'''
name = "judge-test"
title = "Judge test"
[agent]
{flags}
turns = [{{ text = "{LONG}" }}, {{ text = "{LONG}" }}, {{ text = "{LONG}" }}]
[user]
goal = "change the address"
persona = "brief"
turns = ["hi", "my order is 1234", "ok", "thanks"]
interruptions = ["Sorry, can I stop you there?"]
'''


def test_real_call_that_talks_over_interruptions_fails_yield(tmp_path: Path) -> None:
    trial = _recorded_call(tmp_path, _scenario(yields_when_interrupted=False), beta=1.0)
    yields = named(judge_trial(trial), "yield")
    assert yields, "beta=1 should interrupt the long turns"
    assert any(v.label == "fail" and (v.score or 0) > 2.0 for v in yields)


def test_real_call_that_yields_passes_yield(tmp_path: Path) -> None:
    trial = _recorded_call(tmp_path, _scenario(), beta=1.0)
    yields = named(judge_trial(trial), "yield")
    assert yields and all(v.label == "pass" for v in yields)


def test_real_call_whose_agent_answers_backchannels_fails(tmp_path: Path) -> None:
    trial = _recorded_call(tmp_path, _scenario(treats_backchannel_as_turn=True), gamma=1.0)
    bcs = named(judge_trial(trial), "backchannel")
    assert bcs and any(v.label == "fail" for v in bcs)
    healthy = _recorded_call(tmp_path / "ok", _scenario(), gamma=1.0)
    good = named(judge_trial(healthy), "backchannel")
    assert good and all(v.label == "pass" for v in good)
