"""A real-time cutin call over the raw PCM16 line to the real Pipecat bot speaking raw
PCM16 at 24 kHz (binary frames, ``{"type": "clear"}`` when interrupted): the greeting
transcribed, the yield to a barge-in with its clear, the recording and log agreeing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.lines.pcm import PcmLine
from tests.lines.bot_line_calls import check_call, dial, greet
from tests.support.pipecat_bot import Bot, running_bot

pytestmark = [pytest.mark.audio, pytest.mark.slow]


@pytest.fixture(scope="module")
def bot() -> Iterator[Bot]:
    with running_bot(protocol="pcm") as bot:
        yield bot


def test_the_greeting_is_heard_and_transcribed(bot: Bot) -> None:
    greeting = greet(bot, PcmLine(f"{bot.url}?rate=24000", rate=24000))
    print(f"\npcm: the greeting heard as {greeting!r}")


def test_a_call_over_raw_pcm_to_the_pipecat_bot(bot: Bot, tmp_path: Path) -> None:
    log = dial(bot, tmp_path, f"pcm:{bot.url}?rate=24000")
    bot.wait_line("call started pcm-24000", timeout=5)
    checked = check_call(log, bot, "pcm")
    assert (checked.format["encoding"], checked.format["rate"]) == ("pcm16", 24000)
    print(
        f"\npcm 24 kHz: yield latency {checked.latency_s:.3f} s;"
        f" clear {checked.clear_t:.3f} s after the onset"
    )
