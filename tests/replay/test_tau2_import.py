"""Importing real τ2-bench result files (tests/fixtures/tau2)."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

from replay.errors import LoadError
from replay.load import load_batch, load_paths
from tests.conftest import TAU2_FIXTURES


@pytest.fixture(scope="module")
def tau2() -> Path:
    return TAU2_FIXTURES


def test_monolithic_results_50_trials_22_failed(tau2: Path) -> None:
    trials = load_paths([tau2 / "text_airline_results.json"])
    assert len(trials) == 50
    assert sum(t.failed for t in trials) == 22
    assert sum(t.reward == 1.0 for t in trials) == 28
    assert all(t.kind == "tau2" and t.mode == "half_duplex" for t in trials)
    assert sum(len(t.turns) for t in trials) > 500


def test_half_duplex_messages_become_turns_with_tool_traffic_inline(tau2: Path) -> None:
    trial = load_paths([tau2 / "text_airline_results.json"])[0]
    assert trial.id == "c4726c14-f132-4944-a51a-465518856f47" and trial.task_id == "0"
    speakers = [t.speaker for t in trial.turns]
    assert all(a != b for a, b in itertools.pairwise(speakers))  # sides alternate
    first, second = trial.turns[0], trial.turns[1]
    assert first.speaker == "agent" and first.text == "Hi! How can I help you today?"
    assert first.start == pytest.approx(0.041115)
    assert second.speaker == "user" and "EHGLP3" in second.text
    tools = trial.turns[4]
    kinds = [e.kind for e in tools.events]
    assert kinds[:2] == ["tool_call", "tool_result"]
    assert tools.events[0].label == "get_reservation_details(reservation_id=EHGLP3)"
    assert tools.meta["messages"][0] == 4
    assert trial.meta["domain"] == "airline"
    assert "cancellation" in trial.meta["task_purpose"]


def test_reward_info_becomes_tau2_verdicts(tau2: Path) -> None:
    trials = load_paths([tau2 / "text_airline_results.json"])
    first = trials[0]
    labels = {v.name: v.label for v in first.verdicts}
    assert labels == {"reward": "fail", "db": "fail"}
    assert first.verdicts[0].judge == "tau2" and first.verdicts[0].score == 0.0
    second = trials[1]
    by_name = {v.name: v for v in second.verdicts}
    assert by_name["reward"].label == "pass"
    assert by_name["actions"].label == "info"  # ACTION is not in this task's reward basis
    assert "expected actions" in by_name["actions"].rationale


def test_dir_layout_three_full_duplex_tick_trials(tau2: Path) -> None:
    trials = load_paths([tau2 / "voice_full_duplex"])
    assert [t.id[:8] for t in trials] == ["49b22f0c", "7c6a3e3e", "cd9c5ed2"]
    assert [t.meta["ticks"] for t in trials] == [973, 1810, 1340]
    assert all(t.mode == "full_duplex" and t.ticks is not None for t in trials)
    assert all(t.reward is None and not t.failed for t in trials)
    first = trials[0]
    assert first.task_id == "40" and first.meta["tick_s"] == 0.2
    assert first.source == str(tau2 / "voice_full_duplex")
    assert first.meta["file"].endswith("49b22f0c-4a56-41c5-922f-bc2a56e53a23.json")
    speakers = {t.speaker for t in first.turns}
    assert speakers == {"agent", "user"}
    assert any(t.interrupted for t in first.agent_turns())


def test_results_json_path_with_simulations_beside_it_is_the_dir_layout(tau2: Path) -> None:
    via_file = load_paths([tau2 / "voice_full_duplex" / "results.json"])
    assert [t.id for t in via_file] == [t.id for t in load_paths([tau2 / "voice_full_duplex"])]


def test_one_simulation_file_alone(tau2: Path) -> None:
    sim = tau2 / "voice_full_duplex" / "simulations" / "7c6a3e3e-ac3f-406f-aea9-8cacb0a2e680.json"
    (trial,) = load_paths([sim])
    assert trial.id.startswith("7c6a3e3e") and trial.meta["ticks"] == 1810
    assert trial.meta["domain"] == "retail"  # context from ../results.json


def _copy_dir(tau2: Path, dest: Path) -> Path:
    target = dest / "run"
    shutil.copytree(tau2 / "voice_full_duplex", target)
    for p in target.rglob("*"):
        p.chmod(0o644 if p.is_file() else 0o755)
    target.chmod(0o755)
    return target


def test_dir_layout_with_simulation_index_checks_it(tau2: Path, tmp_path: Path) -> None:
    run = _copy_dir(tau2, tmp_path)
    meta = json.loads((run / "results.json").read_text())
    ids = [p.stem for p in sorted((run / "simulations").glob("*.json"))]
    meta["simulation_index"] = [{"id": i, "task_id": "x", "trial": 0} for i in ids]
    (run / "results.json").write_text(json.dumps(meta))
    batch = load_batch([run])
    assert len(batch.trials) == 3 and batch.warnings == []
    meta["simulation_index"].append({"id": "gone", "task_id": "y", "trial": 0})
    (run / "results.json").write_text(json.dumps(meta))
    (run / "simulations" / f"{ids[0]}.json").unlink()
    batch = load_batch([run])
    assert len(batch.trials) == 2
    text = " ".join(batch.warnings)
    assert "gone" in text and ids[0] in text and "simulation_index" in text


def test_review_becomes_tau2_review_verdicts_on_turns(tau2: Path, tmp_path: Path) -> None:
    data = json.loads((tau2 / "text_airline_results.json").read_text())
    sim = data["simulations"][0]
    sim["review"] = {
        "summary": "Agent cancelled without checking the policy.",
        "agent_error": True,
        "user_error": False,
        "has_errors": True,
        "errors": [
            {
                "source": "agent",
                "error_type": "content_error",
                "error_tags": ["policy"],
                "severity": "critical",
                "turn_idx": 2,
                "reasoning": "Asked for the id twice.",
                "correct_behavior": "Ask once.",
            },
            {"source": "user", "error_tags": [], "reasoning": "Odd phrasing."},
        ],
    }
    data["simulations"] = [sim]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data))
    (trial,) = load_paths([path])
    review = [v for v in trial.verdicts if v.judge == "tau2-review"]
    assert review[0].name == "review" and review[0].label == "fail"
    assert review[1].scope == "turn" and review[1].turn == 2 and review[1].label == "fail"
    assert "Ask once." in review[1].rationale
    assert review[2].label == "warn" and review[2].scope == "call"


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        (
            {"info": {}, "tasks": [], "simulations": [{"id": "x"}]},
            "simulation 0 is not a τ2 simulation",
        ),
        ({"info": {}, "tasks": []}, 'without "simulations"'),
        ([1, 2, 3], "not a cutin log or τ2-bench file"),
    ],
)
def test_broken_tau2_files_get_clear_errors(tmp_path: Path, payload: object, match: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(payload))
    with pytest.raises(LoadError, match=match) as info:
        load_paths([path])
    assert str(path) in str(info.value)


def test_truncated_json_names_the_file(tmp_path: Path, tau2: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes((tau2 / "text_airline_results.json").read_bytes()[:5000])
    with pytest.raises(LoadError, match="neither a JSONL session log nor JSON") as info:
        load_paths([path])
    assert str(path) in str(info.value)
