"""What `cutin simulate` says: counts with their plurals, a failure's reason once, no
empty folder left by a batch that wrote nothing, a lagged call's no_responses flagged
with the remedy that applies (--jobs, or under --ray its own flags), an ETA reckoned from
the calls' own times, and --help that never splits a flag across lines."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from cutin_tui.cli import progress as progress_module
from cutin_tui.cli.progress import BatchProgress
from cutin_tui.cli.simulate_report import report
from sessions.batch import board as board_module
from sessions.batch.board import BatchBoard
from sessions.batch.filing import CallOutcome, CallStatus
from sessions.batch.plan import Condition, plan_batch
from sessions.batch.tally import tally
from sessions.log.models import EndEvent, FrameLag, LineEvent
from tests.batch.helpers import simulate


def test_one_call_is_one_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = simulate(
        capsys, "--scenario", "retail-order-change", "--out", str(tmp_path / "b")
    )
    assert code == 0, err
    assert "cutin simulate: 1 call run, 0 skipped, 0 failed -> " in err, err
    assert "calls run" not in err


def test_a_batch_that_wrote_nothing_leaves_no_folder_and_each_reason_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing listens on port 9: both calls fail before a log exists."""
    out = tmp_path / "b"
    code, _, err = simulate(
        capsys, "--agent", "twilio:ws://127.0.0.1:9/", "--runs", "2", "--max-seconds", "2",
        "--out", str(out),
    )  # fmt: skip
    assert code == 1, err
    assert not out.exists(), "an empty batch folder this run made is removed"
    # Each call's reason is on its progress line and not again in the report.
    for run in ("run01", "run02"):
        assert len(re.findall(rf"{run}\b.*connection refused", err)) == 1, err
    last = err.strip().splitlines()[-1]
    assert (
        last == "cutin simulate: 0 calls run, 0 skipped, 2 failed (nothing written: no folder kept)"
    )


def _lagged_outcome(no_responses: int) -> CallOutcome:
    [spec] = plan_batch(["line-check"], [Condition(0.5, 1.0, 0.5)], runs=1)
    events = [LineEvent(t=float(i), kind="no_response") for i in range(no_responses)]
    lag = FrameLag(p50_s=0.01, p99_s=0.09, max_s=0.3, frames=300, late_frames=20)
    counted = tally([*events, EndEvent(t=10.0, reason="hangup", frame_lag=lag)])
    return CallOutcome(spec, CallStatus.RAN, Path(spec.file_name), counted)


@pytest.mark.parametrize(
    ("on_ray", "remedy", "not_said"),
    [(False, "Fewer --jobs", "--ray-cpus-per-call"), (True, "--ray-cpus-per-call", "--jobs")],
)
def test_a_lagged_calls_no_responses_are_flagged_with_the_remedy_that_applies(
    on_ray: bool, remedy: str, not_said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = _lagged_outcome(no_responses=2)
    report([outcome], [outcome.spec], Path("b"), as_json=True, interrupted=False, on_ray=on_ray)
    out, err = capsys.readouterr()
    assert '"lagged_no_responses": 2' in out
    assert remedy in err and not_said not in err
    assert "1 call lagged" in err and "no_response in it may be this machine" in err
    assert f"{outcome.spec.stem}: p99 90 ms, max 300 ms, 2 no_responses set aside" in err
    assert "1 call run," in err


def test_the_eta_goes_by_the_calls_times_and_how_many_run_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Six 10 s calls, two at once (as on Ray: only their ages are known here). At 10 s
    one has ended and the next started: 20 s are left by construction (b and c end at
    10 and 20, d at 20, e and f at 30)."""
    now = [0.0]
    clock = SimpleNamespace(monotonic=lambda: now[0])
    monkeypatch.setattr(board_module, "time", clock)
    monkeypatch.setattr(progress_module, "time", clock)
    specs = plan_batch(["line-check"], [Condition(0.5, 1.0, 0.5)], runs=6)
    board = BatchBoard()
    progress = BatchProgress(len(specs), board, jobs=1)
    board.call_started(specs[0].stem, None)
    board.call_started(specs[1].stem, None)
    assert progress.eta() is None  # nothing has ended yet
    now[0] = 10.0
    board.call_ended(specs[0].stem)
    progress.advance(CallOutcome(specs[0], CallStatus.RAN, Path("x")))
    board.call_started(specs[2].stem, None)
    assert "2 running" in progress.headline()
    eta = progress.eta()
    assert eta is not None and abs(eta - 20.0) < 1e-9, eta
    # The batch's own pace (elapsed per finished call) would say 50 s.


@pytest.mark.parametrize("command", ["simulate", "audit"])
def test_help_never_splits_a_flag(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse's wrapping broke at hyphens (``--keep-`` / ``lagged``)."""
    from cutin_tui.cli import main

    for columns in (50, 64, 80):
        monkeypatch.setenv("COLUMNS", str(columns))
        capsys.readouterr()
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        assert "--max-seconds" in text or "--keep-lagged" in text
        split = [line for line in text.splitlines() if re.search(r"\w-$", line)]
        assert not split, f"COLUMNS={columns}: {split}"


def test_parallel_virtual_calls_show_as_running(tmp_path: Path) -> None:
    """--jobs 2 on the virtual clock (worker processes): the board shows two calls running,
    then the next as each ends (it showed none)."""
    from sessions.batch.plan import BatchPlan
    from sessions.batch.runner.run import run_batch
    from sessions.plan import CallPlan
    from sessions.scenarios import load_scenario

    scenario = load_scenario("clinic-triage")
    specs = plan_batch([scenario.name], [Condition(0.5, 0.0, 0.5)], runs=3)
    board = BatchBoard()
    seen = []
    plan = BatchPlan(specs, {scenario.name: scenario}, CallPlan(user="scripted"), tmp_path, jobs=2)
    for outcome in run_batch(plan, board=board):
        assert outcome.status is CallStatus.RAN, outcome.message
        seen.append(sorted(s.stem for s in board.running()))
    assert board.peak == 2 and len(board.took()) == 3
    # After the first ends, the other and the third run; then one; then none.
    assert [len(stems) for stems in seen] == [2, 1, 0] and specs[2].stem in seen[0]
