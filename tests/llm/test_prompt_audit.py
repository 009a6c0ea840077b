"""`cutin positions extract` + `cutin prompt-audit` end to end against the loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutin_tui.cli import main
from prompts.disfluency import directive
from replay.prompted.positions_io import read_positions
from replay.prompted.prompt_audit import condition_messages
from tests.llm.calls import AIRLINE, write_call
from tests.support.openai_server import Error, OpenAIServer, RecordedRequest, Reply, Response

# What the fake model says under each condition (identified by its directive's words).
SAYS = {
    "Frequently": "Um, I- I think, uh, the direct one.",
    "Regularly": "Um, the direct one, please.",
    "MINIMAL VERBOSITY": "The direct one.",
    "Speak naturally": "Uh, the direct one, you know.",
}


def fake_model(request: RecordedRequest) -> Response:
    system = request.messages[0]["content"]
    for marker, text in SAYS.items():
        if marker in system:
            return Reply(text, prompt_tokens=50, completion_tokens=8)
    return Reply("The direct one, please.", prompt_tokens=40, completion_tokens=5)


@pytest.fixture
def positions_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    calls = tmp_path / "calls"
    calls.mkdir()
    write_call(calls / "a.jsonl", AIRLINE)
    write_call(calls / "b.jsonl", AIRLINE)
    out = tmp_path / "positions.jsonl"
    assert (
        main(["positions", "extract", str(calls), "-o", str(out), "--per-conversation", "2"]) == 0
    )
    assert "4 positions from 2 calls" in capsys.readouterr().out
    return out


def audit(server: OpenAIServer, positions: Path, cache: Path, *extra: str) -> int:
    argv = ["prompt-audit", str(positions), "--model", "m1", "--base-url", server.base_url]
    return main([*argv, "--cache", str(cache), "--resamples", "50", "--json", *extra])


def test_every_condition_is_asked_with_its_directive(
    openai_server: OpenAIServer,
    positions_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    openai_server.responder = fake_model
    assert audit(openai_server, positions_file, tmp_path / "cache") == 0
    report = json.loads(capsys.readouterr().out)
    positions = read_positions(positions_file)
    conditions = ["none", "occasionally", "roughly-half", "most-sentences", "tau-voice", "ablated"]
    # every position under every condition, each with exactly the messages it should get
    sent = sorted(json.dumps(r.messages) for r in openai_server.chat_requests())
    expected = sorted(json.dumps(condition_messages(p, c)) for p in positions for c in conditions)
    assert sent == expected
    for r in openai_server.chat_requests():
        assert r.body["model"] == "m1"
    assert report["paired"] == 4 and report["dropped"] == [] and report["conversations"] == 2
    labels = [r["condition"] for r in report["disfluency"]]
    assert labels[0] == {"policy": "recorded"}
    assert labels[1:7] == [{"policy": f"prompt: {c}", "model": "m1"} for c in conditions]
    assert labels[7:] == [{"alpha": a, "policy": "injection"} for a in (0.25, 0.5, 0.75, 1.0)]
    assert {r["turns"] for r in report["disfluency"]} == {4}  # the same paired positions
    rows = {json.dumps(r["condition"]): r for r in report["disfluency"]}
    most = rows[json.dumps({"policy": "prompt: most-sentences", "model": "m1"})]
    assert most["fillers"] == 4 * 2 and most["repetitions"] == 4  # "Um, I- I think, uh, ..."
    assert rows[json.dumps({"policy": "prompt: none", "model": "m1"})]["fillers"] == 0
    assert report["generated"] == 24 and report["cached"] == 0


def test_a_rerun_comes_from_the_cache_and_new_conditions_only_add(
    openai_server: OpenAIServer,
    positions_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    openai_server.responder = fake_model
    cache = tmp_path / "cache"
    assert audit(openai_server, positions_file, cache, "--conditions", "none,occasionally") == 0
    assert len(openai_server.chat_requests()) == 8
    capsys.readouterr()
    assert (
        audit(openai_server, positions_file, cache, "--conditions", "none,occasionally,ablated")
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert len(openai_server.chat_requests()) == 12  # only the 4 ablated replies were new
    assert report["cached"] == 8 and report["generated"] == 4


def test_a_position_failing_under_one_condition_is_dropped_from_all(
    openai_server: OpenAIServer,
    positions_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = read_positions(positions_file)[1]
    roughly_half = directive("roughly-half")

    def respond(request: RecordedRequest) -> Response:
        if (
            request.messages[-1]["content"] == target.history[-1].content
            and roughly_half in request.messages[0]["content"]
        ):
            return Reply("")  # a content filter's empty candidate
        if (
            request.messages[-1]["content"] == target.history[-1].content
            and "MINIMAL" in request.messages[0]["content"]
        ):
            return Error(400, message="rejected")
        return fake_model(request)

    openai_server.responder = respond
    assert audit(openai_server, positions_file, tmp_path / "cache") == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["dropped"] == [target.id] and report["paired"] == 3
    assert report["failures"] == {"roughly-half": 1, "tau-voice": 1}
    assert {r["turns"] for r in report["disfluency"]} == {3}
    assert "HTTP 400" in captured.err


def test_table_output_says_how_many_were_dropped(
    openai_server: OpenAIServer,
    positions_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    openai_server.responder = fake_model
    argv = [
        "prompt-audit",
        str(positions_file),
        "--model",
        "m1",
        "--base-url",
        openai_server.base_url,
    ]
    assert main([*argv, "--cache", str(tmp_path / "c"), "--resamples", "50", "--alpha", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "prompt: most-sentences" in out and "α 0.5 · injection" in out
    assert "4 paired positions from 2 conversations" in out and "0 of 4 dropped" in out


def test_bad_condition_is_a_usage_error(
    positions_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["prompt-audit", str(positions_file), "--conditions", "none,loud"])
    assert info.value.code == 2 and "unknown condition 'loud'" in capsys.readouterr().err
