"""The LLM user simulator against the loopback server."""

from __future__ import annotations

import pytest

from prompts import disfluency, user_sim
from sessions.agents.base import Message
from sessions.callers.simulator import SimulatorError, UserSimulator
from tests.llm.helpers import client_for
from tests.support.openai_server import Error, OpenAIServer, Reply

GOAL = "Get rebooked on the two fifteen direct flight to Boston with an aisle seat."
PERSONA = "A calm frequent flyer who likes to move things along."


def simulator(server: OpenAIServer, style: str = "") -> UserSimulator:
    return UserSimulator(client_for(server), GOAL, PERSONA, style)


def test_suggest_uses_goal_persona_and_flipped_roles(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Reply("  It's K7QX2M.  "))
    history = [
        Message("system", "agent-only instructions"),
        Message("assistant", "Welcome. Could you read me your booking code?"),
    ]
    assert simulator(openai_server).suggest(history) == "It's K7QX2M."
    sent = openai_server.chat_bodies()[0]["messages"]
    assert sent[0]["role"] == "system"
    assert GOAL in sent[0]["content"] and PERSONA in sent[0]["content"]
    assert sent[0]["content"] == user_sim.system_prompt(GOAL, PERSONA)
    # the agent speaks as "user" to the simulator; the agent's own system prompt stays hidden
    assert sent[1:] == [
        {"role": "user", "content": "Welcome. Could you read me your booking code?"}
    ]
    assert "agent-only instructions" not in str(sent)


def test_callers_earlier_turns_are_the_simulators_own(openai_server: OpenAIServer) -> None:
    history = [
        Message("assistant", "Hello, how can I help?"),
        Message("user", "My flight was cancelled."),
        Message("assistant", "I'm sorry. There are two options, the first", truncated=True),
        Message("user", "The direct one, please."),
        Message("assistant", "Done."),
    ]
    simulator(openai_server).suggest(history)
    roles = [m["role"] for m in openai_server.chat_bodies()[0]["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    cut = openai_server.chat_bodies()[0]["messages"][3]["content"]
    assert cut == user_sim.agent_message("I'm sorry. There are two options, the first", True)
    assert cut.startswith("I'm sorry. There are two options, the first [cut off")


def test_first_turn_without_agent_speech_gets_an_opening_cue(openai_server: OpenAIServer) -> None:
    simulator(openai_server).suggest([])
    sent = openai_server.chat_bodies()[0]["messages"]
    assert sent[-1] == {"role": "user", "content": user_sim.opening_cue()}


def test_style_directive_is_appended_to_the_system_prompt(openai_server: OpenAIServer) -> None:
    directive = disfluency.directive("roughly-half")
    simulator(openai_server, directive).suggest([Message("assistant", "Hi.")])
    system = openai_server.chat_bodies()[0]["messages"][0]["content"]
    assert system.endswith("\n\n" + directive)
    assert "Regularly (in roughly half of your sentences)" in system


def test_hang_up_mark_ends_the_call(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Reply(f"Great, thanks, bye! {user_sim.END_MARK}"))
    sim = simulator(openai_server)
    turn = sim.suggest_turn([Message("assistant", "You're all set.")])
    assert turn.text == "Great, thanks, bye!" and turn.ends_call
    openai_server.enqueue(Reply(f"Bye. {user_sim.END_MARK}"))
    assert sim.next_turn([Message("assistant", "Anything else?")]) == "Bye."
    assert sim.next_turn([Message("assistant", "Hello?")]) is None
    assert len(openai_server.chat_requests()) == 2  # no call once hung up


def test_interruption_line_sees_the_truncated_turn(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Reply('"Sorry, is that the direct one?"'))
    history = [
        Message("assistant", "Welcome to Northwind Air."),
        Message("user", "My flight was cancelled."),
    ]
    heard = "I can see a flight at two fifteen and another one through"
    line = simulator(openai_server).interruption_line(heard, history)
    assert line == "Sorry, is that the direct one?"
    sent = openai_server.chat_bodies()[0]["messages"]
    assert GOAL in sent[0]["content"]
    assert sent[-1]["role"] == "user" and heard in sent[-1]["content"]
    assert "You cut in right now" in sent[-1]["content"]
    assert [m["content"] for m in sent[1:3]] == [
        "Welcome to Northwind Air.",
        "My flight was cancelled.",
    ]


def test_interruption_line_does_not_repeat_a_rewritten_turn(openai_server: OpenAIServer) -> None:
    heard = "Let me read you the whole policy, it starts with"
    history = [Message("assistant", "Hi."), Message("user", "Refund?"), Message("assistant", heard)]
    simulator(openai_server).interruption_line(heard, history)
    sent = openai_server.chat_bodies()[0]["messages"]
    assert sum(heard in m["content"] for m in sent) == 1


def test_failure_is_a_simulator_error(openai_server: OpenAIServer) -> None:
    openai_server.default = Error(503)
    with pytest.raises(SimulatorError, match="HTTP 503"):
        simulator(openai_server).suggest([Message("assistant", "Hi.")])
