"""Resuming a batch: finished calls are skipped, anything else is run again, and a
killed or interrupted run never leaves a half log under a final name."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessions.log import read_session

from .helpers import is_complete, simulate, simulate_json

ARGV = ["--scenario", "retail-order-change", "--scenario", "clinic-triage", "--beta", "0,1"]


def _names(out: Path, pattern: str = "*") -> set[str]:
    return {p.name for p in out.glob(pattern)}


def test_partial_logs_are_redone_finished_ones_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    first = simulate_json(capsys, *ARGV, "--out", str(out))
    assert first["ran"] == 4
    files = sorted(out.glob("*.jsonl"))
    no_end, torn, kept, gone = files
    # No end event: the last line dropped, as if the process died before the hang-up.
    lines = no_end.read_text(encoding="utf-8").splitlines(keepends=True)
    assert '"type":"end"' in lines[-1]
    no_end.write_text("".join(lines[:-1]), encoding="utf-8")
    # Torn: cut in the middle of its last line.
    data = torn.read_bytes()
    torn.write_bytes(data[: len(data) - 20])
    kept_bytes = kept.read_bytes()
    gone.unlink()
    (out / (gone.name + ".part")).write_text("{half a line", encoding="utf-8")
    old_ids = {p.name: read_session(p).header.session_id for p in (no_end, torn)}

    second = simulate_json(capsys, *ARGV, "--out", str(out))
    assert (second["ran"], second["skipped"], second["failed"]) == (3, 1, 0)
    assert kept.read_bytes() == kept_bytes, "a finished call must not be rerun"
    for p in (no_end, torn, gone):
        assert is_complete(p)
    for name, old in old_ids.items():
        assert read_session(out / name).header.session_id != old
    assert _names(out) == {p.name for p in files}, "no .part files left behind"

    third = simulate_json(capsys, *ARGV, "--out", str(out))
    assert (third["ran"], third["skipped"]) == (0, 4)


def test_more_runs_later_adds_only_the_new_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    simulate_json(capsys, *ARGV, "--runs", "1", "--out", str(out))
    before = {p.name: p.read_bytes() for p in out.glob("*.jsonl")}
    summary = simulate_json(capsys, *ARGV, "--runs", "2", "--out", str(out))
    assert (summary["ran"], summary["skipped"]) == (4, 4)
    assert all((out / name).read_bytes() == data for name, data in before.items())
    assert len(_names(out, "*__run02.jsonl")) == 4


def test_a_folder_from_other_settings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    simulate_json(capsys, *ARGV, "--out", str(out))
    before = {p.name: p.read_bytes() for p in out.glob("*.jsonl")}
    code, _, err = simulate(capsys, *ARGV, "--seed", "5", "--out", str(out))
    assert code == 2
    assert "was made with other settings (seed:" in err and "another --out" in err
    assert {p.name: p.read_bytes() for p in out.glob("*.jsonl")} == before


def _start(out: Path, env: dict[str, str], runs: int) -> subprocess.Popen[bytes]:
    argv = [*ARGV, "--runs", str(runs), "--json", "--out", str(out)]
    return subprocess.Popen(
        [sys.executable, "-m", "cutin_tui", "simulate", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _wait_for_logs(out: Path, proc: subprocess.Popen[bytes], n: int) -> None:
    deadline = time.monotonic() + 30
    while len(_names(out, "*.jsonl")) < n:
        assert proc.poll() is None, "the batch ended before it could be stopped"
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_killed_batch_resumes_where_it_stopped(
    tmp_path: Path, child_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    runs = 15  # 60 calls: a few seconds of work, stopped after the first few
    proc = _start(out, child_env, runs)
    _wait_for_logs(out, proc, 3)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    finished = {p.name: p.read_bytes() for p in out.glob("*.jsonl")}
    assert 3 <= len(finished) < 4 * runs
    # Whatever the kill cut short has a temporary name; every final name is a whole call.
    assert all(is_complete(out / name) for name in finished)

    summary = simulate_json(capsys, *ARGV, "--runs", str(runs), "--out", str(out))
    assert summary["skipped"] == len(finished)
    assert summary["ran"] == 4 * runs - len(finished)
    assert all((out / name).read_bytes() == data for name, data in finished.items())
    assert len(_names(out)) == 4 * runs and _names(out, "*.part") == set()


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    out = tmp_path / "b"
    proc = _start(out, child_env, 40)
    _wait_for_logs(out, proc, 3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    err = stderr.decode()
    assert "not run (interrupted; rerun the same command to resume)" in err
    assert _names(out, "*.part") == set()
    assert all(is_complete(p) for p in out.glob("*.jsonl"))
    assert b'"skipped": 0' in stdout
