"""The OpenAI-compatible agent connector, with the real openai client over loopback HTTP."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sessions.agents.base import Agent, AgentError, Message, ReplyStream
from sessions.agents.openai_agent import OpenAIAgent
from sessions.settings import Settings
from tests.llm.helpers import SECRET, client_for
from tests.support.openai_server import Error, Hang, Malformed, OpenAIServer, Reply

SYSTEM = "You are the Northwind Air reservations agent."


def drain(stream: ReplyStream, timeout: float = 10.0) -> list[str]:
    """Every chunk of ``stream`` in arrival order (fails the test if it never ends)."""
    chunks: list[str] = []
    deadline = time.monotonic() + timeout
    while not stream.done:
        assert time.monotonic() < deadline, "reply stream never finished"
        chunks.extend(stream.poll(block=True, timeout=0.5))
    return chunks


def agent_for(server: OpenAIServer, *, max_retries: int = 2, timeout_s: float = 2.0) -> OpenAIAgent:
    client = client_for(server, max_retries=max_retries, timeout_s=timeout_s)
    return OpenAIAgent(SYSTEM, client, name="northwind")


def test_it_satisfies_the_agent_protocol(openai_server: OpenAIServer) -> None:
    agent: Agent = agent_for(openai_server)
    assert agent.name == "northwind"


def test_streamed_reply_arrives_in_pieces_and_reassembles(openai_server: OpenAIServer) -> None:
    pieces = ["Welcome to ", "Northwind ", "Air. ", "How can ", "I help?"]
    openai_server.enqueue(Reply("".join(pieces), chunks=pieces, chunk_delay_s=0.02))
    agent = agent_for(openai_server)
    stream = agent.reply([Message("user", "Hi")])
    chunks = drain(stream)
    assert stream.error is None
    assert chunks == pieces  # spoken as they arrive, not as one blob
    assert "".join(chunks) == "Welcome to Northwind Air. How can I help?"
    assert agent.stats[-1].tokens == 18 and agent.stats[-1].attempts == 1
    body = openai_server.chat_bodies()[0]
    assert body["stream"] is True and body["model"] == "test-model"


def test_the_server_sees_exactly_the_history_given(openai_server: OpenAIServer) -> None:
    history = [
        Message("assistant", "Welcome to Northwind Air."),
        Message("user", "My flight got cancelled."),
        # cut at the interruption: the loop rewrote it to the spoken part
        Message("assistant", "I'm sorry to hear that. I can see two", truncated=True),
        Message("user", "Just the direct one, please."),
    ]
    drain(agent_for(openai_server).reply(history))
    sent = openai_server.chat_bodies()[0]["messages"]
    assert sent == [
        {"role": "system", "content": SYSTEM},
        {"role": "assistant", "content": "Welcome to Northwind Air."},
        {"role": "user", "content": "My flight got cancelled."},
        {"role": "assistant", "content": "I'm sorry to hear that. I can see two"},
        {"role": "user", "content": "Just the direct one, please."},
    ]


def test_429_then_success_is_retried(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Error(429, retry_after=0.01), Reply("Sure."))
    agent = agent_for(openai_server)
    assert "".join(drain(agent.reply([Message("user", "Hi")]))) == "Sure."
    assert agent.stats[-1].retries == 1 and agent.llm.retries == 1
    assert len(openai_server.chat_requests()) == 2


def test_500_forever_ends_the_reply_with_a_key_free_agent_error(
    openai_server: OpenAIServer,
) -> None:
    openai_server.default = Error(500, message=f"oops {SECRET}")
    agent = agent_for(openai_server, max_retries=2)
    stream = agent.reply([Message("user", "Hi")])
    assert drain(stream) == []
    assert isinstance(stream.error, AgentError)
    assert "HTTP 500" in str(stream.error) and "3 attempts" in str(stream.error)
    assert SECRET not in str(stream.error)
    assert len(openai_server.chat_requests()) == 3


def test_a_hang_becomes_a_timeout_error(openai_server: OpenAIServer) -> None:
    openai_server.default = Hang(seconds=30)
    stream = agent_for(openai_server, max_retries=0, timeout_s=0.3).reply([Message("user", "Hi")])
    start = time.monotonic()
    drain(stream)
    assert isinstance(stream.error, AgentError) and "no answer within" in str(stream.error)
    assert time.monotonic() - start < 10


def test_malformed_stream_keeps_what_was_said_and_reports(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Malformed(good_chunks=["Let me ", "check "]))
    stream = agent_for(openai_server).reply([Message("user", "Hi")])
    assert drain(stream) == ["Let me ", "check "]
    assert isinstance(stream.error, AgentError) and "stream broke off" in str(stream.error)


def test_from_settings_reads_key_and_prompt_file(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    prompt = tmp_path / "agent.txt"
    prompt.write_text("You are a terse clinic receptionist.\n", encoding="utf-8")
    agent = OpenAIAgent.from_settings(
        Settings(), agent_prompt_file=prompt, model="local-model", base_url=openai_server.base_url
    )
    drain(agent.reply([Message("user", "Hello?")]))
    request = openai_server.chat_requests()[0]
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.body["model"] == "local-model"
    assert request.messages[0] == {
        "role": "system",
        "content": "You are a terse clinic receptionist.",
    }
    assert SECRET not in repr(agent.llm.config)


def test_missing_prompt_file_is_an_agent_error(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="cannot read agent prompt"):
        OpenAIAgent.from_settings(
            Settings(), agent_prompt_file=tmp_path / "nope.txt", base_url="http://127.0.0.1:9/v1"
        )


def test_no_key_without_local_server_is_an_agent_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CUTIN_OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    agent = OpenAIAgent.from_settings(Settings(), system_prompt="x")
    stream = agent.reply([Message("user", "Hi")])
    drain(stream)
    assert isinstance(stream.error, AgentError) and "OPENAI_API_KEY" in str(stream.error)
