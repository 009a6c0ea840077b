"""Live play with sound through a real (virtual) audio device: a userspace PulseAudio
null sink whose monitor records what the gallery played."""

from __future__ import annotations

import shutil
import time

import numpy as np
import pytest

from replay.gallery import load_gallery, run_entry
from replay.gallery.live import LivePlay
from sessions.log.models import Event
from tests.support.pulse import PulseServer, pulse_server

__all__ = ["pulse_server"]
pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed"),
]


def test_playing_an_example_sounds_while_the_agent_speaks(pulse_server: PulseServer) -> None:
    from replay.gallery.sound import open_voice
    from sessions.speech.audio import MicRecorder, join_blocks

    voice, note = open_voice()
    assert voice is not None, note
    recorder = MicRecorder(blocksize=256).start()
    assert recorder.started.wait(10)
    time.sleep(0.3)
    recorder.drain()
    run = run_entry(load_gallery().get("terminal-overlap"))
    events: list[Event] = []
    play = LivePlay(run, on_event=events.append, voice=voice)
    try:
        play.start()
        # Wait out the synthesis, then listen to the agent's first 2.5 s.
        deadline = time.monotonic() + 30
        while play.now() < 2.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        play.stop()
        audio = join_blocks(recorder.drain())
    finally:
        recorder.stop()
        voice.shutdown()
    assert events and events[0].type == "agent_turn_start"
    assert audio.size > 16_000
    frames = audio[: audio.size // 160 * 160].reshape(-1, 160)
    loud = np.sqrt((frames**2).mean(axis=1)) > 0.01
    assert loud.mean() > 0.3, "the agent's voice was heard for most of its first sentence"
