"""Without PortAudio: ``import sounddevice`` raises OSError. The CLI says what to install,
and everything that needs no device (VAD on files, typed mode) keeps working.

A child interpreter gets a ``sounddevice`` module first on its path that fails the way
the real one does when libportaudio2 is missing (``OSError: PortAudio library not found``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions.speech.tts import EspeakTts
from sessions.speech.wav import write_wav
from tests.support.cli import run_cutin, run_python

FAILING_IMPORT = 'raise OSError("PortAudio library not found")\n'


@pytest.fixture
def no_portaudio_env(child_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sounddevice.py").write_text(FAILING_IMPORT)
    return {**child_env, "PYTHONPATH": f"{shim}:{child_env['PYTHONPATH']}"}


def test_devices_says_portaudio_is_missing_and_how_to_install_it(
    no_portaudio_env: dict[str, str],
) -> None:
    proc = run_cutin("devices", env=no_portaudio_env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "PortAudio not found" in lines[0]
    assert "apt-get install libportaudio2" in lines[0]
    assert "typed mode still works" in lines[0]


def test_player_and_device_helpers_raise_audio_unavailable(
    no_portaudio_env: dict[str, str],
) -> None:
    script = (
        "from sessions.speech.audio import Player, MicRecorder\n"
        "from sessions.speech.devices import AudioUnavailable, list_devices\n"
        "for make in (lambda: Player().start(), lambda: MicRecorder().start(), list_devices):\n"
        "    try:\n"
        "        make()\n"
        "    except AudioUnavailable as exc:\n"
        "        print(exc)\n"
    )
    proc = run_python("-c", script, env=no_portaudio_env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3 and all("libportaudio2" in line for line in lines)


def test_vad_on_a_file_needs_no_audio_device(
    no_portaudio_env: dict[str, str], espeak: EspeakTts, tmp_path: Path
) -> None:
    path = write_wav(tmp_path / "a.wav", espeak.synthesize("Hello there, how are you?").audio)
    proc = run_cutin("vad", str(path), "--json", env=no_portaudio_env)
    assert proc.returncode == 0, proc.stderr
    assert '"speech_start"' in proc.stdout
