"""`cutin audit` as a user runs it: a child interpreter, real files, stdout and exit codes."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.audit.test_audit_sessions import crafted_events, header
from tests.conftest import TAU2_FIXTURES
from tests.support.cli import run_cutin
from tests.support.logs import write_log

DISFLUENCY_KEYS = {
    "condition",
    "words",
    "fillers_per_1k",
    "repetitions_per_1k",
    "combined_per_1k",
    "combined_ci",
    "initial_share",
    "any_share",
    "vmr",
    "vmr_ci",
}
TURN_TAKING_KEYS = {
    "condition",
    "behavior",
    "opportunities",
    "actions",
    "per_opportunity",
    "agent_turns",
    "per_turn",
}

# Tester-like words without digits or '@', so no boundary is protected.
_PROSE = (
    "hello I would like to ask about my order from last week the package never "
    "arrived and I have been waiting for a refund since Monday could you please check "
    "what happened with the delivery because the tracking page says it was left at "
    "the front door but nothing was there when I got home"
)
_VOCAB = _PROSE.split(" ")


def cutin(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``cutin audit ARGS``."""
    return run_cutin("audit", *args, env=env)


def long_corpus(path: Path, conversations: int = 300, seed: int = 5) -> Path:
    rng = random.Random(seed)
    lines: list[str] = []
    for _ in range(conversations):
        for _ in range(rng.randint(3, 8)):
            lines.append(" ".join(rng.choice(_VOCAB) for _ in range(rng.randint(6, 20))))
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def audit_json(*args: str, env: dict[str, str]) -> dict[str, Any]:
    proc = cutin(*args, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_texts_mode_rates_track_alpha(tmp_path: Path, child_env: dict[str, str]) -> None:
    corpus = long_corpus(tmp_path / "turns.txt")
    data = audit_json("--texts", str(corpus), "--alpha", "0,0.25,0.5,0.75,1", env=child_env)
    assert set(data) == {
        "disfluency",
        "disfluency_by",
        "disfluency_by_source",
        "turn_taking",
        "tests",
        "effects",
        "mixed_calls",
        "notes",
        "min_events",
    }
    rows = {r["condition"]["alpha"]: r for r in data["disfluency"]}
    assert list(rows) == [0.0, 0.25, 0.5, 0.75, 1.0]
    for row in rows.values():
        assert set(row) >= DISFLUENCY_KEYS
        assert row["conversations"] == 300
    assert rows[0.0]["fillers_per_1k"] == 0.0
    for alpha in (0.25, 0.5, 0.75, 1.0):
        # Per original word: a filler with p = α·0.2·0.5, a stem with α·0.2·0.3; rates
        # are per rendered word, which the insertions themselves lengthen.
        p_filler, p_rep = alpha * 0.1, alpha * 0.06
        expected = 1000 * p_filler / (1 + p_filler + p_rep)
        assert rows[alpha]["fillers_per_1k"] == pytest.approx(expected, abs=3.0)
        lo, hi = rows[alpha]["combined_ci"]
        assert lo < rows[alpha]["combined_per_1k"] < hi
    assert rows[0.25]["fillers_per_1k"] == pytest.approx(24.0, abs=3.0)
    fill = [rows[a]["fillers_per_1k"] for a in rows]
    comb = [rows[a]["combined_per_1k"] for a in rows]
    assert fill == sorted(fill) and comb == sorted(comb)
    assert data["turn_taking"] == []
    (trend,) = [t for t in data["tests"] if t["test"] == "kendall_tau_b"]
    assert trend["field"] == "alpha" and trend["tau_b"] > 0.2 and trend["p"] < 1e-10
    paired = [t for t in data["tests"] if t["test"] == "wilcoxon"]
    assert {t["condition"]["alpha"] for t in paired} == {0.25, 0.5, 0.75, 1.0}
    assert all(t["baseline"] == {"alpha": 0.0} and t["mean_diff"] > 0 for t in paired)


def test_texts_mode_prints_tables(tmp_path: Path, child_env: dict[str, str]) -> None:
    corpus = long_corpus(tmp_path / "turns.txt", conversations=20)
    proc = cutin("--texts", str(corpus), "--resamples", "200", env=child_env)
    assert proc.returncode == 0, proc.stderr
    assert "Disfluency" in proc.stdout and "α 0.25" in proc.stdout and "α 1" in proc.stdout
    assert "Kendall" in proc.stdout
    assert "200 bootstrap resamples, seed 0" in proc.stdout


def test_session_logs_folder(tmp_path: Path, child_env: dict[str, str]) -> None:
    folder = tmp_path / "logs"
    write_log(folder / "one.jsonl", crafted_events(), header("one"))
    write_log(folder / "two.jsonl", crafted_events(), header("two", beta=0.0))
    data = audit_json(str(folder), "--by", "beta", "--resamples", "100", env=child_env)
    assert set(data) == {
        "disfluency",
        "disfluency_by",
        "disfluency_by_source",
        "turn_taking",
        "tests",
        "effects",
        "mixed_calls",
        "notes",
        "min_events",
    }
    rows = [r for r in data["turn_taking"] if r["mode"] == "auto"]
    assert [(r["condition"], r["behavior"]) for r in rows] == [
        ({"beta": 0.0}, "interruption"),
        ({"beta": 0.0}, "backchannel"),
        ({"beta": 0.5}, "interruption"),
        ({"beta": 0.5}, "backchannel"),
    ]
    for row in rows:
        assert set(row) >= TURN_TAKING_KEYS
        assert row["behavior"] in ("interruption", "backchannel")
        assert (row["opportunities"], row["actions"], row["agent_turns"]) == (5, 1, 3)
    tables = cutin(str(folder), "--by", "beta,policy", env=child_env)
    assert tables.returncode == 0, tables.stderr
    assert "Turn-taking" in tables.stdout and "β 0.5 · rules" in tables.stdout


def test_tau2_results(child_env: dict[str, str]) -> None:
    data = audit_json(str(TAU2_FIXTURES / "voice_full_duplex"), env=child_env)
    rows = {r["behavior"]: r for r in data["turn_taking"]}
    assert rows["interruption"]["condition"]["policy"] == "tau-voice"
    assert rows["interruption"]["opportunities"] == 270
    assert rows["backchannel"]["actions"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "nothing to audit"),
        (("--alpha", "0.5", "x.jsonl"), "--alpha goes with --texts"),
        (("no/such/path",), "no such file or directory"),
        (("--texts", "no/such.txt"), "cannot read"),
        (("--texts", "t.txt", "logs"), "not both"),
        (("--resamples", "0", "x"), "at least 1"),
        (("--texts", "t.txt", "--alpha", "2"), "alpha must be between 0 and 1"),
    ],
)
def test_usage_errors_are_one_line(
    args: tuple[str, ...], message: str, child_env: dict[str, str]
) -> None:
    proc = cutin(*args, env=child_env)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_file_that_is_not_a_log(tmp_path: Path, child_env: dict[str, str]) -> None:
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"hello": 1}\n', encoding="utf-8")
    proc = cutin(str(bad), env=child_env)
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
