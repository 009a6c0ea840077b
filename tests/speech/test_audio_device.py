"""Through a real (virtual) audio device: a userspace PulseAudio null sink whose monitor
records exactly what was played. ``sounddevice`` is imported only after the fixture has
pointed PortAudio at that server.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import time
from collections.abc import Iterator

import numpy as np
import pytest

from controls import PauseEvent, PauseEventKind
from sessions.speech import SAMPLE_RATE
from sessions.speech.audio import MicRecorder, Player, join_blocks
from sessions.speech.backchannel_cache import trim_silence
from sessions.speech.mixer import TapBlock
from sessions.speech.stt import Transcriber
from sessions.speech.tts import EspeakTts
from sessions.speech.vad import SileroOnnxVad
from tests.speech.signals import inner_silences, locate, silences
from tests.support.pulse import PulseServer

pytestmark = [pytest.mark.audio, pytest.mark.slow]

AGENT_SSML = (
    "<speak>I have your order open, and I can see the address we have on file. "
    '<break time="800ms"/> It is the one on Elm Street from last year.</speak>'
)


AudioIO = tuple[Player, MicRecorder, "queue.SimpleQueue[TapBlock]"]


@pytest.fixture
def audio_io(pulse_server: PulseServer) -> Iterator[AudioIO]:
    """(Player, MicRecorder, tap) on the virtual device, the recorder already running."""
    tap: queue.SimpleQueue[TapBlock] = queue.SimpleQueue()
    recorder = MicRecorder(blocksize=256).start()
    assert recorder.started.wait(10), "the input stream never started"
    player = Player(blocksize=256, tap=tap).start()
    assert player.started.wait(10), "the output stream never started"
    time.sleep(0.3)
    recorder.drain()  # start the recording from here
    try:
        yield player, recorder, tap
    finally:
        player.close()
        recorder.stop()


def recorded(recorder: MicRecorder) -> np.ndarray:
    return join_blocks(recorder.drain())


def test_cutin_devices_lists_the_virtual_device(
    pulse_server: PulseServer, child_env: dict[str, str]
) -> None:
    env = {**child_env, **pulse_server.env}
    proc = subprocess.run(
        [sys.executable, "-m", "cutin_tui", "devices", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    devices = [json.loads(line) for line in proc.stdout.splitlines()]
    assert any(d["default_output"] and d["max_output_channels"] > 0 for d in devices)
    assert any(d["default_input"] and d["max_input_channels"] > 0 for d in devices)
    table = subprocess.run(
        [sys.executable, "-m", "cutin_tui", "devices"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert table.returncode == 0 and "pulse" in table.stdout


def test_device_selection_by_name_or_index(pulse_server: PulseServer) -> None:
    from sessions.speech.devices import AudioUnavailable, list_devices, resolve_device

    names = {d.name: d.index for d in list_devices()}
    assert "pulse" in names
    assert resolve_device("pulse", "output") == names["pulse"]
    assert resolve_device(str(names["pulse"]), "input") == names["pulse"]
    assert resolve_device(None, "output") is None  # the system default
    with pytest.raises(AudioUnavailable, match="no output device matches 'nonesuch'"):
        resolve_device("nonesuch", "output")
    with pytest.raises(AudioUnavailable, match="no input device with index 999"):
        resolve_device(999, "input")


def test_what_is_played_comes_back_on_the_monitor(audio_io: AudioIO, espeak: EspeakTts) -> None:
    player, recorder, _tap = audio_io
    speech = espeak.synthesize("Thanks for holding.").audio
    player.play(speech)
    assert player.wait_idle(10)
    time.sleep(0.3)
    monitor = recorded(recorder)
    _offset, score = locate(monitor, speech)
    assert score > 0.95, score


def test_a_backchannel_is_mixed_in_at_the_agents_pause(
    audio_io: AudioIO, espeak: EspeakTts
) -> None:
    from sessions.speech.live import PlaybackPauses

    player, recorder, tap = audio_io
    agent = espeak.synthesize_ssml(AGENT_SSML)
    token = trim_silence(espeak.synthesize("mm-hmm").audio) * 0.7
    (pause_onset, pause_end), *_ = inner_silences(agent, min_s=0.6)
    fired: list[PauseEvent] = []

    def on_event(ev: PauseEvent) -> None:
        if ev.kind is PauseEventKind.SHORT_PAUSE and not fired:
            player.mix(token, "mm-hmm")
            fired.append(ev)

    pauses = PlaybackPauses(tap, on_event, vad=SileroOnnxVad()).start()
    try:
        player.play(agent)
        assert player.wait_idle(20)
        time.sleep(0.3)
    finally:
        pauses.stop()
    assert pauses.error is None
    assert fired, [e.as_dict() for e in pauses.events]
    monitor = recorded(recorder)
    # Where the agent's audio around the pause sits in the recording (aligned locally, so
    # a dropout elsewhere in the recording does not matter).
    a = round((pause_onset - 1.0) * SAMPLE_RATE)
    b = round((pause_end + 0.6) * SAMPLE_RATE)
    segment = agent[a:b]
    seg_at, seg_score = locate(monitor, segment[:SAMPLE_RATE])
    assert seg_score > 0.95, seg_score
    # The monitor is agent + token; take the agent away and find the token in what is left.
    residual = monitor[seg_at : seg_at + segment.size] - segment
    token_at, token_score = locate(residual, token)
    assert token_score > 0.95, token_score
    onset = pause_onset - a / SAMPLE_RATE
    resume = pause_end - a / SAMPLE_RATE
    token_onset = token_at / SAMPLE_RATE
    # The token starts in the agent's pause: after the 200 ms short pause, before it resumes.
    assert onset + 0.2 <= token_onset < resume, (onset, token_onset, resume)
    print(f"silence onset -> token onset: {(token_onset - onset) * 1000:.0f} ms")


def test_stop_cuts_the_agent_at_once_and_reports_the_position(
    audio_io: AudioIO, espeak: EspeakTts
) -> None:
    player, recorder, _tap = audio_io
    agent = espeak.synthesize(
        "Let me read the whole policy to you, it is quite long and it goes on and on for a while."
    ).audio
    player.play(agent)
    time.sleep(1.2)
    position = player.stop()
    assert not player.playing
    time.sleep(0.5)
    monitor = recorded(recorder)
    agent_at, score = locate(monitor, agent[: SAMPLE_RATE // 2])
    assert score > 0.95
    assert 1.0 < position < 1.6
    cut_in_monitor = agent_at / SAMPLE_RATE + position
    after = monitor[round((cut_in_monitor + 0.01) * SAMPLE_RATE) :]
    before = monitor[round(agent_at) : round((cut_in_monitor - 0.01) * SAMPLE_RATE)]
    # Everything up to the reported position was played; nothing after it.
    assert np.abs(after).max() < 1e-3
    expected = agent[: before.size]
    assert np.corrcoef(before, expected)[0, 1] > 0.95


def test_mic_capture_of_played_speech_reaches_stt(
    audio_io: AudioIO, espeak: EspeakTts, transcriber: Transcriber
) -> None:
    player, recorder, _tap = audio_io
    player.play(espeak.synthesize("Please change my delivery address to Maple Avenue.").audio)
    assert player.wait_idle(10)
    time.sleep(0.3)
    monitor = recorded(recorder)
    assert silences(monitor, min_s=0.05), "expected silence around the speech"
    text = transcriber.transcribe(monitor).text.lower()
    assert "delivery" in text and "address" in text and "avenue" in text, text


def test_a_missing_device_is_a_clear_error(pulse_server: PulseServer) -> None:
    from sessions.speech.devices import AudioUnavailable

    with pytest.raises(AudioUnavailable, match="cannot open device 4242 for playback"):
        Player(device=4242).start()


def test_device_options_resolve_for_a_voice_command(pulse_server: PulseServer) -> None:
    import argparse

    from cutin_tui.cli import CliError
    from cutin_tui.cli.devices_cmd import add_device_options, resolve_devices
    from sessions.speech.devices import list_devices

    parser = argparse.ArgumentParser()
    add_device_options(parser)
    pulse = next(d.index for d in list_devices() if d.name == "pulse")
    assert resolve_devices(parser.parse_args([])) == (None, None)
    args = parser.parse_args(["--input-device", "pulse", "--output-device", str(pulse)])
    assert resolve_devices(args) == (pulse, pulse)
    with pytest.raises(CliError, match="no output device matches"):
        resolve_devices(parser.parse_args(["--output-device", "nonesuch"]))


def test_heard_at_maps_stream_samples_to_the_monotonic_clock(audio_io: AudioIO) -> None:
    player, _recorder, _tap = audio_io
    now = time.monotonic()
    rendered = player.mixer.rendered_samples
    estimate = player.heard_at(rendered)
    assert estimate is not None
    # What is being rendered now is heard within a few blocks plus the device latency.
    assert now - 0.05 <= estimate <= now + player.output_latency_s + 0.1
    later = player.heard_at(rendered + SAMPLE_RATE)
    assert later is not None and later - estimate == pytest.approx(1.0)
