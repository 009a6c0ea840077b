"""The real `cutin call --agent twilio:ws://...` in tmux, dialling the real Pipecat bot.

First the README's black-box tour exactly as written (`./dev bot --long-greeting`, then
`cutin call --agent twilio:... --beta 1 --gamma 1`, no key pressed): the rule cuts into
the greeting and the bot stops (`▌cut`, `■stop`), then says "mm-hmm" in its answer and
the bot stops for that too (`■false-yield`). Then, with the autos off (F4, F5), type a
line, let the bot answer, barge in with F2, quit; the printed log says whether (and how
fast) the bot yielded."""

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
from tests.support.pipecat_bot import Bot, running_bot

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


def test_the_readme_tour_then_barge_in_with_f2_and_read_the_yield(
    tmux: Tmux, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    with running_bot("--long-greeting") as bot:  # README: ./dev bot --long-greeting
        tmux.start(
            [str(cutin_binary()), "call", "--agent", f"twilio:{bot.url}", "--beta", "1",
             "--gamma", "1", "--sessions-dir", str(sessions)],
            {"PYTHONUNBUFFERED": "1", "CUTIN_CACHE_DIR": str(tmp_path / "cache")},
            then="echo EXIT=$?",
        )  # fmt: skip
        tmux.wait_for("open", timeout=60)  # the line's status
        # The tour, no key pressed: β 1 cuts into the greeting, γ 1 backchannels the answer
        # (each mark is looked for while it is on the screen: the transcript scrolls).
        _wait_on_screen(tmux, ("▌cut", "■stop+", "■false-yield+"), timeout=120)
        _wait_in_log(sessions, '"after":"interruption"', timeout=10)
        _wait_in_log(sessions, '"after":"backchannel"', timeout=10)
        # Now by hand: the autos off, a typed line, and F2 into the bot's answer.
        tmux.keys("F4", "F5")
        cuts_so_far = _count_in_log(sessions, '"after":"interruption"')
        tmux.wait_for(lambda s: "auto-interrupt    off" in s and "auto-backchannel  off" in s)
        # The bot may be answering the "uh-huh" (when its whisper heard words in it); and
        # the ears catch up, so hanging up later has only the last turn to transcribe:
        # the driver gives it 3 s, and on a loaded machine a backlog outlasts that.
        _wait_until_quiet(bot, seconds=2.0, timeout=40)
        _wait_between_turns(sessions, timeout=60)
        typed = time.monotonic()
        tmux.type("hello, what is my balance please")
        tmux.keys("Enter")
        bot.wait_line("heard ", timeout=60, after=typed)
        replying = bot.wait_line("replying", timeout=30, after=typed)
        answering = bot.wait_line("speaking", timeout=30, after=replying[0])
        time.sleep(2.0)  # its answer has reached cutin's side of the line and is under way
        tmux.type("sorry, can I stop you there")
        tmux.keys("F2")
        bot.wait_line("interrupted", timeout=20, after=answering[0])
        _wait_in_log(sessions, '"after":"interruption"', timeout=30, count=cuts_so_far + 1)
        # Quit with the ears caught up (hanging up mid-turn under load loses the end).
        _wait_between_turns(sessions, timeout=90)
        tmux.keys("C-q")
        tmux.wait_for("EXIT=", timeout=30)
    screen = tmux.screen(history=True)
    assert "EXIT=0" in screen
    match = re.search(r"log: (\S+?\.jsonl)", screen.replace("\n", ""))
    assert match, screen
    log = read_session(Path(match[1]))
    assert log.header.agent.kind == "twilio"
    # The tour: an automatic cut the bot yielded to (with Twilio's clear), and a
    # backchannel it stopped for (a false yield), both in the greeting's and answers' turns.
    auto = [c for c in log.of(Interruption) if c.trigger == "auto"]
    assert auto and auto[0].turn == 0, auto  # the greeting: no backchannel in turn 0
    cut = [y for y in log.of(AgentYield) if y.after == "interruption" and y.turn == 0]
    assert cut and cut[0].yielded and cut[0].clear_t is not None, cut
    false = [y for y in log.of(AgentYield) if y.after == "backchannel" and y.yielded]
    assert false and false[0].turn >= 1, false
    print(
        f"\ntour: cut at {auto[0].t:.2f} s, stop +{cut[0].latency_s:.2f} s;"
        f" false yield +{false[0].latency_s:.2f} s (turn {false[0].turn})"
    )
    assert [u.original for u in log.of(UserTurn) if u.source == "typed"][:1] == [
        "hello, what is my balance please"
    ]
    cuts = [c for c in log.of(Interruption) if c.trigger == "manual"]
    assert cuts and cuts[0].text == "sorry, can I stop you there"
    yields = [y for y in log.of(AgentYield) if y.after == "interruption"]
    manual = [y for y in yields if abs(y.onset_t - (cuts[0].cut_t or cuts[0].t)) < 1e-3]
    assert manual and manual[0].yielded and manual[0].latency_s is not None, yields
    assert log.of(EndEvent)
    assert Path(match[1]).with_suffix(".wav").stat().st_size > 44


def _wait_until_quiet(bot: Bot, seconds: float, timeout: float) -> None:
    """Until the bot has said nothing for ``seconds`` and is not speaking."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = bot.said("")
        last = lines[-1][0] if lines else 0.0
        talking = len(bot.said("speaking")) > len(bot.said("stopped speaking"))
        if not talking and time.monotonic() - last >= seconds:
            return
        time.sleep(0.1)
    raise AssertionError(f"the bot never fell quiet: {[s for _, s in bot.said('')][-8:]}")


def _wait_on_screen(tmux: Tmux, marks: tuple[str, ...], timeout: float) -> None:
    """Until each of ``marks`` has been on the screen (not necessarily at once)."""
    deadline = time.monotonic() + timeout
    missing, screen = set(marks), ""
    while missing and time.monotonic() < deadline:
        screen = tmux.screen()
        missing = {m for m in missing if m not in screen}
        time.sleep(0.2)
    assert not missing, f"never on the screen: {sorted(missing)}; screen:\n{screen}"


def _wait_between_turns(sessions: Path, timeout: float) -> None:
    """Until every agent turn the log started has ended, for a whole second."""
    deadline = time.monotonic() + timeout
    since: float | None = None
    while time.monotonic() < deadline:
        starts = _count_in_log(sessions, '"type":"agent_turn_start"')
        ended = _count_in_log(sessions, '"type":"agent_turn_end"') >= starts
        since = (since or time.monotonic()) if ended else None
        if since is not None and time.monotonic() - since >= 1.0:
            return
        time.sleep(0.1)
    raise AssertionError(f"the agent's turns never all ended within {timeout} s")


def _count_in_log(sessions: Path, needle: str) -> int:
    """How often ``needle`` occurs in the call's log (written as events happen) so far."""
    return sum(
        path.read_text(encoding="utf-8", errors="replace").count(needle)
        for path in sessions.glob("*.jsonl")
    )


def _wait_in_log(sessions: Path, needle: str, timeout: float, count: int = 1) -> None:
    """Until the call's log contains ``needle`` ``count`` times."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _count_in_log(sessions, needle) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"{needle} never appeared {count}× in the log within {timeout} s")
