"""cutin dials the real Pipecat bot speaking Plivo (Pipecat's PlivoFrameSerializer,
μ-law 8 kHz ``playAudio``) over the Plivo line: the greeting is heard and transcribed,
a barge-in makes the bot yield and send ``clearAudio``, and the log's yield matches the
two-channel recording to one 20 ms frame."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.bot_calls import assert_bot_call, dial_bot, line_events
from tests.support.pipecat_bot import BotPool

pytestmark = [pytest.mark.audio, pytest.mark.slow]


def test_the_bot_over_plivo_yields_to_a_barge_in(tmp_path: Path, pipecat_bots: BotPool) -> None:
    bot = pipecat_bots.get(protocol="plivo")
    log = dial_bot(bot, tmp_path, f"plivo:{bot.url}")
    y = assert_bot_call(bot, log, audio="μ-law 8 kHz")
    (fmt,) = line_events(log, "format")
    assert fmt.data["encoding"] == "audio/x-mulaw" and fmt.data["rate"] == 8000
    (opened,) = line_events(log, "open")
    assert bot.said(f"call started {opened.data['stream_id']} ")
    print(f"plivo: yield latency {y.latency_s:.3f} s, clear at {y.clear_t:.2f} s")
