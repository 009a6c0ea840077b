"""A real-time cutin call over the Vonage line to the real Pipecat bot speaking Vonage
through Pipecat's VonageFrameSerializer (L16 16 kHz binary frames, ``{"action":
"clear"}`` when interrupted): the greeting transcribed, the yield to a barge-in with its
clear, the recording and log agreeing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.lines.vonage import VonageLine
from tests.lines.bot_line_calls import check_call, dial, greet
from tests.support.pipecat_bot import Bot, running_bot

pytestmark = [pytest.mark.audio, pytest.mark.slow]


@pytest.fixture(scope="module")
def bot() -> Iterator[Bot]:
    with running_bot(protocol="vonage") as bot:
        yield bot


def test_the_greeting_is_heard_and_transcribed(bot: Bot) -> None:
    greeting = greet(bot, VonageLine(bot.url))
    print(f"\nvonage: the greeting heard as {greeting!r}")


def test_a_call_over_vonage_to_the_pipecat_bot(bot: Bot, tmp_path: Path) -> None:
    log = dial(bot, tmp_path, f"vonage:{bot.url}")
    bot.wait_line("call started", timeout=5)
    checked = check_call(log, bot, "vonage")
    assert (checked.format["encoding"], checked.format["rate"]) == ("pcm16", 16000)
    print(
        f"\nvonage 16 kHz: yield latency {checked.latency_s:.3f} s;"
        f" clear {checked.clear_t:.3f} s after the onset"
    )
