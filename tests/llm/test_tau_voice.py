"""tau-Voice's classifiers as a policy, against the loopback server."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from controls import Action
from prompts import tau_voice as tau_prompts
from sessions.agents.base import Message
from sessions.policies import PolicyError
from sessions.policies.tau_voice import BACKCHANNEL_TOKENS, TauVoicePolicy, TauVoiceResult
from tests.llm.helpers import SECRET, client_for
from tests.support.openai_server import Error, OpenAIServer, RecordedRequest, Reply, Response

HISTORY = [
    Message("assistant", "Welcome to Northwind Air."),
    Message("user", "My flight was cancelled."),
]
SO_FAR = "I found your booking. Your morning flight was cancelled because of a crew problem. Th"


def is_interrupt_prompt(request: RecordedRequest) -> bool:
    return "should the user interrupt the agent NOW?" in request.text


def answer(interrupt: str, backchannel: str, *, together: bool = True) -> Callable[..., Response]:
    """A responder answering each classifier; with ``together`` it only answers once both
    requests are in flight at the same time, so sequential calls fail the test."""
    barrier = threading.Barrier(2, timeout=5)

    def respond(request: RecordedRequest) -> Response:
        if together:
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                return Error(400, message="classifier calls were not concurrent")
        if is_interrupt_prompt(request):
            return Reply(interrupt, prompt_tokens=300, completion_tokens=1)
        return Reply(backchannel, prompt_tokens=700, completion_tokens=1)

    return respond


def policy(server: OpenAIServer, seed: int = 0, max_retries: int = 0) -> TauVoicePolicy:
    return TauVoicePolicy(client_for(server, max_retries=max_retries), seed=seed)


def test_both_classifiers_are_asked_in_parallel_with_the_published_prompts(
    openai_server: OpenAIServer,
) -> None:
    openai_server.responder = answer("NO", "NO")
    result = policy(openai_server).consult(SO_FAR, HISTORY)
    assert result.decision is Action.NOTHING and result.llm_calls == 2
    requests = openai_server.chat_requests()
    assert len(requests) == 2
    history = tau_prompts.format_history([(m.role, m.content) for m in HISTORY], SO_FAR)
    assert sorted(r.text for r in requests) == sorted(
        [tau_prompts.interruption_prompt(history), tau_prompts.backchannel_prompt(history)]
    )
    for r in requests:  # one user message each, no system prompt, as in tau2
        assert [m["role"] for m in r.messages] == ["user"]
        assert f"ASSISTANT: {SO_FAR} [CURRENTLY SPEAKING, INCOMPLETE]" in r.text
        assert "USER: My flight was cancelled." in r.text


def test_interrupt_wins_over_backchannel(openai_server: OpenAIServer) -> None:
    openai_server.responder = answer("YES", "YES")
    result = policy(openai_server).consult(SO_FAR, HISTORY)
    assert result.decision is Action.INTERRUPT and result.token is None
    assert (result.interrupt_answer, result.backchannel_answer) == ("YES", "YES")


def test_backchannel_token_is_seeded(openai_server: OpenAIServer) -> None:
    def tokens(seed: int) -> list[str | None]:
        openai_server.responder = answer("NO", " yes \n", together=False)
        p = policy(openai_server, seed=seed)
        out = [p.consult(SO_FAR, HISTORY).token for _ in range(8)]
        p.close()
        return out

    first = tokens(7)
    assert set(first) <= set(BACKCHANNEL_TOKENS) and None not in first
    assert tokens(7) == first
    assert len({tuple(tokens(s)) for s in range(6)}) > 1  # the seed matters


def test_answers_are_read_strictly_as_tau2_does(openai_server: OpenAIServer) -> None:
    openai_server.responder = answer("Yes, interrupt.", "NO")
    result = policy(openai_server).consult(SO_FAR, HISTORY)
    assert result.decision is Action.NOTHING
    assert result.interrupt_answer == "Yes, interrupt."


def test_cost_is_counted(openai_server: OpenAIServer) -> None:
    openai_server.responder = answer("NO", "YES")
    p = policy(openai_server)
    result = p.consult(SO_FAR, HISTORY)
    assert result.decision is Action.BACKCHANNEL
    assert result.llm_calls == 2 and p.llm_calls == 2 and p.consultations == 1
    assert (result.prompt_tokens, result.completion_tokens, result.tokens) == (1000, 2, 1002)
    assert result.latency_s > 0
    assert result.as_dict()["llm_calls"] == 2


def test_a_failing_classifier_raises_with_what_was_spent(openai_server: OpenAIServer) -> None:
    def respond(request: RecordedRequest) -> Response:
        if is_interrupt_prompt(request):
            return Error(500, message=f"bad {SECRET}")
        return Reply("YES")

    openai_server.responder = respond
    with pytest.raises(PolicyError) as info:
        policy(openai_server, max_retries=1).consult(SO_FAR, HISTORY)
    result = info.value.result
    assert isinstance(result, TauVoiceResult)
    assert result.decision is Action.NOTHING and result.llm_calls == 2
    assert result.backchannel_answer == "YES" and result.interrupt_answer is None
    assert result.retries == 1
    assert "interrupt" in str(info.value) and SECRET not in str(info.value)


def test_retries_are_visible(openai_server: OpenAIServer) -> None:
    served: list[str] = []

    def respond(request: RecordedRequest) -> Response:
        kind = "i" if is_interrupt_prompt(request) else "b"
        served.append(kind)
        if kind == "i" and served.count("i") == 1:
            return Error(429, retry_after=0.01)
        return Reply("NO")

    openai_server.responder = respond
    result = policy(openai_server, max_retries=2).consult(SO_FAR, HISTORY)
    assert result.retries == 1 and result.llm_calls == 2
    assert len(openai_server.chat_requests()) == 3


def test_start_runs_a_consultation_in_the_background(openai_server: OpenAIServer) -> None:
    openai_server.responder = answer("YES", "NO")
    p = policy(openai_server)
    future = p.start(SO_FAR, HISTORY)
    assert future.result(timeout=10).decision is Action.INTERRUPT
    p.close()
