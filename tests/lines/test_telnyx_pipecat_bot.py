"""cutin dials the real Pipecat bot speaking Telnyx (Pipecat's TelnyxFrameSerializer)
over the Telnyx line, in PCMU and in PCMA: the greeting is heard and transcribed, a
barge-in makes the bot yield and send Telnyx's ``clear``, and the log's yield matches
the two-channel recording to one 20 ms frame."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.bot_calls import assert_bot_call, dial_bot, line_events
from tests.support.pipecat_bot import Bot, BotPool

pytestmark = [pytest.mark.audio, pytest.mark.slow]


@pytest.fixture
def telnyx_bot(pipecat_bots: BotPool) -> Iterator[Bot]:
    """The session's Telnyx bot, idle before and after the test."""
    bot = pipecat_bots.get(protocol="telnyx")
    yield bot
    bot.wait_idle()


@pytest.mark.parametrize("codec", ["PCMU", "PCMA"])
def test_the_bot_over_telnyx_yields_to_a_barge_in(
    telnyx_bot: Bot, tmp_path: Path, codec: str
) -> None:
    log = dial_bot(telnyx_bot, tmp_path, f"telnyx:{telnyx_bot.url}?codec={codec}")
    y = assert_bot_call(telnyx_bot, log, audio=f"{codec} 8 kHz")
    (fmt,) = line_events(log, "format")
    assert fmt.data["encoding"] == codec and fmt.data["rate"] == 8000
    (opened,) = line_events(log, "open")
    assert telnyx_bot.said(f"call started {opened.data['stream_id']} ")
    print(f"telnyx {codec}: yield latency {y.latency_s:.3f} s, clear at {y.clear_t:.2f} s")
