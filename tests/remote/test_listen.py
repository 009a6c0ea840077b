"""``--listen``: the tester hears the line on a real (virtual) audio device.

A real-time call to the simulated far end through the remote loop, with a
:class:`LineMonitor` on the PulseAudio null sink; the sink's monitor recording must
carry the agent's speech, and the call's own measurements must not depend on it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from controls.tendencies import Tendencies
from sessions.call.config import CallConfig
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.scenarios import load_scenario
from tests.support.pulse import PulseServer
from tests.support.sim_agent import SimAgent, SimAgentLine

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]


def test_the_line_plays_on_the_output_device(pulse_server: PulseServer, tmp_path: Path) -> None:
    from sessions.call.near_end.line_monitor import LineMonitor
    from sessions.speech.audio import MicRecorder, join_blocks

    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 0.0, 0.0))
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:9/", cache_dir=tmp_path / "cache")
    line = SimAgentLine(SimAgent(turns=[SimAgent().turns[0]]))
    line.open()
    loop = build_line_call(spec, config, line=line)
    loop.far.monitor = LineMonitor().start()
    sink = MicRecorder(blocksize=256).start()
    assert sink.started.wait(10)
    try:
        loop.run_for(5.0)
    finally:
        heard = join_blocks(sink.drain())
        sink.stop()
    assert loop.far.monitor.player.underflows < 20
    # The simulated agent speaks from 0.3 s: its voice is on the device.
    loud = np.abs(heard) >= 0.05
    assert loud.mean() > 0.1, f"only {loud.mean():.1%} of the monitor is loud"


class _Slowed:
    """A transcriber that answers ``delay`` seconds late (a busy machine)."""

    def __init__(self, real: Any, delay: float) -> None:
        self.real, self.delay = real, delay

    def transcribe(self, audio: Any, **kw: Any) -> Any:
        import time

        time.sleep(self.delay)
        return self.real.transcribe(audio, **kw)


def _mic_call(
    pulse_server: PulseServer,
    tmp_path: Path,
    *,
    speak_at: float,
    run_s: float,
    stt_delay: float = 0.0,
) -> tuple[list, SimAgentLine, float]:  # type: ignore[type-arg]
    """A line call with the tester's microphone: the tester's recorded sentence plays into
    the (virtual) microphone ``speak_at`` seconds in; ``stt_delay`` holds each of its
    transcriptions back that long (a busy machine). Returns the events, the line and the
    wall time the call took."""
    import threading
    import time

    from sessions.call.setup.line_call import attach_microphone
    from sessions.speech.tts import EspeakTts
    from sessions.speech.wav import write_wav
    from tests.voice_call.test_device_call import play_into

    sink = pulse_server.pactl(
        "load-module", "module-null-sink", "sink_name=linemic", "rate=16000", "channels=1"
    ).strip()
    pulse_server.pactl("set-default-source", "linemic.monitor")
    try:
        wav = write_wav(
            tmp_path / "me.wav", EspeakTts().synthesize("Sorry, I need a new address.").audio
        )
        scenario = load_scenario("retail-order-change")
        config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 0.0, 0.0))
        spec = RemoteSpec(agent="twilio:ws://127.0.0.1:9/", cache_dir=tmp_path / "cache")
        line = SimAgentLine(SimAgent(turns=[SimAgent().turns[1]], react_s=0.25))
        line.open()
        loop = build_line_call(spec, config, line=line)
        attach_microphone(loop)
        mic = loop.far.mic
        assert mic is not None
        if stt_delay:
            # The microphone's own handle on the model, slowed: the model itself is the
            # process's shared one, which other tests (and the agent's ears) use as is.
            mic.transcriber = _Slowed(mic.transcriber, stt_delay)  # type: ignore[assignment]
        events: list = []  # type: ignore[type-arg]
        loop.listeners.append(events.append)
        timer = threading.Timer(speak_at, lambda: play_into(pulse_server, "linemic", wav))
        timer.start()
        started = time.monotonic()
        loop.run_for(run_s)
        took = time.monotonic() - started
    finally:
        pulse_server.pactl("set-default-source", "vsink.monitor")
        pulse_server.pactl("unload-module", sink)
    return events, line, took


def test_the_testers_microphone_barges_in_on_the_line(
    pulse_server: PulseServer, tmp_path: Path
) -> None:
    """--input mic on a line: the tester's voice goes into the line; speaking over the
    agent is a manual interruption at the sound's onset, and the agent's yield is read."""
    # The agent speaks from 0.3 s; the tester cuts in 3 s later.
    events, line, took = _mic_call(pulse_server, tmp_path, speak_at=3.3, run_s=9.0)
    assert took < 20
    cuts = [e for e in events if e.type == "interruption"]
    assert cuts and cuts[0].trigger == "manual" and cuts[0].source == "mic", events
    assert 3.0 <= cuts[0].cut_t <= 4.5
    yields = [e for e in events if e.type == "agent_yield" and e.after == "interruption"]
    assert yields and yields[0].yielded
    assert line.stops, "the simulated agent heard the tester's voice on its line"
    said = [e for e in events if e.type == "user_turn" and e.source == "mic"]
    assert said and "need" in said[0].original.lower()  # tiny.en: keywords, not exact text


def test_the_testers_last_words_are_logged_when_the_call_ends_first(
    pulse_server: PulseServer, tmp_path: Path
) -> None:
    """The call hangs up while speech-to-text is still busy with what the tester said (a
    loaded machine): the words still reach the log, before the call's end event."""
    events, _, took = _mic_call(pulse_server, tmp_path, speak_at=1.0, run_s=4.5, stt_delay=3.0)
    assert took < 15
    said = [e for e in events if e.type == "user_turn" and e.source == "mic"]
    assert said and "need" in said[0].original.lower(), [e.type for e in events]
    kinds = [e.type for e in events]
    assert kinds.index("user_turn") < kinds.index("end")
    assert said[0].t < 4.5
