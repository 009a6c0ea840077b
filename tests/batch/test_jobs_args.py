"""`cutin simulate --agent` ranges and repeats, and the --jobs capacity check on a line:
each refusal one line (exit 2) before anything is dialled."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from cutin_tui.cli.simulate_agents import expand
from sessions.batch.pump import PROCESS_CALLS, AgentPool, max_line_jobs
from tests.batch.helpers import simulate


def test_a_port_range_expands_to_one_agent_per_port() -> None:
    assert expand("twilio:ws://h:{8765..8767}/") == [
        "twilio:ws://h:8765/",
        "twilio:ws://h:8766/",
        "twilio:ws://h:8767/",
    ]
    assert expand("twilio:ws://h:8765/") == ["twilio:ws://h:8765/"]
    for bad in ("twilio:ws://h:{9..1}/", "twilio:ws://h:{1..9999}/", "ws://{1..2}:{3..4}/"):
        with pytest.raises(argparse.ArgumentTypeError):
            expand(bad)


def test_several_agents_are_lent_one_call_at_a_time() -> None:
    pool = AgentPool(["a", "b"])
    first, second = pool.take(), pool.take()
    assert {first, second} == {"a", "b"} and not pool.free
    pool.give(first)
    assert pool.free and pool.take() == first
    shared = AgentPool(["only"])  # one agent takes every call at once
    assert [shared.take() for _ in range(5)] == ["only"] * 5 and shared.free


def test_the_budget_allows_more_calls_on_more_cores() -> None:
    assert max_line_jobs(1) >= 1
    assert max_line_jobs(8) > max_line_jobs(2) >= max_line_jobs(1)
    assert max_line_jobs(2) == 12  # what the bench paced on 2 cores, with headroom
    assert max_line_jobs(64) == PROCESS_CALLS  # one interpreter lock, whatever the cores


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--agent", "twilio:ws://127.0.0.1:9/", "--jobs", "999"], "paces at most"),
        (["--agent", "twilio:ws://127.0.0.1:{9..8}/"], "A <= B"),
        (["--agent", "twilio:ws://127.0.0.1:9/", "--agent", "scripted"], "must be a line"),
        (["--agent", "twilio:ws://127.0.0.1:9/"] * 2, "given twice"),
    ],
)
def test_refusals_are_one_line(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code, _, err = simulate(capsys, *argv, "--out", str(tmp_path / "b"))
    except SystemExit as exc:  # argparse's own refusal
        code, err = int(str(exc.code)), capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert says in lines[-1] and "Traceback" not in err
    assert not (tmp_path / "b").exists() or not list((tmp_path / "b").iterdir())


def test_force_runs_beyond_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--force skips the capacity check (the nothing-listening agent then fails each call
    with its one-line reason, filed as failed)."""
    code, _, err = simulate(
        capsys, "--agent", "twilio:ws://127.0.0.1:9/", "--jobs", "999", "--force",
        "--max-seconds", "2", "--out", str(tmp_path / "b"),
    )  # fmt: skip
    assert code == 1, err
    assert "paces at most" not in err and "connection refused" in err
