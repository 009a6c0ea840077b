"""`cutin simulate … --check`: the check at the end of a batch, on the virtual clock
(the scripted agent: no black-box measure, so a measure is NOT ENOUGH DATA, never a pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.batch.helpers import simulate


def _expect(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expect.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_simulate_check_exits_with_the_checks_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = _expect(tmp_path, 'agent_says = ["order"]\njudge = "rules"\n')
    junit = tmp_path / "report.xml"
    argv = ("--scenario", "retail-order-change", "--out", str(tmp_path / "run"), "--check")
    code, out, err = simulate(capsys, *argv, "--expect", str(words), "--junit", str(junit))
    assert code == 0, err
    assert "cutin check: PASS" in out and junit.is_file()
    measures = _expect(tmp_path, 'agent_says = ["order"]\nyield_rate = ">= 0.9"\n')
    code, out, _ = simulate(capsys, *argv, "--expect", str(measures))  # resumes: no new call
    assert code == 1
    assert "NOT ENOUGH DATA" in out and "no call in the run is to a black-box agent" in out


def test_a_bad_expectations_file_stops_simulate_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _expect(tmp_path, 'yield_rte = ">= 0.9"\n')
    out_dir = tmp_path / "run"
    code, _, err = simulate(capsys, "--scenario", "retail-order-change", "--out", str(out_dir),
                            "--check", "--expect", str(bad))  # fmt: skip
    assert code == 2 and "unknown expect key 'yield_rte'" in err and err.count("\n") == 1
    assert not out_dir.exists()
    code, _, err = simulate(capsys, "--out", str(out_dir), "--expect", str(bad))
    assert code == 2 and "--expect goes with --check" in err
