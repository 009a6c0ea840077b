"""Scenario files validate with clear errors; calls leave complete, readable logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from controls import Tendencies
from sessions.agents.base import Message, ReplyStream
from sessions.agents.scripted import ScriptedAgent
from sessions.call.config import CallConfig
from sessions.call.recorder import Recorder
from sessions.call.setup.simulated_call import simulated_call
from sessions.callers.users import ScriptedUser
from sessions.log import read_session
from sessions.log.models import AgentInfo, AgentTurnEnd, Backchannel, EndEvent, ErrorEvent
from sessions.scenarios import ScenarioError, list_scenarios, load_scenario
from sessions.scenarios.store import parse_scenario
from sessions.speech.speech_clock import SpeakingStyle, plan

from .helpers import run_call

GOOD = """
name = "tiny"
title = "Tiny"
[agent]
turns = [{ text = "Hello there. How can I help?" }]
[user]
goal = "say hi"
persona = "friendly"
"""


LONG_TURNS = ("retail-order-change", "airline-rebooking", "clinic-triage")


def test_the_three_core_scenarios_have_long_multi_sentence_agent_turns() -> None:
    for sc in list_scenarios():
        assert sc.user.goal and sc.user.persona and sc.user.turns
        low, high = (8.0, 20.5) if sc.name in LONG_TURNS else (4.0, 20.5)
        for turn in sc.agent.turns:
            for text in [turn.text, *(v.text for v in turn.variants)]:
                words = plan(text, SpeakingStyle(), seed=0)
                seconds = words[-1].end
                assert low <= seconds <= high, (sc.name, round(seconds, 1), text[:40])
                assert text.count(".") + text.count("?") >= (3 if sc.name in LONG_TURNS else 2)


def test_unknown_scenario_lists_the_shipped_ones() -> None:
    with pytest.raises(ScenarioError, match="retail-order-change"):
        load_scenario("no-such-scenario")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (GOOD.replace('goal = "say hi"', ""), "user.goal"),
        (
            GOOD.replace('turns = [{ text = "Hello there. How can I help?" }]', "turns = []"),
            "agent.turns",
        ),
        (GOOD.replace('name = "tiny"', 'name = "Tiny Name"'), "name"),
        (GOOD + "\nbogus = 1\n", "user.bogus"),
        (GOOD.replace("[agent]", "bogus = 1\n[agent]"), "bogus"),
        (GOOD.replace("[agent]", "[agent]\nresponse_latency_s = -1"), "agent.response_latency_s"),
    ],
)
def test_bad_scenarios_name_the_field(text: str, field: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "my.toml")
    assert "my.toml" in str(info.value) and f"'{field}'" in str(info.value)


def test_scenario_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(GOOD, encoding="utf-8")
    assert load_scenario(path).name == "tiny"
    with pytest.raises(ScenarioError, match="not valid TOML"):
        parse_scenario("name = ", "x.toml")


def test_agent_that_does_not_yield_talks_over() -> None:
    sc = load_scenario("retail-order-change").model_copy(deep=True)
    sc.agent.yields_when_interrupted = False
    _, events, _ = run_call(sc, beta=1.0)
    ends = [e for e in events if isinstance(e, AgentTurnEnd) and e.interrupted]
    assert ends
    assert all(e.talk_over_s is not None and e.talk_over_s > 0.5 for e in ends)
    assert all(e.unspoken == "" for e in ends)


def test_agent_that_takes_a_backchannel_as_a_turn_stops() -> None:
    sc = load_scenario("retail-order-change").model_copy(deep=True)
    sc.agent.treats_backchannel_as_turn = True
    _, events, _ = run_call(sc, gamma=1.0)
    bc = next(e for e in events if isinstance(e, Backchannel))
    end = next(e for e in events if isinstance(e, AgentTurnEnd) and e.turn == bc.turn)
    assert end.interrupted and end.cut_t == bc.t and end.unspoken


def test_recorded_call_reads_back_event_for_event(tmp_path: Path) -> None:
    sc = load_scenario("airline-rebooking")
    config = CallConfig(scenario=sc, tendencies=Tendencies(0.5, 0.7, 0.0), seed=2)
    recorder = Recorder.create(tmp_path, config, AgentInfo(kind="scripted", name=sc.agent.name))
    seen = []
    loop = simulated_call(
        config, ScriptedAgent(sc), user=ScriptedUser(sc), listeners=[recorder, seen.append]
    )
    loop.run_virtual()
    recorder.close()
    session = read_session(recorder.path)
    assert session.warnings == []
    assert session.header.scenario == "airline-rebooking"
    assert session.header.tendencies.beta == 0.7
    assert [e.model_dump() for e in session.events] == [
        type(e).model_validate(e.model_dump()).model_dump() for e in seen
    ]
    assert isinstance(session.events[-1], EndEvent)


class _Exploding:
    name = "exploding"

    def __init__(self) -> None:
        self.calls = 0

    def reply(self, history: list[Message]) -> ReplyStream | None:
        self.calls += 1
        if self.calls == 2:
            raise KeyboardInterrupt  # something the loop cannot absorb
        return ReplyStream.of_text("Hello, thanks for calling. I can help with that today.")

    def close(self) -> None:
        return None


def test_a_crash_mid_call_leaves_a_readable_log(tmp_path: Path) -> None:
    sc = load_scenario("clinic-triage")
    config = CallConfig(scenario=sc, seed=1)
    recorder = Recorder.create(tmp_path, config, AgentInfo(kind="test"))
    loop = simulated_call(config, _Exploding(), user=ScriptedUser(sc), listeners=[recorder])
    with pytest.raises(KeyboardInterrupt):
        loop.run_virtual()
    # No close(): the process "died". Every line was flushed as it happened.
    session = read_session(recorder.path)
    assert any(isinstance(e, AgentTurnEnd) for e in session.events)
    assert isinstance(session.events[-2], ErrorEvent)
    assert isinstance(session.events[-1], EndEvent) and session.events[-1].reason == "crash"


def test_agent_errors_are_logged_and_the_call_goes_on() -> None:
    class Flaky(_Exploding):
        def reply(self, history: list[Message]) -> ReplyStream | None:
            self.calls += 1
            if self.calls == 2:
                raise RuntimeError("upstream 500")
            if self.calls > 3:
                return None
            return ReplyStream.of_text("Hello, thanks for calling. I can help with that today.")

    sc = load_scenario("clinic-triage")
    events: list[object] = []
    loop = simulated_call(
        CallConfig(scenario=sc), Flaky(), user=ScriptedUser(sc), listeners=[events.append]
    )
    loop.run_virtual()
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert errors and "upstream 500" in errors[0].message
    assert sum(isinstance(e, AgentTurnEnd) for e in events) == 2
