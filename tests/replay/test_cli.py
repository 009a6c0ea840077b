"""`cutin judge` and `cutin report` end to end: real logs, real files, the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cutin_tui.cli import main
from replay.load import load_paths
from tests.conftest import TAU2_FIXTURES
from tests.support.cli import run_cutin
from tests.support.openai_server import OpenAIServer, Reply

from .craft import standard_call


def test_judge_rules_appends_verdicts_without_touching_earlier_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    before = path.read_bytes()
    assert main(["judge", str(path), "--success", "elm street"]) == 0
    after = path.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    new = [json.loads(line) for line in after[len(before) :].decode().splitlines()]
    assert {e["type"] for e in new} == {"verdict"} and {e["judge"] for e in new} == {"rules"}
    yield_line = next(e for e in new if e["name"] == "yield")
    assert yield_line["scope"] == "turn" and yield_line["turn"] == 1
    assert yield_line["speaker"] == "agent"
    out = capsys.readouterr().out
    assert out.startswith("call: ") and "→ " in out and "✗" in out and "elm street" in out
    (trial,) = load_paths([path])
    assert trial.failed and any(v.name == "success: elm street" for v in trial.verdicts)


def test_judge_takes_success_phrases_from_the_logs_scenario(tmp_path: Path) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    assert main(["judge", str(path), "--scenario", "retail-order-change", "--dry-run"]) == 0
    assert path.read_bytes().count(b'"verdict"') == 0  # dry run wrote nothing
    assert main(["judge", str(path), "--scenario", "retail-order-change"]) == 0
    names = {v.name for v in load_paths([path])[0].verdicts}
    assert {"success: confirmation number", "success: new address"} <= names


def test_judge_llm_over_http(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = standard_call(tmp_path / "call.jsonl")
    answer = {"call": {"label": "pass", "rationale": "fine"},
              "turns": [{"turn": 2, "label": "warn", "rationale": "long"}]}  # fmt: skip
    openai_server.enqueue(Reply(json.dumps(answer)))
    code = main(["judge", str(path), "--judge", "llm", "--base-url", openai_server.base_url,
                 "--model", "m1"])  # fmt: skip
    assert code == 0
    (trial,) = load_paths([path])
    llm = [v for v in trial.verdicts if v.judge == "llm"]
    assert [(v.turn, v.label) for v in llm] == [(2, "warn"), (None, "pass")]
    assert openai_server.chat_bodies()[0]["model"] == "m1"


def test_judge_llm_malformed_answer_records_nothing_and_exits_1(
    tmp_path: Path, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    before = path.read_bytes()
    openai_server.enqueue(Reply("{not json"))
    code = main(["judge", str(path), "--judge", "llm", "--base-url", openai_server.base_url])
    assert code == 1 and path.read_bytes() == before
    assert "judge failed, nothing recorded" in capsys.readouterr().err


def test_judge_llm_without_key_or_endpoint_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CUTIN_OPENAI_BASE_URL", raising=False)
    path = standard_call(tmp_path / "call.jsonl")
    assert main(["judge", str(path), "--judge", "llm"]) == 2
    assert "no API key" in capsys.readouterr().err


def test_judge_on_tau2_writes_a_sidecar_that_report_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "airline.json"
    shutil.copyfile(TAU2_FIXTURES / "text_airline_results.json", results)
    original = results.read_bytes()
    first = load_paths([results])[0].id
    assert main(["judge", str(results), "--trial", first]) == 0
    assert results.read_bytes() == original  # τ2's file is never modified
    assert "never modified; verdicts go to the sidecar" in capsys.readouterr().err
    sidecar = tmp_path / "airline.json.cutin-verdicts.jsonl"
    header = json.loads(sidecar.read_text().splitlines()[0])
    assert header["schema"] == "cutin.verdicts/1" and header["source"] == str(results.resolve())
    trial = load_paths([results])[0]
    assert any(v.judge == "rules" for v in trial.verdicts)
    again = load_paths([sidecar])  # opening the sidecar opens its τ2 input
    assert len(again) == 50 and any(v.judge == "rules" for v in again[0].verdicts)
    capsys.readouterr()
    assert main(["report", str(results), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    judges = {v["judge"] for v in report["trials"][0]["verdicts"]}
    assert judges == {"tau2", "rules"}


def test_judge_where_the_sidecar_cannot_go_says_to_use_sidecar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "voice"
    shutil.copytree(TAU2_FIXTURES / "voice_full_duplex", run)
    (tmp_path / "voice.cutin-verdicts.jsonl").mkdir()  # the default place is taken
    assert main(["judge", str(run)]) == 2
    assert "pass --sidecar FILE" in capsys.readouterr().err
    car = tmp_path / "mine.cutin-verdicts.jsonl"
    assert main(["judge", str(run), "--sidecar", str(car)]) == 0
    trials = load_paths([car])
    assert len(trials) == 3 and all(any(v.name == "yield" for v in t.verdicts) for t in trials)


def test_report_md_on_the_airline_results_lists_50_trials_22_failed(
    child_env: dict[str, str],
) -> None:
    proc = run_cutin("report", str(TAU2_FIXTURES / "text_airline_results.json"), "--format", "md",
                 env=child_env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "50 trials · 22 failed · 28 passed" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("| ✗ |", "| ✓ |"))]
    assert len(rows) == 50 and sum(r.startswith("| ✗ |") for r in rows) == 22


def test_report_writes_files_and_infers_format(tmp_path: Path) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    assert main(["report", str(path), "-o", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["trials"] == 1


def test_report_failures_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = standard_call(tmp_path / "a.jsonl")
    standard_call(tmp_path / "b.jsonl")
    assert main(["judge", str(a), "--success", "never said this"]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path), "--failures", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [t["id"] for t in report["trials"]] == ["a"]


def test_report_on_a_file_that_is_nothing_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    assert main(["report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and "expected a cutin session log" in err
