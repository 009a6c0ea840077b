"""Real-time cutin calls over the PCM16 lines to the real Pipecat bot, speaking each
provider through Pipecat's own serializer: Exotel (ExotelFrameSerializer: base64 PCM16
at 8 kHz, Exotel's default, and its ``clear`` when interrupted), Vonage
(VonageFrameSerializer: L16 16 kHz binary frames, ``{"action": "clear"}``) and raw PCM16
at 24 kHz (binary frames, ``{"type": "clear"}``). For each: the greeting transcribed,
the yield to a barge-in with its clear, the recording and log agreeing. One bot a
protocol, shared by the run (``pipecat_bots``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sessions.lines.base import Line
from sessions.lines.exotel import ExotelLine
from sessions.lines.pcm import PcmLine
from sessions.lines.vonage import VonageLine
from tests.lines.bot_line_calls import check_call, dial, greet
from tests.support.pipecat_bot import Bot, BotPool

pytestmark = [pytest.mark.audio, pytest.mark.slow]


@dataclass(frozen=True)
class Case:
    line: Callable[[str], Line]
    """The line to the bot's URL."""
    query: str
    """What the ``--agent`` URL adds to the bot's."""
    started: str
    """How the bot's log says the call started (it names the stream or the rate)."""
    rate: int
    """The wire rate the line's FORMAT notice states."""


CASES = {
    "exotel": Case(ExotelLine, "", "call started MZ", 8000),
    "vonage": Case(VonageLine, "", "call started", 16000),
    "pcm": Case(
        lambda url: PcmLine(f"{url}?rate=24000", rate=24000),
        "?rate=24000",
        "call started pcm-24000",
        24000,
    ),
}


@pytest.fixture(params=list(CASES))
def bot(request: pytest.FixtureRequest, pipecat_bots: BotPool) -> Iterator[tuple[str, Bot]]:
    """The session's bot for the protocol, idle before and after the test."""
    agent = pipecat_bots.get(protocol=request.param)
    yield request.param, agent
    agent.wait_idle()


def test_the_greeting_is_heard_and_transcribed(bot: tuple[str, Bot]) -> None:
    kind, agent = bot
    greeting = greet(agent, CASES[kind].line(agent.url))
    print(f"\n{kind}: the greeting heard as {greeting!r}")


def test_a_call_to_the_pipecat_bot(bot: tuple[str, Bot], tmp_path: Path) -> None:
    kind, agent = bot
    case = CASES[kind]
    log = dial(agent, tmp_path, f"{kind}:{agent.url}{case.query}")
    started = agent.wait_line(case.started, timeout=5)[1]
    if kind == "exotel":
        assert "exotel" in started and "8 kHz" in started, started
    checked = check_call(log, agent, kind)
    assert (checked.format["encoding"], checked.format["rate"]) == ("pcm16", case.rate)
    print(
        f"\n{kind} {case.rate // 1000} kHz: yield latency {checked.latency_s:.3f} s;"
        f" clear {checked.clear_t:.3f} s after the onset"
    )
