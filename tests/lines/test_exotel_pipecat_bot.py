"""A real-time cutin call over the Exotel line to the real Pipecat bot speaking Exotel
through Pipecat's ExotelFrameSerializer (base64 PCM16 at 8 kHz, Exotel's default, and
its ``clear`` when interrupted): the greeting transcribed, the yield to a barge-in with
its clear, the recording and log agreeing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.lines.exotel import ExotelLine
from tests.lines.bot_line_calls import check_call, dial, greet
from tests.support.pipecat_bot import Bot, running_bot

pytestmark = [pytest.mark.audio, pytest.mark.slow]


@pytest.fixture(scope="module")
def bot() -> Iterator[Bot]:
    with running_bot(protocol="exotel") as bot:
        yield bot


def test_the_greeting_is_heard_and_transcribed(bot: Bot) -> None:
    greeting = greet(bot, ExotelLine(bot.url))
    print(f"\nexotel: the greeting heard as {greeting!r}")


def test_a_call_over_exotel_to_the_pipecat_bot(bot: Bot, tmp_path: Path) -> None:
    log = dial(bot, tmp_path, f"exotel:{bot.url}")
    started = bot.wait_line("call started MZ", timeout=5)[1]
    assert "exotel" in started and "8 kHz" in started, started
    checked = check_call(log, bot, "exotel")
    assert (checked.format["encoding"], checked.format["rate"]) == ("pcm16", 8000)
    print(
        f"\nexotel 8 kHz: yield latency {checked.latency_s:.3f} s;"
        f" clear {checked.clear_t:.3f} s after the onset"
    )
