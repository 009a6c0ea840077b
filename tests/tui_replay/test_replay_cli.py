"""`cutin replay` as a real program: its help, its usage errors, and a run in tmux."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.cli import run_cutin


def test_help_names_the_keys_and_the_sessions_folder(child_env: dict[str, str]) -> None:
    proc = run_cutin("replay", "--help", env=child_env)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    for words in ("--sessions-dir", "CUTIN_SESSIONS_DIR", "n/N failures", "c/C cuts"):
        assert words in text


def test_a_missing_path_is_a_one_line_error(child_env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    proc = run_cutin("replay", str(missing), env=child_env)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"cutin: {missing}: no such file or directory"
    assert proc.stdout == ""


@pytest.mark.e2e
def test_replay_in_a_real_terminal(
    child_env: dict[str, str], demo_log: Path, tmp_path: Path
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    socket = str(tmp_path / "tmux.sock")
    name = f"replay-{uuid.uuid4().hex[:6]}"
    command = f"{shlex.quote(sys.executable)} -m cutin_tui replay {shlex.quote(str(demo_log))}"
    tmux = ["tmux", "-S", socket]
    env = {**child_env, "TERM": "xterm-256color"}
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command],
        check=True,
        env=env,
    )

    def screen() -> str:
        out = subprocess.run(
            [*tmux, "capture-pane", "-p", "-t", name], capture_output=True, text=True, env=env
        )
        return out.stdout

    def wait_for(text: str, seconds: float = 20) -> str:
        deadline = time.monotonic() + seconds
        shown = ""
        while time.monotonic() < deadline:
            shown = screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{shown}")

    try:
        wait_for("demo01")
        wait_for("0:00.0 agent")
        subprocess.run([*tmux, "send-keys", "-t", name, "c"], check=True, env=env)
        shown = wait_for("turn 3 of 8")
        assert "▌cut" in shown
        subprocess.run([*tmux, "send-keys", "-t", name, "q"], check=True, env=env)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            alive = subprocess.run([*tmux, "has-session", "-t", name], env=env, capture_output=True)
            if alive.returncode != 0:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("cutin replay did not exit on q")
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, capture_output=True)


@pytest.mark.e2e
def test_replay_without_a_path_lists_the_sessions_folder(
    child_env: dict[str, str], tmp_path: Path
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    from tests.tui_replay.logs import write_plain_log

    folder = tmp_path / "sessions"
    folder.mkdir()
    write_plain_log(folder, "x.jsonl", "fromenv")
    socket = str(tmp_path / "tmux.sock")
    tmux = ["tmux", "-S", socket]
    env = {**child_env, "TERM": "xterm-256color", "CUTIN_SESSIONS_DIR": str(folder)}
    command = f"{shlex.quote(sys.executable)} -m cutin_tui replay"
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "r", "-x", "120", "-y", "40", command],
        check=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 20
        shown = ""
        while time.monotonic() < deadline:
            shown = subprocess.run(
                [*tmux, "capture-pane", "-p", "-t", "r"], capture_output=True, text=True, env=env
            ).stdout
            if "fromenv" in shown and "recent calls in" in shown:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the sessions folder's call was not listed:\n{shown}")
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, capture_output=True)
