"""A SIP call through to a real agent: cutin → SIP/RTP → PJSIP far end → the Pipecat bot.

The far end (tests/support/sip_agent.py) answers the INVITE and bridges the call's
audio to the real offline Pipecat bot (examples/pipecat_bot.py: Silero VAD,
faster-whisper, espeak-ng, interruptions on) over the bot's Twilio Media Streams
WebSocket, as a telephony gateway in front of a voice agent does. cutin dials
``sip:agent@127.0.0.1:PORT`` with the one call engine in real time, as
``cutin call --agent sip:...`` does; what it logs is checked against what the bot
says it did and against the call's recording.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from controls.tendencies import Tendencies
from sessions.call.config import CallConfig
from sessions.call.engine.engine import CallEngine
from sessions.call.recorder import Recorder
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.callers.users import ScriptedUser
from sessions.lines.sip.line import SipLine
from sessions.lines.twilio import TwilioLine
from sessions.log.models import Event
from sessions.log.reader import read_session
from sessions.scenarios import load_scenario
from tests.remote.helpers import first_sound, read_two_channels, stop_after
from tests.sip.far_end import sip_far_end
from tests.support.bot_calls import assert_greeting_heard, hang_up_after, yield_after
from tests.support.pipecat_bot import BotPool

pytestmark = [pytest.mark.audio, pytest.mark.slow]
FRAME = 0.032
"""One engine frame: the tolerance between the log and the recording."""


def _events(log: Path, kind: str) -> list[Event]:
    return [e for e in read_session(log).events if e.type == kind]


def _warm_up(url: str) -> None:
    """One short call straight to the bot, so its first, slow greeting (models warming
    up on a busy machine) is not the SIP call's."""
    line = TwilioLine(url)
    line.open(30.0)
    deadline = time.monotonic() + 30.0
    try:
        while time.monotonic() < deadline and line.playout.received == 0:
            line.send(np.zeros(512, np.float32))
            time.sleep(0.032)
    finally:
        line.close()


def test_a_sip_call_reaches_the_bot_hears_its_greeting_and_a_barge_in_yields(
    tmp_path: Path, pipecat_bots: BotPool
) -> None:
    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 1.0, 0.0), seed=2)
    bot = pipecat_bots.get()  # the run's shared bot, idle
    with sip_far_end("--bot", bot.url) as far:
        _warm_up(bot.url)
        bot.wait_idle()  # the bot serves one call at a time
        spec = RemoteSpec(agent=f"sip:agent@127.0.0.1:{far.port}", cache_dir=tmp_path / "c")
        recorder = Recorder.create(
            tmp_path, config, spec.agent_info(scenario.agent.name), speech=spec.speech_info()
        )
        wav = recorder.path.with_suffix(".wav")
        user = ScriptedUser(scenario, barge_in_with_next_line=True)
        loop = build_line_call(spec, config, recording_path=wav, user=user)
        assert isinstance(loop, CallEngine) and isinstance(loop.line, SipLine)
        loop.listeners.append(recorder)
        # Hung up 4 s after the bot yielded to the barge-in: what the checks below need.
        hang_up_after(loop, yield_after("interruption", yielded=True), 4.0)
        try:
            loop.run_for(55)
        finally:
            recorder.close()
        far.wait_line("ended by=caller code=200")  # cutin's BYE
        assert bot.said("interrupted"), "the bot never reported being interrupted"
        heard_by_bot = " ".join(line for _, line in bot.said("heard "))
    log = recorder.path
    session = read_session(log)
    assert session.header.agent.kind == "sip"

    # The greeting and the answers came over RTP and were transcribed (β = 1 cuts the
    # greeting after its first words).
    ends = _events(log, "agent_turn_end")
    assert ends, "no agent turn was heard"
    heard = " ".join(e.spoken for e in ends).lower()
    print(f"cutin heard over SIP: {heard!r}")
    assert_greeting_heard(log)
    assert any(w in heard for w in ("thanks", "calling", "account", "payment")), heard
    # The bot heard the caller through the same call.
    assert heard_by_bot, "the bot transcribed nothing the caller said"

    # β = 1 barged in on the bot's long answer, and the bot stopped: on a phone line its
    # audio simply ends (there is no clear).
    assert _events(log, "interruption"), "β = 1 never barged in"
    yields = [e for e in _events(log, "agent_yield") if e.after == "interruption"]
    assert yields and yields[0].yielded, yields
    y = yields[0]
    assert y.clear_t is None
    agent, caller = read_two_channels(log.with_suffix(".wav"))
    assert abs(first_sound(caller, y.onset_t - 0.1) - y.onset_t) <= FRAME
    assert abs(stop_after(agent, y.onset_t) - y.stop_t) <= FRAME
    lines = [e for e in session.events if e.type == "line"]
    assert lines[0].kind == "open" and "PCMU" in lines[0].detail
    assert lines[-1].kind == "closed"
    print(f"SIP: bot yield latency {y.latency_s:.3f} s")
