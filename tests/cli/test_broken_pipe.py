"""`cutin … | head -1`: the reader of cutin's output goes away before cutin writes.

A Unix tool stops quietly then; Python's default is a BrokenPipeError traceback and an
"Exception ignored" line at exit. The pipe's read end is closed before the child starts,
so its first write fails for certain (no race with a fast child).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tui_replay.logs import write_demo_log


def _run_into_closed_pipe(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read: the child's first write gets EPIPE
    try:
        return subprocess.run(
            [sys.executable, "-m", "cutin_tui", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", ["help", "audit", "check"])
def test_a_closed_pipe_is_a_quiet_stop_not_a_traceback(
    command: str, child_env: dict[str, str], tmp_path: Path
) -> None:
    log = write_demo_log(tmp_path)
    expect = tmp_path / "expect.toml"
    expect.write_text('yield_rate = ">= 0.9"\n', encoding="utf-8")
    args = {
        "help": ["--help"],
        "audit": ["audit", str(log)],
        "check": ["check", str(log.parent), "--expect", str(expect)],
    }[command]
    proc = _run_into_closed_pipe(args, child_env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Exception ignored" not in proc.stderr, proc.stderr
    assert "BrokenPipeError" not in proc.stderr, proc.stderr
    if command == "check":
        # Never 0: a gate whose verdict nobody read has not passed.
        assert proc.returncode == 141, (proc.returncode, proc.stderr)
