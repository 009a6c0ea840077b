"""Batches with LLM parts: the real openai client over HTTP to the loopback server,
as the agent under test (--agent openai) or as the caller (--user llm); a call
whose LLM failed is filed as failed and run again next time."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions.log import read_session
from sessions.log.models import ErrorEvent, UserTurn
from sessions.scenarios import load_scenario
from tests.support.openai_server import Error, OpenAIServer, RecordedRequest, Reply

from .helpers import is_complete, simulate, simulate_json


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "CUTIN_OPENAI_BASE_URL", "CUTIN_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_openai_agent_batch(
    openai_server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.default = Reply("Thanks. Let me check that for you. One moment please.")
    out = tmp_path / "b"
    summary = simulate_json(
        capsys,
        *("--agent", "openai", "--base-url", openai_server.base_url, "--model", "test-model"),
        *("--scenario", "retail-order-change", "--beta", "0,1", "--runs", "2"),
        "--out",
        str(out),
    )
    assert (summary["ran"], summary["failed"]) == (4, 0)
    scenario = load_scenario("retail-order-change")
    seeds = set()
    for path in sorted(out.glob("*.jsonl")):
        s = read_session(path)
        assert s.header.agent.kind == "openai" and s.header.agent.model == "test-model"
        assert s.header.agent.base_url == openai_server.base_url
        assert is_complete(path) and not s.of(ErrorEvent)
        seeds.add(s.header.seeds["seed"])
    bodies = openai_server.chat_bodies()
    assert bodies and all(b["model"] == "test-model" for b in bodies)
    assert all(b["messages"][0]["content"] == scenario.agent.system_prompt for b in bodies)
    # Each call's seed is sent to the endpoint.
    assert {b["seed"] for b in bodies} == seeds and len(seeds) == 4

    again = simulate_json(
        capsys,
        *("--agent", "openai", "--base-url", openai_server.base_url, "--model", "test-model"),
        *("--scenario", "retail-order-change", "--beta", "0,1", "--runs", "2"),
        "--out",
        str(out),
    )
    assert (again["ran"], again["skipped"]) == (0, 4)
    code, _, err = simulate(
        capsys,
        *("--agent", "openai", "--base-url", openai_server.base_url, "--model", "other-model"),
        *("--scenario", "retail-order-change", "--beta", "0,1", "--runs", "2"),
        "--out",
        str(out),
    )
    assert code == 2 and "model: 'test-model' in the log, 'other-model' planned" in err


def test_llm_user_batch(
    openai_server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def answer(request: RecordedRequest) -> Reply:
        # The interruption-line prompt (prompts/templates/interruption_line.txt) is last.
        if "cut in right now" in request.messages[-1]["content"]:
            return Reply("Sorry, one quick thing.")
        return Reply("Sure, it is order 48213.")

    openai_server.responder = answer
    out = tmp_path / "b"
    summary = simulate_json(
        capsys,
        *("--user", "llm", "--base-url", openai_server.base_url, "--model", "test-model"),
        *("--scenario", "retail-order-change", "--beta", "0,1"),
        "--out",
        str(out),
    )
    assert (summary["ran"], summary["failed"]) == (2, 0)
    for path in out.glob("*.jsonl"):
        s = read_session(path)
        assert s.header.batch is not None
        assert s.header.batch["user"] == "llm" and s.header.batch["user_model"] == "test-model"
        said = {u.source: u.original for u in s.of(UserTurn)}
        if s.header.tendencies.beta == 0.0:
            # The LLM caller's own line, not a scenario line (the audit reads them apart).
            assert said == {"simulator": "Sure, it is order 48213."}
        else:
            # Every agent turn is cut, so the caller only ever speaks by cutting in.
            assert said == {"interruption": "Sorry, one quick thing."}
    # The simulator was shown the scenario's goal.
    goal = load_scenario("retail-order-change").user.goal
    assert any(goal in r.text for r in openai_server.chat_requests())


def test_failed_calls_are_kept_aside_and_rerun(
    openai_server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.default = Error(400, "scripted bad request")
    out = tmp_path / "b"
    argv = [
        *("--agent", "openai", "--base-url", openai_server.base_url, "--model", "test-model"),
        *("--scenario", "clinic-triage", "--runs", "2", "--out", str(out)),
    ]
    code, _, err = simulate(capsys, *argv)
    assert code == 1
    assert "0 calls run, 0 skipped, 2 failed" in err
    # The reason is on the call's progress line, once (the report does not repeat it).
    assert "clinic-triage__a0.5_b0_g0.5__run01 FAILED: agent:" in err
    assert err.count("scripted bad request") == 2, err
    assert not list(out.glob("*.jsonl"))
    failed = sorted(out.glob("*.jsonl.failed"))
    assert len(failed) == 2 and all(read_session(p).of(ErrorEvent) for p in failed)

    openai_server.default = Reply("All right. I can help with that today.")
    code, _, err = simulate(capsys, *argv)
    assert code == 0, err
    assert "2 calls run, 0 skipped, 0 failed" in err
    assert sorted(p.name for p in out.iterdir()) == [
        "clinic-triage__a0.5_b0_g0.5__run01.jsonl",
        "clinic-triage__a0.5_b0_g0.5__run02.jsonl",
    ]


def test_llm_without_key_or_endpoint_is_refused_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = simulate(capsys, "--agent", "openai", "--out", str(tmp_path / "b"))
    assert code == 2 and "no API key" in err
    assert not (tmp_path / "b").exists()
