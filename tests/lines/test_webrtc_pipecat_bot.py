"""The WebRTC line against the real Pipecat bot over SmallWebRTC (``--transport webrtc``).

One real-time call as ``cutin call --agent webrtc:http://127.0.0.1:PORT/api/offer``
makes it (the one engine, β = 1: the scripted caller barges in on the bot's long
answer): the greeting is heard and transcribed (keywords), a barge-in yields, the log
and the two-channel recording agree to one 20 ms frame, and the yield latency agrees
with the bot's own account of its stop: the RTVI ``bot-stopped-speaking`` event its
pipeline sent on the data channel when it was interrupted (logged as a line event, the
second opinion), plus its sound that had come but was still waiting to play
(``sound_queued_s`` on that event): the heard stop comes after it by no more than the
audio the bot still had in flight (:data:`IN_FLIGHT_S`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions.log.models import AgentYield, LineEvent
from sessions.log.reader import read_session
from tests.remote.helpers import first_sound, read_two_channels, stop_after
from tests.support.bot_calls import FRAME_S, assert_greeting_heard, dial_bot
from tests.support.pipecat_bot import BotPool

pytestmark = [pytest.mark.slow, pytest.mark.audio]
pytest.importorskip("aiortc")

IN_FLIGHT_S = 0.15
"""How much later than the bot's own stop (plus its sound cutin had but had not played)
its last sound may be heard: the 40 ms write Pipecat still delivers after an
interruption, the 20 ms Opus packet it goes out in, the log's 32 ms frame resolution of
a line event, and a loaded machine's scheduling. Measured here: 15 to 127 ms."""


def test_the_bot_over_smallwebrtc_greets_yields_and_agrees(
    pipecat_bots: BotPool, tmp_path: Path
) -> None:
    bot = pipecat_bots.get("--transport", "webrtc")
    assert bot.url.startswith("http://127.0.0.1:") and bot.url.endswith("/api/offer")
    log = dial_bot(bot, tmp_path, f"webrtc:{bot.url}", beta=1.0, seconds=60.0)
    session = read_session(log)
    assert session.header.agent.kind == "webrtc"
    assert_greeting_heard(log)
    started = bot.said("call started ")
    assert started and started[-1][1].endswith("(webrtc, opus 48 kHz)"), started
    assert bot.said("interrupted"), "the bot never reported being interrupted"

    lines = [e for e in session.events if isinstance(e, LineEvent)]
    assert [e.detail for e in lines if e.kind == "error"] == []
    assert [e.kind for e in lines if e.kind in ("open", "format")] == ["open", "format"]
    (playout,) = [e for e in lines if e.kind == "playout"]
    assert float(playout.data["depth_s"]) == 0.06  # the one jitter buffer (no prefetch)

    yields = [
        e
        for e in session.events
        if isinstance(e, AgentYield) and e.after == "interruption" and e.yielded
    ]
    assert yields, [e for e in session.events if isinstance(e, AgentYield)]
    y = yields[0]
    assert y.stop_t is not None and y.latency_s is not None and not y.already_silent
    assert y.clear_t is None, "WebRTC has no clear: the yield is the audio ending"
    agent, caller = read_two_channels(log.with_suffix(".wav"))
    onset = first_sound(caller, y.onset_t - 0.1)
    stop = stop_after(agent, y.onset_t)
    assert abs(onset - y.onset_t) <= FRAME_S, (onset, y.onset_t)
    assert abs(stop - y.stop_t) <= FRAME_S, (stop, y.stop_t)
    assert abs(max(0.0, stop - onset) - y.latency_s) <= FRAME_S

    # The bot's own stop: its RTVI bot-stopped-speaking after the onset (sent when its
    # pipeline was interrupted), and its audio heard a playout depth after it left.
    rtvi = [
        e
        for e in lines
        if e.kind == "agent_event"
        and e.data.get("kind") == "rtvi:bot-stopped-speaking"
        and e.t >= y.onset_t
    ]
    assert rtvi, "the bot's RTVI bot-stopped-speaking never reached the log"
    said = rtvi[0]
    queued = float(said.data["sound_queued_s"])
    bot_latency = said.t + queued - y.onset_t
    print(
        f"webrtc bot: yield latency {y.latency_s:.3f} s; the bot said it stopped"
        f" {said.t - y.onset_t:.3f} s after the onset, with {queued * 1000:.0f} ms of its"
        f" sound still to play: {(y.latency_s - bot_latency) * 1000:+.0f} ms"
    )
    assert -0.02 <= y.latency_s - bot_latency <= IN_FLIGHT_S, (y, said, bot_latency)
