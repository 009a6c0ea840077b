"""Keypad steps in a scenario (``{ dtmf = "1#" }`` among ``user.turns``): what the
schema accepts and refuses, and what a call whose agent cannot hear keys does: refused
before anything opens, one line, exit 2, no log (docs/scenarios.md, "Keypad steps").
The steps reaching a real SIP far end are in tests/sip/test_sip_keypad.py."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from controls import Tendencies
from sessions.agents.base import Message
from sessions.agents.scripted import ScriptedAgent
from sessions.call.config import CallConfig
from sessions.call.setup.simulated_call import simulated_call
from sessions.callers.users import ScriptedUser
from sessions.lines.sip import line as sip
from sessions.log.models import ErrorEvent, Event, UserTurn
from sessions.plan import CallPlan
from sessions.plan.build import build_call
from sessions.scenarios import ScenarioError, load_scenario
from sessions.scenarios.keypad import check_keypad, hears_keys
from sessions.scenarios.model import DTMF_KEYS, MAX_DTMF_KEYS, KeypadStep
from sessions.scenarios.store import parse_scenario
from tests.support.cli import run_cutin

IVR = """
name = "ivr"
title = "IVR"
[agent]
turns = [{ text = "Welcome. For billing, press 1. Then your account number and hash." }]
[user]
goal = "reach billing"
persona = "knows the menu"
turns = TURNS
"""


def _ivr(turns: str = '["Hi there.", { dtmf = "1#" }, "I have a question."]') -> str:
    return IVR.replace("TURNS", turns)


def test_a_keypad_step_is_a_caller_turn_of_keys_among_the_spoken_ones() -> None:
    sc = parse_scenario(_ivr(), "ivr.toml")
    assert sc.user.turns == ["Hi there.", KeypadStep(dtmf="1#"), "I have a question."]
    assert sc.user.spoken_turns == ["Hi there.", "I have a question."]
    assert sc.user.keypad_steps == [(1, KeypadStep(dtmf="1#"))]
    every = parse_scenario(_ivr('[{ dtmf = "0123456789*#ABCD" }]'), "ivr.toml")
    assert every.user.turns == [KeypadStep(dtmf=DTMF_KEYS)]
    shipped = load_scenario("ivr-menu")  # the docs' example, shipped with the line scenarios
    assert [d for _, d in shipped.user.keypad_steps] == [
        KeypadStep(dtmf="1"),
        KeypadStep(dtmf="4417#"),
    ]


@pytest.mark.parametrize(
    ("turns", "says"),
    [
        ('["Hi", { dtmf = "1x" }]', "field 'user.turns.1.dtmf': Value error, '1x' holds 'x'"),
        ('["Hi", { dtmf = "1a" }]', "'1a' holds 'a'; a keypad step presses only 0-9 * # A-D"),
        ('["Hi", { dtmf = "1 2" }]', "field 'user.turns.1.dtmf'"),
        ('[{ dtmf = "" }]', "field 'user.turns.0.dtmf': Value error, no keys"),
        ('[{ dtmf = "' + "1" * 33 + '" }]', "33 keys; the limit is 32 per step"),
        ('["Hi", { dtmf = 1 }]', "field 'user.turns.1.dtmf': Input should be a valid string"),
        ('["Hi", { keys = "1" }]', "field 'user.turns.1.dtmf': Field required"),
        ('["Hi", { dtmf = "1", text = "x" }]', "'user.turns.1.text': Extra inputs"),
        ('["Hi", 3]', "field 'user.turns.1': a caller turn is a text to say or { dtmf"),
        ('["Hi", ["1"]]', "field 'user.turns.1': a caller turn is a text to say or { dtmf"),
    ],
    ids=["letter", "lower-case", "space", "empty", "too-long", "number", "no-dtmf", "extra",
         "int-turn", "list-turn"],
)  # fmt: skip
def test_a_bad_keypad_step_is_one_line_naming_the_field(turns: str, says: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(_ivr(turns), "ivr.toml")
    message = str(info.value)
    assert message.startswith("ivr.toml: ") and says in message, message
    assert "\n" not in message and "keypad." not in message and "spoken." not in message


def test_a_keypad_step_s_keys_are_what_the_sip_line_sends() -> None:
    assert set(DTMF_KEYS) == set(sip.DTMF_DIGITS)
    assert MAX_DTMF_KEYS == sip.MAX_DTMF
    assert hears_keys("sip:agent@127.0.0.1:5070")
    for agent in ("scripted", "openai", "realtime", "twilio:ws://h:1/", "pcm:ws://h:1/"):
        assert not hears_keys(agent), agent


def test_only_a_scripted_caller_on_a_line_without_dtmf_is_refused() -> None:
    sc = parse_scenario(_ivr(), "ivr.toml")
    check_keypad(sc, "sip:agent@127.0.0.1:5070", "scripted")
    check_keypad(sc, "scripted", "tester")  # the tester types; the scenario's turns unsaid
    check_keypad(sc, "twilio:ws://h:1/", "llm")  # the LLM caller has its own lines
    plain = load_scenario("line-check")
    check_keypad(plain, "twilio:ws://h:1/", "scripted")  # no keypad step: nothing to refuse
    with pytest.raises(ScenarioError) as info:
        check_keypad(sc, "twilio:ws://h:1/?token=s3cret", "scripted")
    message = str(info.value)
    assert message == (
        "ivr.toml: field 'user.turns.1': the caller presses keys (dtmf = '1#'), but a "
        "twilio line carries no DTMF; keypad steps need --agent sip:USER@HOST"
    )
    with pytest.raises(ScenarioError, match="but the scripted agent carries no DTMF"):
        check_keypad(sc, "scripted", "scripted")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port on loopback that counts as dialled if anything connects to it."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.3)
    yield srv
    srv.close()


def _dialled(srv: socket.socket) -> bool:
    try:
        conn, _ = srv.accept()
    except TimeoutError:
        return False
    conn.close()
    return True


@pytest.mark.parametrize("agent", ["scripted", "twilio"])
def test_cutin_simulate_refuses_keys_the_agent_cannot_hear_in_one_line_exit_2(
    tmp_path: Path, listener: socket.socket, agent: str
) -> None:
    path = tmp_path / "ivr.toml"
    path.write_text(_ivr(), encoding="utf-8")
    out = tmp_path / "out"
    agent_arg = (
        f"twilio:ws://127.0.0.1:{listener.getsockname()[1]}/" if agent == "twilio" else agent
    )
    env = {**os.environ, "CUTIN_CACHE_DIR": str(tmp_path / "cache")}
    result = run_cutin(
        "simulate", "--agent", agent_arg, "--scenario", str(path), "--out", str(out), env=env
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cutin: "), result.stderr
    who = "a twilio line" if agent == "twilio" else "the scripted agent"
    assert f"field 'user.turns.1': the caller presses keys (dtmf = '1#'), but {who}" in lines[0]
    assert "keypad steps need --agent sip:USER@HOST" in lines[0]
    assert "Traceback" not in result.stderr and not result.stdout.strip()
    assert not out.exists(), "a refused batch leaves no folder and no log"
    assert not _dialled(listener), "the agent was dialled before the refusal"


def test_the_call_builder_refuses_before_it_dials_or_logs(
    tmp_path: Path, listener: socket.socket
) -> None:
    sc = parse_scenario(_ivr(), "ivr.toml")
    log = tmp_path / "call.jsonl"
    plan = CallPlan(
        agent=f"twilio:ws://127.0.0.1:{listener.getsockname()[1]}/",
        user="scripted",
        speech="espeak",
        scenario_model=sc,
        log_path=log,
    )
    with pytest.raises(ScenarioError, match="carries no DTMF"):
        build_call(plan)
    assert not log.exists() and not _dialled(listener)
    # The tester's own call with the same scenario is not refused: its turns go unsaid.
    built = build_call(CallPlan(agent="scripted", user="tester", scenario_model=sc, virtual=True))
    built.close()


def test_a_call_built_by_hand_skips_a_keypad_step_with_a_logged_error() -> None:
    """What is left when the builder's refusal is bypassed (a simulated agent, which hears
    no keys): an ``error`` event naming the keys, and the caller goes on speaking."""
    sc = parse_scenario(_ivr(), "ivr.toml")
    events: list[Event] = []
    config = CallConfig(scenario=sc, tendencies=Tendencies(0.0, 0.0, 0.0), seed=1)
    loop = simulated_call(
        config, ScriptedAgent(sc), user=ScriptedUser(sc), listeners=[events.append]
    )
    loop.run_virtual(max_seconds=120)
    said = [e.original for e in events if isinstance(e, UserTurn)]
    assert said == ["Hi there.", "I have a question."]
    (error,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.where == "dtmf" and "keys 1# not pressed" in error.message
    # Skipped where the keys were due: the next line is said at once, in its place.
    kinds = [e.type for e in events if isinstance(e, UserTurn | ErrorEvent)]
    assert kinds == ["user_turn", "error", "user_turn"]


def test_a_barge_in_never_says_a_keypad_step() -> None:
    sc = parse_scenario(_ivr('["Hi there.", { dtmf = "1" }, "Billing, please."]'), "ivr.toml")
    user = ScriptedUser(sc, barge_in_with_next_line=True)
    history: list[Message] = []
    assert user.barge_in_content(history) == "Hi there."
    assert user.barge_in_content(history) is None  # the keys wait for their own turn
    assert user.next_turn(history) == KeypadStep(dtmf="1")
    assert user.barge_in_content(history) == "Billing, please."
    assert user.next_turn(history) is None
