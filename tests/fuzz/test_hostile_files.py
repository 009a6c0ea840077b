"""Hostile and malformed files through `cutin report`, `audit`, `judge` and
`overlaps --check` (the generator is tests/fuzz/hostile.py; run 10,000 cases with
``.venv/bin/python -m tests.fuzz.hostile --cases 10000``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import TAU2_FIXTURES
from tests.fuzz import hostile
from tests.support.cli import run_cutin

FAST_CASES = 250
SLOW_CASES = 2500


def _assert_clean(cases: int, seed: int, tmp_path: Path) -> None:
    counts, bad, slowest = hostile.run(cases, seed, workdir=tmp_path)
    report = "\n\n".join(hostile.describe(o) for o in bad[:5])
    assert not bad, f"{len(bad)} of {cases} cases failed ({hostile._summary(counts)}):\n{report}"
    assert slowest < hostile.TIME_LIMIT_S
    # The generator must actually reach both outcomes, or it tests nothing.
    assert counts["clean-error"] > cases // 10
    assert counts["loaded"] + counts["loaded-with-warning"] > cases // 10


def test_hostile_files_give_one_clear_error_or_a_clean_result(tmp_path: Path) -> None:
    _assert_clean(FAST_CASES, seed=20261203, tmp_path=tmp_path)


@pytest.mark.slow
def test_hostile_files_big_run(tmp_path: Path) -> None:
    _assert_clean(SLOW_CASES, seed=7, tmp_path=tmp_path)


def test_tau2_seeds_come_from_the_fixtures_in_the_repository(tmp_path: Path) -> None:
    assert hostile.TAU2_DIR == TAU2_FIXTURES
    kinds = {s.kind for s in hostile._tau2_seeds(tmp_path)}
    assert kinds == {"tau2-file", "tau2-dir", "tau2-sidecar"}


def _child_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CUTIN_SESSIONS_DIR": str(tmp_path / "s")}


@pytest.mark.parametrize(
    "content",
    [
        b'{"info": {}, "simulations": [' * 3000,
        b'{"info": {}, "simulations": [{"id": 1, "task_id": 2, "messages": [], "duration": '
        + b"1" * 5000
        + b"}]}",
        b'{"info": {}, "simulations": [{"id": "a", "task_id": "t", "messages": '
        b'[{"role": "user", "content": "hi", "tool_calls": true}]}]}',
    ],
    ids=["deep", "5000-digits", "tool_calls-true"],
)
def test_the_real_program_prints_one_line_and_exits_2_or_warns(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(content)
    done = run_cutin("report", str(path), env=_child_env(tmp_path), timeout=60)
    assert "Traceback" not in done.stderr
    if done.returncode == 2:
        assert len(done.stderr.splitlines()) == 1 and str(path) in done.stderr
    else:
        assert done.returncode == 0
        assert "1 of 1 bad record(s)" in done.stderr  # the message, not silence


def test_the_real_program_refuses_a_fifo_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "call.jsonl"
    os.mkfifo(fifo)
    done = run_cutin("audit", str(fifo), env=_child_env(tmp_path), timeout=60)
    assert done.returncode == 2
    assert "FIFO" in done.stderr and "Traceback" not in done.stderr
