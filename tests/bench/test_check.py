"""bench/run.py --check on fake bench modules in a temp dir (the real benchmarks never run
here): a budget missed once is measured again, and only a second miss fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import run

# A fake module: each run takes the next value from values.json (its state lives in a
# file because run.py loads the module afresh for the re-run).
FAKE = """
import json
from pathlib import Path

STATE = Path(__file__).with_name("values.json")


def rows():
    values = json.loads(STATE.read_text())
    value = values.pop(0)
    STATE.write_text(json.dumps(values))
    return [
        {
            "budget": "fake decision",
            "target": "<= 50 us p99",
            "measured": f"p99 {value} us",
            "target_value": 50,
            "measured_value": value,
            "unit": "us",
            "lower_is_better": True,
        },
        {"budget": "fake info", "target": "", "measured": "12 things"},
    ]
"""


def fake_bench(folder: Path, values: list[float]) -> Path:
    (folder / "bench_fake.py").write_text(FAKE, encoding="utf-8")
    (folder / "values.json").write_text(json.dumps(values), encoding="utf-8")
    return folder


def remaining(folder: Path) -> list[float]:
    values: list[float] = json.loads((folder / "values.json").read_text())
    return values


def test_a_budget_missed_once_then_held_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = fake_bench(tmp_path, [74.0, 41.0, 99.0])
    assert run.main(["--check", "--json", "--dir", str(folder)]) == 0
    assert remaining(folder) == [99.0]  # measured exactly twice
    out, err = capsys.readouterr()
    (row, info) = json.loads(out)
    assert row["measured_value"] == 74.0
    assert row["remeasured_value"] == 41.0
    assert "remeasured_value" not in info and "target_value" not in info
    assert "all 1 budgets hold" in err


def test_a_budget_missed_twice_fails_and_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = fake_bench(tmp_path, [74.0, 71.5])
    assert run.main(["--check", "--dir", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "1 of 1 budgets missed twice" in err
    assert "fake decision (bench_fake): target ≤ 50 us; measured 74 us, then 71.5 us" in err


def test_a_budget_that_holds_is_measured_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = fake_bench(tmp_path, [50.0, 99.0])
    assert run.main(["--check", "--dir", str(folder)]) == 0
    assert remaining(folder) == [99.0]
    assert "measuring again" not in capsys.readouterr().err


def test_without_check_a_miss_does_not_fail(tmp_path: Path) -> None:
    folder = fake_bench(tmp_path, [74.0])
    assert run.main(["--json", "--dir", str(folder)]) == 0
    assert remaining(folder) == []


def test_higher_is_better_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = FAKE.replace('"lower_is_better": True', '"lower_is_better": False')
    (tmp_path / "bench_fake.py").write_text(source, encoding="utf-8")
    (tmp_path / "values.json").write_text("[40, 45]", encoding="utf-8")
    assert run.main(["--check", "--dir", str(tmp_path)]) == 1
    assert "target ≥ 50 us; measured 40 us, then 45 us" in capsys.readouterr().err


def test_a_broken_module_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = fake_bench(tmp_path, [10.0])
    (folder / "bench_broken.py").write_text(
        "def rows():\n    raise RuntimeError('no device')\n", encoding="utf-8"
    )
    assert run.main(["--check", "--json", "--dir", str(folder)]) == 1
    out, err = capsys.readouterr()
    broken = next(r for r in json.loads(out) if r["module"] == "bench_broken")
    assert broken["measured"] == "error"
    assert "RuntimeError: no device" in broken["note"]
    assert "a module failed" in err


def test_a_budget_the_rerun_cannot_measure_stays_missed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = fake_bench(tmp_path, [74.0])  # the re-run raises IndexError: no value left
    assert run.main(["--check", "--dir", str(folder)]) == 1
    assert "measured 74 us, then not measured" in capsys.readouterr().err
