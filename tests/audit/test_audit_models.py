"""`cutin audit` on τ2 results (issue 14): the user simulator's model apart from the
agent's, and speech effects configured versus realized. Real files from
tests/fixtures/tau2; variants written to tmp_path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replay.audit.effects import effects_rows
from replay.audit.load import load_conversations
from replay.audit.report import build_report
from replay.audit.sessions import DEFAULT_BY, DEFAULT_DISFLUENCY_BY
from tests.audit.test_audit_cli import audit_json
from tests.conftest import TAU2_FIXTURES

from ..replay.test_tau2_versions import ENV


@pytest.fixture
def airline() -> Path:
    return TAU2_FIXTURES / "text_airline_results.json"


@pytest.fixture
def voice() -> Path:
    return TAU2_FIXTURES / "voice_full_duplex"


def _relabel(src: Path, dst: Path, *, user: str) -> Path:
    """The same results with another user simulator model named in ``info``."""
    data = json.loads(src.read_text())
    data["info"]["user_info"]["llm"] = user
    dst.write_text(json.dumps(data))
    return dst


def test_disfluency_groups_by_the_user_simulators_model(airline: Path, tmp_path: Path) -> None:
    other = _relabel(airline, tmp_path / "other.json", user="gpt-4.1")
    convs, _ = load_conversations([airline, other])
    report = build_report(convs, DEFAULT_BY, resamples=20, disfluency_by=DEFAULT_DISFLUENCY_BY)
    assert report.disfluency_by == list(DEFAULT_DISFLUENCY_BY)
    rows = {r["condition"]["user_model"]: r for r in report.disfluency}
    assert set(rows) == {"gpt-4o", "gpt-4.1"}  # the agent ("whissle") is the same for both
    assert all("model" not in r["condition"] for r in report.disfluency)
    assert rows["gpt-4o"]["conversations"] == rows["gpt-4.1"]["conversations"] == 50
    # Grouped by the agent's model instead, the two user simulators are mixed up.
    mixed = build_report(convs, ["agent_model"], resamples=20)
    (row,) = mixed.disfluency
    assert row["condition"] == {"agent_model": "whissle"} and row["conversations"] == 100


def test_cli_by_user_model_and_agent_model(
    airline: Path, tmp_path: Path, child_env: dict[str, str]
) -> None:
    other = _relabel(airline, tmp_path / "other.json", user="gpt-4.1")
    data = audit_json(str(airline), str(other), env=child_env)
    assert data["disfluency_by"] == list(DEFAULT_DISFLUENCY_BY)
    assert sorted(r["condition"]["user_model"] for r in data["disfluency"]) == [
        "gpt-4.1",
        "gpt-4o",
    ]
    # An explicit --by applies to every table.
    data = audit_json(str(airline), str(other), "--by", "agent_model", env=child_env)
    assert data["disfluency_by"] == ["agent_model"]
    assert [r["condition"] for r in data["disfluency"]] == [{"agent_model": "whissle"}]
    data = audit_json(str(airline), str(other), "--by", "user_model", env=child_env)
    assert len(data["disfluency"]) == 2


def test_effects_realized_from_the_ticks(voice: Path) -> None:
    convs, _ = load_conversations([voice])
    rows = {r["effect"]: r for r in effects_rows(convs, ["policy"])}
    assert {k: r["realized"] for k, r in rows.items()} == {
        "burst_noise": 12,
        "muffling": 8,
        "non_directed_speech": 6,
        "vocal_tic": 9,
    }
    # No speech_environment in these files: nothing says what was configured.
    assert all(r["configured_on"] is None and r["trials"] == 3 for r in rows.values())
    minutes = rows["vocal_tic"]["minutes"]
    assert minutes == pytest.approx(sum(c.header["effects"]["minutes"] for c in convs))
    assert rows["vocal_tic"]["realized_per_min"] == pytest.approx(9 / minutes)


def test_effects_configured_beside_realized(
    voice: Path, tmp_path: Path, child_env: dict[str, str]
) -> None:
    copy = tmp_path / "voice"
    shutil.copytree(voice, copy)
    files = sorted((copy / "simulations").glob("*.json"))
    for k, f in enumerate(files):
        sim = json.loads(f.read_text())
        env = json.loads(json.dumps(ENV))
        env["source_effects_config"]["enable_burst_noise"] = k != 0  # off in the first
        sim["speech_environment"] = env
        f.write_text(json.dumps(sim))
    data = audit_json(str(copy), env=child_env)
    rows = {r["effect"]: r for r in data["effects"]}
    burst = rows["burst_noise"]
    assert (burst["trials"], burst["configured_on"], burst["configured_per_min"]) == (3, 2, 2.0)
    first = json.loads(files[0].read_text())["duration"]
    total = sum(json.loads(f.read_text())["duration"] for f in files)
    assert burst["minutes"] == pytest.approx((total - first) / 60)
    # Speech inserts: vocal tics on, non-directed phrases off, in every trial.
    assert rows["vocal_tic"]["configured_on"] == 3
    assert rows["non_directed_speech"]["configured_on"] == 0
    assert rows["non_directed_speech"]["realized"] == 6  # realized although configured off
    assert rows["background_noise"]["configured_on"] == 3
    assert rows["background_noise"]["realized"] == 0  # the ticks cannot show it
