"""`space` with a recording but no audio device: a plain notification that names the
recording and the turn's time span (to play it elsewhere), not PortAudio's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cutin_tui.views.turn_layout import format_time
from replay.load import load_log
from sessions.speech import SAMPLE_RATE
from sessions.speech.devices import AudioUnavailable
from sessions.speech.wav import write_wav
from tests.tui_replay.helpers import SIZE, NotedApp, loaded

RAW = "cannot open the default device for playback: Error querying device -1"


class _NoDevice:
    """Stands for sessions.speech.audio.Player where PortAudio finds no device."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AudioUnavailable(RAW)


async def test_no_device_names_the_recording_and_the_turn_span(
    demo_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sessions.speech.audio

    monkeypatch.setattr(sessions.speech.audio, "Player", _NoDevice)
    wav = demo_log.with_suffix(".wav")
    write_wav(wav, np.zeros(45 * SAMPLE_RATE, dtype=np.float32))
    turn = load_log(demo_log).turns[1]  # the first tester turn
    assert turn.start is not None and turn.end is not None
    app = NotedApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        await pilot.press("j", "j", "space")
        assert screen.playback is not None
        await screen.playback.wait()
        await pilot.pause()
        severity, title, message = app.notes[-1]
        assert (severity, title) == ("warning", "no audio device")
        assert "No audio device is available" in message
        assert str(wav) in message
        assert f"from {format_time(turn.start)} to {format_time(turn.end)}" in message
        assert "querying device" not in message
        assert [n for n in app.notes if n[0] == "error"] == []  # not the worker's failure
