"""`cutin call` / `cutin simulate` with a black-box agent: one clear line and exit 2
for what cannot work, before anything is dialled or drawn."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.cli import run_cutin


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["call", "--listen"], "--listen needs --agent"),
        (["call", "--agent", "twilio:http://x/"], "twilio:ws://HOST:PORT/PATH"),
        (["call", "--agent", "twilio:ws://h:99999/"], "port"),
        (["call", "--agent", "phone"], "unknown agent"),
        (["call", "--agent", "realtime", "--push-to-talk"], "needs --input mic"),
        (["simulate", "--agent", "realtime", "--jobs", "999"], "paces at most"),
    ],
)
def test_impossible_line_calls_are_one_line(args: list[str], says: str, tmp_path: Path) -> None:
    result = run_cutin(*args, "--sessions-dir", str(tmp_path), env=dict(os.environ))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_nothing_listening_is_one_line(tmp_path: Path) -> None:
    result = run_cutin(
        "call", "--agent", "twilio:ws://127.0.0.1:9/", "--sessions-dir", str(tmp_path),
        env={**os.environ, "CUTIN_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "cutin: twilio: cannot connect to ws://127.0.0.1:9/ (connection refused: nothing "
        "listens there)"
    )
    assert not list(tmp_path.glob("*.jsonl")), "no log is left for a call that never started"
