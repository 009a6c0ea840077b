"""The shared chat client against the loopback server: retries, timeouts, broken streams."""

from __future__ import annotations

import socket
import time

import pytest

from sessions.llm_client import LLMClient, LLMConfig, LLMError, RetryPolicy
from tests.llm.helpers import SECRET, client_for
from tests.support.openai_server import Error, Hang, Malformed, OpenAIServer, Reply

HI = [{"role": "user", "content": "hi"}]


def test_complete_returns_text_and_usage(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Reply("Hello.", prompt_tokens=21, completion_tokens=3))
    completion = client_for(openai_server).complete(HI)
    assert completion.text == "Hello."
    assert (completion.stats.prompt_tokens, completion.stats.completion_tokens) == (21, 3)
    assert completion.stats.attempts == 1
    body = openai_server.chat_bodies()[0]
    assert body["messages"] == HI and body["model"] == "test-model" and not body.get("stream")


def test_stream_yields_chunks_and_collects_usage(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Reply("one two three", prompt_tokens=5, completion_tokens=9))
    reply = client_for(openai_server).stream(HI)
    assert list(reply) == ["one ", "two ", "three"]
    assert reply.text == "one two three"
    assert reply.stats.tokens == 14 and reply.stats.finish_reason == "stop"
    assert openai_server.chat_bodies()[0]["stream_options"] == {"include_usage": True}


def test_429_with_retry_after_is_retried_and_counted(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Error(429, retry_after=0.2), Reply("fine"))
    slept: list[float] = []
    config = LLMConfig(
        model="m", base_url=openai_server.base_url, retry=RetryPolicy(backoff_base_s=0.01)
    )
    client = LLMClient(config, sleep=slept.append)
    completion = client.complete(HI)
    assert completion.text == "fine"
    assert completion.stats.attempts == 2 and completion.stats.retries == 1
    assert client.retries == 1 and client.calls == 1
    assert slept and slept[0] >= 0.2  # the server's Retry-After beat the 10 ms backoff
    assert len(openai_server.chat_requests()) == 2


def test_500_forever_gives_up_after_bounded_retries(openai_server: OpenAIServer) -> None:
    openai_server.default = Error(500, message=f"upstream broke, key was {SECRET}")
    client = client_for(openai_server, max_retries=2)
    with pytest.raises(LLMError) as info:
        client.complete(HI)
    assert len(openai_server.chat_requests()) == 3
    assert info.value.attempts == 3 and info.value.kind == "server" and info.value.status == 500
    message = str(info.value)
    assert "HTTP 500" in message and "after 3 attempts" in message
    assert SECRET not in message and "***" in message
    # the key did go to the server, as a bearer token, and only there
    assert openai_server.chat_requests()[0].headers["authorization"] == f"Bearer {SECRET}"


def test_client_errors_are_not_retried(openai_server: OpenAIServer) -> None:
    openai_server.default = Error(400, message="bad request")
    with pytest.raises(LLMError) as info:
        client_for(openai_server).complete(HI)
    assert info.value.attempts == 1 and info.value.kind == "client"
    assert len(openai_server.chat_requests()) == 1


def test_a_hang_past_the_timeout_fails_within_bounded_time(openai_server: OpenAIServer) -> None:
    openai_server.default = Hang(seconds=30)
    client = client_for(openai_server, max_retries=1, timeout_s=0.3)
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        list(client.stream(HI))
    elapsed = time.monotonic() - start
    assert info.value.kind == "timeout" and info.value.attempts == 2
    assert "no answer within 0.3 s" in str(info.value)
    assert elapsed < 10  # two 0.3 s timeouts and a short backoff, not the 30 s hang


def test_a_stream_that_stalls_mid_reply_times_out(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Reply("a b c", chunk_delay_s=5))
    client = client_for(openai_server, max_retries=0, timeout_s=0.3)
    with pytest.raises(LLMError) as info:
        list(client.stream(HI))
    assert info.value.kind == "timeout"


def test_malformed_stream_is_a_clear_error(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Malformed(good_chunks=["Hel", "lo"]))
    got: list[str] = []
    with pytest.raises(LLMError) as info:
        got.extend(client_for(openai_server).stream(HI))
    assert got == ["Hel", "lo"]  # what arrived before the break was delivered
    assert info.value.kind == "bad_response" and "stream broke off" in str(info.value)
    assert len(openai_server.chat_requests()) == 1  # text was out: no retry


def test_cut_connection_before_any_text_is_retried(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Malformed(good_chunks=[], truncate=True), Reply("again"))
    reply = client_for(openai_server).stream(HI)
    assert "".join(reply) == "again" and reply.stats.attempts == 2


def test_cut_connection_mid_text_is_an_error(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Malformed(good_chunks=["Half a "], truncate=True))
    with pytest.raises(LLMError) as info:
        list(client_for(openai_server).stream(HI))
    assert info.value.kind == "connection"


def test_refused_connection_is_bounded() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = LLMConfig(
        model="m",
        base_url=f"http://127.0.0.1:{port}/v1",
        retry=RetryPolicy(max_retries=1, timeout_s=1, backoff_base_s=0.01),
    )
    with pytest.raises(LLMError) as info:
        LLMClient(config).complete(HI)
    assert info.value.kind == "connection" and info.value.attempts == 2


def test_no_key_and_no_local_server_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMError) as info:
        LLMClient(LLMConfig(model="m")).complete(HI)
    assert info.value.kind == "config" and "OPENAI_API_KEY" in str(info.value)


def test_local_server_without_key_gets_a_placeholder(openai_server: OpenAIServer) -> None:
    client_for(openai_server, key=None).complete(HI)
    assert openai_server.chat_requests()[0].headers["authorization"] == "Bearer not-needed"


def test_config_repr_hides_the_key() -> None:
    assert SECRET not in repr(LLMConfig(model="m", api_key=SECRET))
