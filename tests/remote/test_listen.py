"""``--listen``: the tester hears the line on a real (virtual) audio device.

A real-time call to the simulated far end through the remote loop, with a
:class:`LineMonitor` on the PulseAudio null sink; the sink's monitor recording must
carry the agent's speech, and the call's own measurements must not depend on it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from controls.tendencies import Tendencies
from sessions.call.config import CallConfig
from sessions.call.remote_setup import RemoteSpec, build_remote_loop
from sessions.scenarios import load_scenario
from tests.support.pulse import PulseServer
from tests.support.sim_agent import SimAgent, SimAgentLine

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]


def test_the_line_plays_on_the_output_device(pulse_server: PulseServer, tmp_path: Path) -> None:
    from sessions.call.line_monitor import LineMonitor
    from sessions.speech.audio import Recorder, join_blocks

    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 0.0, 0.0))
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:9/", cache_dir=tmp_path / "cache")
    line = SimAgentLine(SimAgent(turns=[SimAgent().turns[0]]))
    line.open()
    loop = build_remote_loop(spec, config, line=line)
    loop.monitor = LineMonitor().start()
    sink = Recorder(blocksize=256).start()
    assert sink.started.wait(10)
    try:
        loop.run_for(5.0)
    finally:
        heard = join_blocks(sink.drain())
        sink.stop()
    assert loop.monitor.player.underflows < 20
    # The simulated agent speaks from 0.3 s: its voice is on the device.
    loud = np.abs(heard) >= 0.05
    assert loud.mean() > 0.1, f"only {loud.mean():.1%} of the monitor is loud"
