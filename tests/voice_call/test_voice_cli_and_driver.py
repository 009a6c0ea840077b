"""`cutin simulate --speech espeak`, `cutin call`'s voice options and their one-line
errors, and the call driver of a voice call on the virtual clock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controls import Tendencies
from cutin_tui.calls.call_driver import VirtualDriver
from cutin_tui.calls.call_setup import open_call
from cutin_tui.cli import main
from sessions.call.commands import SubmitText
from sessions.log import read_session
from sessions.plan import CallPlan
from tests.support.cli import run_cutin
from tests.support.openai_server import OpenAIServer, Speech
from tests.voice_call.helpers import make_scenario, read_two_channels, rms, run_voice_call


@pytest.mark.usefixtures("espeak_ok")
def test_simulate_speaks_each_call_and_keeps_its_audio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cutin_tui.screens.replay_audio import turn_clip
    from replay.load import load_log
    from sessions.speech.wav import read_wav

    out = tmp_path / "batch"
    argv = ["simulate", "--scenario", "retail-order-change", "--speech", "espeak"]
    argv += ["--gamma", "1", "--beta", "0.5", "--max-seconds", "90", "--out", str(out), "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ran"] == 1
    (log,) = sorted(out.glob("*.jsonl"))
    wav = log.with_suffix(".wav")
    assert wav.is_file() and not list(out.glob("*.part"))
    session = read_session(log)
    assert (session.header.speech.tts, session.header.speech.vad) == ("espeak", "onnx")
    agent, caller = read_two_channels(wav)
    assert agent.size / 16000 >= session.events[-1].t
    # Both sides are in it, and the replay finds it beside the log.
    trial = load_log(log)
    user = next(t for t in trial.turns if t.speaker == "user")
    clip = turn_clip(trial, user)
    assert not isinstance(clip, str) and clip.path == wav
    assert user.start is not None and user.end is not None
    assert rms(caller, user.start, user.end) > 0.01
    assert read_wav(wav).size == agent.size  # mono for the replay's player
    # The same command resumes (nothing to do); the text clock may not mix in.
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == 1
    text = [a if a != "espeak" else "text" for a in argv]
    assert main(text) == 2
    assert "speech: 'espeak' in the log, 'text' planned" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "mic"], "--input mic needs audio out: add --speech espeak"),
        (["--speech", "espeak", "--push-to-talk"], "--push-to-talk needs --input mic"),
        (["--stt", "tiny.en"], "--stt needs --input mic"),
        (
            ["--speech", "espeak", "--input", "mic", "--stt", "/no/such/model"],
            "--stt: speech-to-text model folder /no/such/model does not exist",
        ),
    ],
)
def test_voice_options_that_cannot_work_are_one_line_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["call", "--sessions-dir", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_missing_espeak_names_the_package(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no espeak-ng on it
    assert main(["call", "--speech", "espeak", "--sessions-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "cutin: --speech espeak needs espeak-ng: apt-get install espeak-ng "
        "(--speech text --input type works without any of it)"
    )


@pytest.mark.usefixtures("espeak_ok")
def test_missing_portaudio_is_one_line_and_typed_mode_is_named(
    child_env: dict[str, str], tmp_path: Path
) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sounddevice.py").write_text('raise OSError("PortAudio library not found")\n')
    env = {**child_env, "PYTHONPATH": f"{shim}:{child_env['PYTHONPATH']}"}
    proc = run_cutin("call", "--speech", "espeak", "--sessions-dir", str(tmp_path), env=env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "apt-get install libportaudio2" in lines[0], proc.stderr
    assert "typed mode" in lines[0]
    assert not list(tmp_path.glob("*.jsonl"))  # nothing was started


@pytest.mark.usefixtures("espeak_ok")
def test_a_virtual_voice_call_through_the_driver(tmp_path: Path) -> None:
    plan = CallPlan(
        scenario="retail-order-change",
        tendencies=Tendencies(0.5, 0.0, 1.0),
        sessions_dir=tmp_path,
        speech="espeak",
        virtual=True,
    )
    driver = open_call(plan)
    assert isinstance(driver, VirtualDriver) and not driver.push_to_talk
    with pytest.raises(RuntimeError, match="push-to-talk needs"):
        driver.toggle_talk()
    driver.start()
    driver.advance(17.0)
    driver.submit(SubmitText("Hi, yes, the order number is 48213."))
    driver.advance(45.0)
    driver.stop()
    log = driver.log_path
    assert log is not None and driver.recording_path == log.with_suffix(".wav")
    session = read_session(log)
    speech = session.header.speech
    assert (speech.tts, speech.input, speech.vad, speech.stt) == ("espeak", "type", "onnx", None)
    kinds = {e.type for e in session.events}
    assert {"agent_turn_start", "short_pause", "user_turn", "backchannel", "end"} <= kinds
    agent, caller = read_two_channels(driver.recording_path)
    assert agent.size / 16000 == pytest.approx(45.0, abs=1.0)
    user = next(e for e in session.events if e.type == "user_turn")
    assert rms(caller, user.t, user.end_t) > 0.01  # type: ignore[attr-defined]


def test_the_typed_call_is_unchanged(tmp_path: Path) -> None:
    driver = open_call(CallPlan(sessions_dir=tmp_path, virtual=True))
    driver.start()
    driver.advance(5.0)
    driver.stop()
    assert driver.recording_path is None
    assert driver.log_path is not None and not driver.log_path.with_suffix(".wav").exists()
    header = read_session(driver.log_path).header
    assert (header.speech.tts, header.speech.input, header.speech.vad) == ("text", "type", None)


def test_openai_speech_over_http_and_audio_the_vad_never_takes_for_speech(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loopback server answers every speech request with a 440 Hz tone: real HTTP
    # through the openai client, and audio in which Silero finds no speech at all.
    monkeypatch.setenv("CUTIN_CACHE_DIR", str(tmp_path / "cache"))
    openai_server.default_speech = Speech(seconds=1.2, frequency_hz=440.0, amplitude=0.3)
    sc = make_scenario("Hello there. How can I help?", "Sure, one moment.")
    call = run_voice_call(sc, tmp_path / "call", speech="openai", base_url=openai_server.base_url)
    bodies = [r.body for r in openai_server.speech_requests()]
    voices = [(b["voice"], b["input"]) for b in bodies]
    assert {v for v, _ in voices} == {"alloy", "nova"}
    assert [i for v, i in voices if v == "alloy"][:2] == ["Hello there.", "How can I help?"]
    assert sum(v == "nova" for v, _ in voices) >= 5  # the backchannel tokens, cached once
    # No speech start, no pauses -- yet the turns end once their audio has played.
    assert not call.of("speech_start") and not call.of("short_pause")
    ends = call.of("agent_turn_end")
    assert [e.turn for e in ends] == [0, 1] and not any(e.interrupted for e in ends)
    assert call.loop.end_reason == "user_hangup"
    agent, caller = call.recording()
    start = call.of("agent_turn_start")[0]
    assert rms(agent, start.t, start.t + 1.0) > 0.1  # the tone, on the agent channel
    user = call.of("user_turn")[0]
    assert rms(caller, user.t, user.t + 1.0) > 0.1
