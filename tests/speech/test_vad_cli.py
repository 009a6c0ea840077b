"""`cutin vad` run as a real program on WAV files written by espeak-ng and sox-like writers."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest

from sessions.speech import SAMPLE_RATE
from sessions.speech.tts import EspeakTts
from sessions.speech.vad import detect_pauses
from sessions.speech.wav import float_to_pcm16, read_wav, resample, write_wav
from tests.support.cli import run_cutin

SSML = (
    '<speak>I have your order open. <break time="400ms"/> The address is on file. '
    '<break time="800ms"/> It ships tomorrow.</speak>'
)


@pytest.fixture(scope="module")
def recording(espeak: EspeakTts, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_wav(tmp_path_factory.mktemp("vad") / "agent.wav", espeak.synthesize_ssml(SSML))


def test_json_lines_are_the_pause_events_of_the_file(
    recording: Path, child_env: dict[str, str]
) -> None:
    proc = run_cutin("vad", str(recording), "--json", env=child_env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    expected = [e.as_dict() for e in detect_pauses(read_wav(recording)).events]
    assert lines == expected
    types = [line["type"] for line in lines]
    assert types[0] == "speech_start"
    assert types.count("short_pause") >= 2 and "turn_end" in types
    for line in lines:
        assert isinstance(line["t"], float | int)
        if line["type"] in ("short_pause", "turn_end"):
            assert line["silence_start"] < line["t"]


def test_text_output_names_each_event(recording: Path, child_env: dict[str, str]) -> None:
    proc = run_cutin("vad", str(recording), env=child_env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert "frames of 32 ms" in out[0] and "vad onnx" in out[0]
    assert any("short_pause" in line and "silence from" in line for line in out[1:])
    assert any("turn_end" in line for line in out[1:])


def test_options_change_the_detector(recording: Path, child_env: dict[str, str]) -> None:
    proc = run_cutin(
        "vad", str(recording), "--json", "--pause-ms", "600", "--turn-end-ms", "1000", env=child_env
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    short = [line for line in lines if line["type"] == "short_pause"]
    # Only the 800 ms break (and the file's tail) reach 600 ms; no 1 s turn end inside.
    assert 1 <= len(short) <= 2
    assert all(line["t"] - line["silence_start"] >= 0.6 for line in short)


def test_stereo_44k_file_is_resampled_and_mixed_down(
    recording: Path, tmp_path: Path, child_env: dict[str, str]
) -> None:
    mono = read_wav(recording)
    left = resample(mono, SAMPLE_RATE, 44_100)
    stereo = np.stack([left, left * 0.5], axis=1)
    path = tmp_path / "stereo44.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44_100)
        w.writeframes(float_to_pcm16(stereo.reshape(-1)))
    proc = run_cutin("vad", str(path), "--json", env=child_env)
    assert proc.returncode == 0, proc.stderr
    got = [json.loads(line) for line in proc.stdout.splitlines()]
    want = [e.as_dict() for e in detect_pauses(mono).events]
    assert [g["type"] for g in got] == [x["type"] for x in want]
    for g, x in zip(got, want, strict=True):
        assert abs(g["t"] - float(str(x["t"]))) <= 0.033


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty or cut short"),
        (b"this is not audio at all", "not a readable WAV"),
        (b"RIFF\x10\x00\x00\x00WAVEjunk", "not a readable WAV"),
    ],
)
def test_a_bad_file_is_one_line_and_exit_2(
    content: bytes, message: str, tmp_path: Path, child_env: dict[str, str]
) -> None:
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    proc = run_cutin("vad", str(path), env=child_env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cutin: ") and message in lines[0]


def test_a_missing_file_is_one_line(tmp_path: Path, child_env: dict[str, str]) -> None:
    proc = run_cutin("vad", str(tmp_path / "none.wav"), env=child_env)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"cutin: {tmp_path / 'none.wav'}: no such file"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--speech-threshold", "0.3", "--silence-threshold", "0.4"], "must not exceed"),
        (["--pause-ms", "600", "--turn-end-ms", "500"], "shorter than"),
        (["--speech-threshold", "1.5"], "between 0 and 1"),
        (["--pause-ms", "-3"], "positive"),
        (["--vad", "webrtc"], "invalid choice"),
    ],
)
def test_bad_options_are_one_line_usage_errors(
    args: list[str], message: str, recording: Path, child_env: dict[str, str]
) -> None:
    proc = run_cutin("vad", str(recording), *args, env=child_env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_torch_backend_without_the_extra_says_how_to_install_it(
    recording: Path, child_env: dict[str, str]
) -> None:
    import importlib.util

    if importlib.util.find_spec("silero_vad") is not None:
        pytest.skip("the silero extra is installed here")
    proc = run_cutin("vad", str(recording), "--vad", "silero-torch", env=child_env)
    assert proc.returncode == 2
    assert "pip install 'cutin[silero]'" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
