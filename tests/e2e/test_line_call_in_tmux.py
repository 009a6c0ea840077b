"""The real `cutin call --agent twilio:ws://...` in tmux, dialling the real Pipecat bot:
type a line, let the bot answer, barge in with F2, quit; the printed log says whether
(and how fast) the bot yielded."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.log import EndEvent, Interruption, UserTurn, read_session
from sessions.log.models import AgentYield
from tests.e2e.tmux import Tmux, cutin_binary
from tests.support.pipecat_bot import running_bot

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.audio,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not cutin_binary().exists(), reason="the cutin console script is missing"),
]


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    session = Tmux()
    try:
        yield session
    finally:
        session.close()


def test_dial_the_bot_barge_in_with_f2_and_read_the_yield(tmux: Tmux, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    with running_bot() as bot:
        tmux.start(
            [str(cutin_binary()), "call", "--agent", f"twilio:{bot.url}", "--alpha", "0",
             "--beta", "0", "--gamma", "0", "--sessions-dir", str(sessions)],
            {"PYTHONUNBUFFERED": "1", "CUTIN_CACHE_DIR": str(tmp_path / "cache")},
            then="echo EXIT=$?",
        )  # fmt: skip
        tmux.wait_for("open", timeout=60)  # the line's status
        bot.wait_line("speaking", timeout=30)  # its greeting
        tmux.type("hello, what is my balance please")
        tmux.keys("Enter")
        bot.wait_line("heard ", timeout=60)
        bot.wait_line("replying", timeout=30)
        answering = bot.wait_line("speaking", timeout=30, after=bot.said("replying")[-1][0])
        time.sleep(2.0)  # its answer has reached cutin's side of the line and is under way
        tmux.type("sorry, can I stop you there")
        tmux.keys("F2")
        bot.wait_line("interrupted", timeout=20, after=answering[0])
        _wait_in_log(sessions, '"type":"agent_yield"', timeout=30)
        tmux.keys("C-q")
        tmux.wait_for("EXIT=", timeout=30)
    screen = tmux.screen(history=True)
    assert "EXIT=0" in screen
    match = re.search(r"log: (\S+?\.jsonl)", screen.replace("\n", ""))
    assert match, screen
    log = read_session(Path(match[1]))
    assert log.header.agent.kind == "twilio"
    assert [u.original for u in log.of(UserTurn) if u.source == "typed"][:1] == [
        "hello, what is my balance please"
    ]
    cuts = [c for c in log.of(Interruption) if c.trigger == "manual"]
    assert cuts and cuts[0].text == "sorry, can I stop you there"
    yields = [y for y in log.of(AgentYield) if y.after == "interruption"]
    assert yields and yields[0].yielded and yields[0].latency_s is not None
    assert log.of(EndEvent)
    assert Path(match[1]).with_suffix(".wav").stat().st_size > 44


def _wait_in_log(sessions: Path, needle: str, timeout: float) -> None:
    """Until the call's log (written as events happen) contains ``needle``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in sessions.glob("*.jsonl"):
            if needle in path.read_text(encoding="utf-8", errors="replace"):
                return
        time.sleep(0.1)
    raise AssertionError(f"{needle} never appeared in the log within {timeout} s")
