"""The real `cutin call` in a real terminal (tmux): type, let the rules act, hang up, quit,
then check the log it printed against what the screen said."""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.log import (
    AgentTurnStart,
    Backchannel,
    EndEvent,
    Interruption,
    Opportunity,
    TurnEnd,
    UserTurn,
    read_session,
)
from tests.e2e.tmux import Tmux, cutin_binary, pid_of

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not cutin_binary().exists(), reason="the cutin console script is missing"),
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the cutin process in /proc"),
]

COUNTS = re.compile(r"agent turns (\d+) · opportunities (\d+) mid-turn")
ACTIONS = re.compile(r"(interruptions|backchannels)\s+(\d+) \(auto (\d+), manual (\d+)\)")


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    session = Tmux()
    try:
        yield session
    finally:
        session.close()


def _call(tmux: Tmux, sessions: Path, *args: str, then: str = "") -> None:
    tmux.start(
        [str(cutin_binary()), "call", "--sessions-dir", str(sessions), *args],
        {"PYTHONUNBUFFERED": "1"},
        then=then,
    )
    tmux.wait_for("AGENT", timeout=30)


def _screen_counts(screen: str) -> dict[str, int]:
    counts = COUNTS.search(screen)
    assert counts, screen
    out = {"agent_turns": int(counts[1]), "mid_turn": int(counts[2])}
    for name, total, auto, manual in ACTIONS.findall(screen):
        out[name] = int(total)
        out[f"{name}_auto"] = int(auto)
        out[f"{name}_manual"] = int(manual)
    return out


def _log_counts(path: Path) -> dict[str, int]:
    """Counted straight from the log lines (independently of the app's counting code)."""
    log = read_session(path)
    grown = {e.short_pause_index for e in log.of(TurnEnd)}
    acting = [o for o in log.of(Opportunity) if o.mode != "shadow"]
    out = {
        "agent_turns": len(log.of(AgentTurnStart)),
        "mid_turn": sum(1 for o in acting if o.pause_index not in grown),
    }
    for name, kind in (("interruptions", Interruption), ("backchannels", Backchannel)):
        events = log.of(kind)
        out[name] = len(events)
        out[f"{name}_auto"] = sum(1 for e in events if e.trigger == "auto")
        out[f"{name}_manual"] = sum(1 for e in events if e.trigger == "manual")
    return out


def test_type_auto_backchannel_hang_up_and_the_log_matches_the_screen(
    tmux: Tmux, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    _call(tmux, sessions, "--gamma", "1", "--beta", "0", "--seed", "2", "--wpm", "300",
          then="echo EXIT=$?")  # fmt: skip
    # Typed while the agent holds the floor: shown as waiting, then said at its turn end.
    tmux.type("my order is 48213")
    tmux.keys("Enter")
    tmux.wait_for("waits for the agent's turn to end")
    tmux.wait_for("“my order is 48213”")
    # γ = 1: from the agent's second turn the rule backchannels at a short pause.
    screen = tmux.wait_for(lambda s: re.search(r"backchannels\s+[1-9]", s) is not None)
    assert "⟨" in screen  # the token, inline in the agent's words
    tmux.wait_for("BACKCHANNEL · taken")
    tmux.keys("F10")
    screen = tmux.wait_for("call ended (hangup)")
    shown = _screen_counts(screen)
    tmux.keys("C-q")
    after = tmux.wait_for("EXIT=", timeout=20)
    assert "EXIT=0" in after
    path = _printed_log(tmux.screen(history=True))
    assert path.parent == sessions
    log = read_session(path)
    assert not log.warnings
    assert log.header.tendencies.gamma == 1.0
    assert [u.original for u in log.of(UserTurn) if u.source == "typed"] == ["my order is 48213"]
    assert shown == _log_counts(path)
    assert shown["backchannels_auto"] >= 1
    (end,) = log.of(EndEvent)
    assert end.reason == "hangup"


def test_interrupt_key_cuts_the_agent_with_typed_text(tmux: Tmux, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _call(tmux, sessions, "--beta", "0", "--gamma", "0", then="echo EXIT=$?")
    tmux.wait_for(lambda s: "Riverside" in s)
    tmux.type("sorry, quick question")
    tmux.keys("F2")
    screen = tmux.wait_for("▌cut")
    assert "“sorry, quick question”" in screen
    tmux.wait_for(lambda s: re.search(r"interruptions\s+1 \(auto 0, manual 1\)", s) is not None)
    tmux.keys("C-q")
    tmux.wait_for("EXIT=", timeout=20)
    (cut,) = read_session(_printed_log(tmux.screen(history=True))).of(Interruption)
    assert cut.trigger == "manual" and cut.text == "sorry, quick question"


def _printed_log(screen: str) -> Path:
    """The path after "log: " (a long path wraps at the pane's edge, so join the lines)."""
    match = re.search(r"log: (\S+?\.jsonl)", screen.replace("\n", ""))
    assert match, screen
    return Path(match[1])


def _only_log(sessions: Path) -> Path:
    (path,) = sessions.glob("*.jsonl")
    return path


def _wait_gone(pid: int, timeout: float = 15.0) -> None:
    """Until the process has died (tmux reaps it; the screen text is no reliable sign)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still running {timeout} s after SIGKILL")


def test_a_killed_call_leaves_a_readable_log(tmux: Tmux, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _call(tmux, sessions, "--beta", "1")
    tmux.wait_for("INTERRUPT · taken", timeout=30)
    pid = pid_of(str(sessions))  # the cutin this test started
    os.kill(pid, signal.SIGKILL)
    _wait_gone(pid)
    log = read_session(_only_log(sessions))
    assert log.of(Interruption) and log.of(AgentTurnStart)
    assert not log.of(EndEvent)  # nothing ran after the kill, and still every line reads


def test_sigterm_ends_the_call_and_closes_the_log(tmux: Tmux, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _call(tmux, sessions, "--beta", "0", then="echo EXIT=$?")
    tmux.wait_for("Riverside")
    os.kill(pid_of(str(sessions)), signal.SIGTERM)
    tmux.wait_for("EXIT=", timeout=20)
    (end,) = read_session(_only_log(sessions)).of(EndEvent)
    assert end.reason == "hangup"
