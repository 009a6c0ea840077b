"""`cutin audit` stays a table at 100 and 120 columns (issue 30): a table too wide is
wrapped at spaces or split into a second table led by the same condition column,
never the vertical ``name: value`` list; and a batch whose every call lagged still
shows the agent's yields and false yields, with the note."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.check.crafted_runs import write_run


def audit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int, *args: str
) -> str:
    """``cutin audit ARGS`` in this process, piped, ``COLUMNS`` = ``width``."""
    from cutin_tui.cli import main

    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    assert main(["audit", "--resamples", "100", *args]) == 0
    return capsys.readouterr().out


STACKED = re.compile(r"^  [^\s:][^:]{0,40}: \S")
"""A line of the stacked form: two spaces, a column's name, a colon, its value."""


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cutin_tui.cli import main

    out = tmp_path_factory.mktemp("batch") / "b"
    code = main(["simulate", "--scenario", "airline-rebooking", "--beta", "0,1",
                 "--gamma", "0,1", "--out", str(out)])  # fmt: skip
    assert code == 0
    return out


@pytest.mark.parametrize("width", [100, 120])
def test_the_audit_is_tables_at_100_and_120_columns(
    width: int, batch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = audit(capsys, monkeypatch, width, str(batch))
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= width
    stacked = [line for line in lines if STACKED.match(line)]
    assert not stacked, stacked[:5]
    rules = [line for line in lines if set(line.strip()) == {"─"}]
    assert len(rules) >= 4, "every table has its header rule"
    # Every column is still there: the split tables hold the wide table's headers.
    for header in ("fill/1k", "95% CI", "initial share", "VMR", "opportunities",
                   "lands at (opp. #: n)", "opening ³"):  # fmt: skip
        assert header in out, header
    assert "(cont.)" in out


def test_a_narrow_console_still_stacks(
    batch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = audit(capsys, monkeypatch, 50, str(batch))
    assert any(STACKED.match(x) for x in out.splitlines())


@pytest.mark.parametrize("width", [100, 120])
def test_an_all_lagged_batch_still_shows_its_yields(
    width: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 3 calls, each 2 yields in 3 interruptions: 6/9 whatever the lag did to the timings.
    run = write_run(tmp_path / "run", [[0.3, None, 0.5]] * 3, lagged=[0, 1, 2])
    printed = audit(capsys, monkeypatch, width, str(run))
    out = " ".join(printed.split())
    assert "Agent under test" in out
    assert "6/9 · 66.7%" in out, printed
    assert "3 calls lagged" in out and "yields and false yields kept" in out
    assert "mean 0.40" not in out  # the yield latency is not trusted
    assert not [x for x in printed.splitlines() if STACKED.match(x)]
    kept = audit(capsys, monkeypatch, width, str(run), "--keep-lagged")
    assert "mean 0.40" in " ".join(kept.split())
