"""The LLM judge through the real openai client, over HTTP, to the loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.judges.llm import LlmJudge, LlmJudgeError, parse_answer
from replay.load import load_paths
from replay.model import Trial
from sessions.llm_client import LLMClient, LLMConfig, RetryPolicy
from tests.support.openai_server import Error, OpenAIServer, Reply

from .craft import standard_call

GOOD = {
    "call": {"label": "pass", "rationale": "Handled the cut and took the new address."},
    "turns": [
        {"turn": 0, "label": "pass", "rationale": "Polite greeting."},
        {"turn": 2, "label": "warn", "rationale": "Long before letting the tester talk."},
        {"turn": 4, "label": "pass", "rationale": "Acknowledged the new address."},
    ],
}


def judge_for(server: OpenAIServer, *, json_mode: bool = True) -> LlmJudge:
    config = LLMConfig(
        model="judge-model",
        base_url=server.base_url,
        api_key="not-needed",
        temperature=0.0,
        retry=RetryPolicy(max_retries=0, timeout_s=5.0),
    )
    return LlmJudge(LLMClient(config), json_mode=json_mode)


@pytest.fixture
def trial(tmp_path: Path) -> Trial:
    (t,) = load_paths([standard_call(tmp_path / "call.jsonl")])
    return t


def test_valid_answer_gives_call_and_turn_verdicts(
    openai_server: OpenAIServer, trial: Trial
) -> None:
    openai_server.enqueue(Reply(json.dumps(GOOD)))
    verdicts = judge_for(openai_server).judge(trial, ["confirmation email"])
    assert [(v.scope, v.turn, v.label) for v in verdicts] == [
        ("turn", 0, "pass"),
        ("turn", 2, "warn"),
        ("turn", 4, "pass"),
        ("call", None, "pass"),
    ]
    assert all(v.judge == "llm" and v.extra["model"] == "judge-model" for v in verdicts)
    assert verdicts[1].rationale == "Long before letting the tester talk."
    assert verdicts[1].t == trial.turns[2].start
    assert "ignored_turns" not in verdicts[-1].extra


def test_the_prompt_shows_cuts_unheard_words_disfluency_and_criteria(
    openai_server: OpenAIServer, trial: Trial
) -> None:
    openai_server.enqueue(Reply(json.dumps(GOOD)))
    judge_for(openai_server).judge(trial, ["confirmation email"])
    (body,) = openai_server.chat_bodies()
    assert body["model"] == "judge-model" and body["temperature"] == 0.0
    assert body["response_format"] == {"type": "json_object"}
    system, user = body["messages"]
    assert system["role"] == "system" and '"call"' in system["content"]
    text = user["content"]
    assert "Scenario: crafted" in text and "- confirmation email" in text
    assert "[2] 6.0 s AGENT: I have your order open" in text
    assert "⟂CUT «file which is the Elm Street one" in text
    assert "heard as: uh, I want to change my- my address" in text
    assert '· backchannel "mm-hmm" at 16.0 s' in text
    assert "· the tester cut in at 11.6 s" in text
    assert "short pause" not in text and "opportunity" not in text


def test_fenced_json_is_accepted(openai_server: OpenAIServer, trial: Trial) -> None:
    openai_server.enqueue(Reply("```json\n" + json.dumps(GOOD) + "\n```"))
    verdicts = judge_for(openai_server).judge(trial)
    assert verdicts[-1].label == "pass" and len(verdicts) == 4


def test_malformed_json_is_an_error_verdict_not_a_crash(
    openai_server: OpenAIServer, trial: Trial
) -> None:
    openai_server.enqueue(
        Reply('{"call": {"label": "pass", "rationale": "ok"}, "turns": [{"turn": 0,')
    )
    (verdict,) = judge_for(openai_server).judge(trial)
    assert verdict.label == "error" and verdict.judge == "llm" and verdict.scope == "call"
    assert "not JSON" in verdict.rationale and "line 1" in verdict.rationale


def test_malformed_json_raises_when_strict(openai_server: OpenAIServer, trial: Trial) -> None:
    openai_server.enqueue(Reply("Sure! Here is my verdict: PASS"))
    with pytest.raises(LlmJudgeError, match="not JSON"):
        judge_for(openai_server).judge(trial, strict=True)


def test_wrong_shape_names_the_field(openai_server: OpenAIServer, trial: Trial) -> None:
    bad = {"call": {"label": "maybe", "rationale": "?"}, "turns": []}
    openai_server.enqueue(Reply(json.dumps(bad)))
    (verdict,) = judge_for(openai_server).judge(trial)
    assert verdict.label == "error" and "call.label" in verdict.rationale


def test_labels_are_case_insensitive_and_unknown_turns_are_set_aside(
    openai_server: OpenAIServer, trial: Trial
) -> None:
    answer = {
        "call": {"label": "FAIL", "rationale": "Lost the request."},
        "turns": [
            {"turn": 1, "label": "Pass", "rationale": "a tester turn"},
            {"turn": 99, "label": "fail", "rationale": "no such turn"},
            {"turn": 2, "label": "Fail", "rationale": "presumed"},
        ],
    }
    openai_server.enqueue(Reply(json.dumps(answer)))
    verdicts = judge_for(openai_server).judge(trial)
    assert [(v.turn, v.label) for v in verdicts] == [(2, "fail"), (None, "fail")]
    assert verdicts[-1].extra["ignored_turns"] == [1, 99]
    assert verdicts[-1].extra["unjudged_turns"] == [0, 4]


def test_a_server_without_json_mode_is_asked_again_without_it(
    openai_server: OpenAIServer, trial: Trial
) -> None:
    openai_server.enqueue(Error(400, "response_format is not supported"), Reply(json.dumps(GOOD)))
    verdicts = judge_for(openai_server).judge(trial)
    assert verdicts[-1].label == "pass"
    first, second = openai_server.chat_bodies()
    assert "response_format" in first and "response_format" not in second


def test_a_failing_server_is_an_error_verdict(openai_server: OpenAIServer, trial: Trial) -> None:
    openai_server.enqueue(Error(500, "upstream exploded"))
    (verdict,) = judge_for(openai_server).judge(trial)
    assert verdict.label == "error"
    assert "request failed" in verdict.rationale and "HTTP 500" in verdict.rationale


def test_parse_answer_rejects_empty_text() -> None:
    with pytest.raises(LlmJudgeError, match="empty"):
        parse_answer("   ")
