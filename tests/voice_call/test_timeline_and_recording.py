"""The call timeline (placing, cutting, rendering, taking), the incremental 2-channel WAV,
and cutting streamed text into sentences for synthesis. No device, no models."""

from __future__ import annotations

import os
import signal
import sys
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from sessions.call.timeline import AGENT, CALLER, CallTimeline
from sessions.call.voice.recording import CallRecording, recording_path
from sessions.call.voice.speech_text import clause_pieces, pieces_to_espeak_ssml, split_sentences
from sessions.speech.timing import Pause
from tests.support.process import ChildProcess
from tests.voice_call.helpers import read_two_channels


def ones(n: int, value: float = 0.5) -> np.ndarray:
    return np.full(n, value, dtype=np.float32)


def test_clips_mix_per_channel_and_a_cut_shortens_them() -> None:
    tl = CallTimeline()
    a = tl.place(AGENT, 100, ones(100))
    tl.place(CALLER, 150, ones(100, 0.25))
    tl.place(CALLER, 180, ones(10, 0.25))  # overlaps: summed
    assert tl.cut([a], 160) == 160
    agent, caller = tl.take(300)
    assert agent.size == caller.size == 300
    assert agent[:100].max() == 0 and agent[100:160].min() == 0.5 and agent[160:].max() == 0
    assert caller[150:180].min() == 0.25 and caller[180:190].min() == 0.5
    assert caller[190:250].min() == 0.25 and caller[250:].max() == 0
    more, _ = tl.take(350)
    assert more.size == 50 and tl.written == 350


def test_with_a_device_a_cut_happens_where_it_has_rendered() -> None:
    tl = CallTimeline()
    clip = tl.place(AGENT, 0, ones(1000))
    tl.device = True
    out = tl.render(0, 256)
    assert out.min() == 0.5 and tl.rendered == 256
    # The loop asks to stop at 600 (it runs ahead): the audio ends now, at 256.
    assert tl.cut([clip], 600) == 256
    assert tl.render(256, 256).max() == 0.0


def test_render_plays_only_audible_clips_and_clips_loud_sums() -> None:
    tl = CallTimeline()
    tl.place(AGENT, 0, ones(100, 0.8))
    tl.place(CALLER, 0, ones(100, 0.8))
    tl.place(CALLER, 0, ones(100, 0.3), audible=False)  # the tester's own microphone
    assert tl.render(0, 100).max() == pytest.approx(1.0)
    tl2 = CallTimeline()
    tl2.place(CALLER, 0, ones(100, 0.3), audible=False)
    assert tl2.render(0, 100).max() == 0.0
    assert tl2.take(100)[1].max() == pytest.approx(0.3)


def test_the_recording_is_two_channels_and_readable_at_every_moment(tmp_path: Path) -> None:
    path = recording_path(tmp_path / "20250101-120000-demo-ab12cd.jsonl")
    assert path.name == "20250101-120000-demo-ab12cd.wav"
    rec = CallRecording(path)
    with wave.open(str(path)) as w:  # the header is there before any audio
        assert (w.getnchannels(), w.getnframes()) == (2, 0)
    rec.push(ones(16000, 0.5), np.zeros(16000, np.float32))
    rec.push(np.zeros(8000, np.float32), ones(8000, -0.5))
    deadline = time.monotonic() + 5
    while rec.frames < 24000 and time.monotonic() < deadline:
        time.sleep(0.01)
    # Not closed yet: the header already counts what was written.
    agent, caller = read_two_channels(path)
    assert agent.size == 24000
    assert agent[:16000].min() == pytest.approx(0.5, abs=1e-4) and agent[16000:].max() == 0
    assert caller[16000:].max() == pytest.approx(-0.5, abs=1e-4)
    rec.close()
    rec.close()
    assert read_two_channels(path)[0].size == 24000


def test_a_killed_call_leaves_a_valid_wav(tmp_path: Path, child_env: dict[str, str]) -> None:
    path = tmp_path / "killed.wav"
    script = (
        "import sys, time, numpy as np\n"
        "from sessions.call.voice.recording import CallRecording\n"
        "rec = CallRecording(__import__('pathlib').Path(sys.argv[1]))\n"
        "for _ in range(3):\n"
        "    rec.push(np.full(4000, 0.25, np.float32), np.zeros(4000, np.float32))\n"
        "while rec.frames < 12000: time.sleep(0.01)\n"
        "print('written', flush=True)\n"
        "time.sleep(60)\n"
    )
    argv = [sys.executable, "-c", script, str(path)]
    with ChildProcess(argv, name="the recording child", env=child_env) as child:
        child.wait_ready("written", timeout=60)
        os.kill(child.pid, signal.SIGKILL)
        assert child.process.wait(timeout=10) == -signal.SIGKILL
    agent, _caller = read_two_channels(path)
    assert agent.size == 12000 and agent.min() == pytest.approx(0.25, abs=1e-4)


def test_replay_reads_the_recording_as_mono(tmp_path: Path) -> None:
    from sessions.speech.wav import read_wav

    path = tmp_path / "call.wav"
    rec = CallRecording(path)
    rec.push(ones(1600, 0.4), ones(1600, 0.2))
    rec.close()
    mono = read_wav(path)
    assert mono.size == 1600 and mono.mean() == pytest.approx(0.3, abs=1e-3)


@pytest.mark.parametrize(
    ("stream", "final", "sentences", "rest"),
    [
        ("Hello there. How are", False, ["Hello there."], "How are"),
        ("Hello there.", False, [], "Hello there."),  # "there." may still grow
        ("Hello there. ", False, ["Hello there."], ""),
        ("Is it? Yes! Fine", True, ["Is it?", "Yes!", "Fine"], ""),
        ('He said "stop." Then', False, ['He said "stop."'], "Then"),
        ("", True, [], ""),
    ],
)
def test_streamed_text_is_cut_into_sentences(
    stream: str, final: bool, sentences: list[str], rest: str
) -> None:
    assert split_sentences(stream, final=final) == (sentences, rest)


def test_a_run_on_sentence_is_cut_at_its_last_comma() -> None:
    text = " ".join(["word"] * 30) + ", " + " ".join(["more"] * 15) + " "
    sentences, rest = split_sentences(text)
    assert len(sentences) == 1 and sentences[0].endswith("word,")
    assert rest.split() == ["more"] * 15


def test_espeak_gets_short_breaks_at_commas_and_pauses_for_pause_tokens() -> None:
    pieces = clause_pieces("Well, um, the address — it is 12 Elm Street.")
    assert pieces == [
        "Well,",
        Pause(0.08),
        "um,",
        Pause(0.08),
        "the",
        "address",
        Pause(0.3),
        "it",
        "is",
        "12",
        "Elm",
        "Street.",
    ]
    ssml = pieces_to_espeak_ssml(pieces)
    assert ssml == (
        '<speak>Well <break time="80ms"/> um <break time="80ms"/> the address '
        '<break time="300ms"/> it is 12 Elm Street.</speak>'
    )
    assert pieces_to_espeak_ssml(["a", "<b>&"]) == "<speak>a &lt;b&gt;&amp;</speak>"


def test_lost_stream_time_is_told_from_a_late_burst() -> None:
    from sessions.call.voice.audio_out import LatenessWatch

    block = 0.032
    watch = LatenessWatch(window_s=0.5, threshold_s=0.03)
    # On time, with jitter: nothing to skip.
    assert all(watch.update(i * block, (i % 3) * 0.01) == 0.0 for i in range(40))
    # A stall delivered as a burst: late blocks, then on time again -- no time was lost.
    burst = [0.2 - 0.032 * k for k in range(7)] + [0.0] * 30
    assert all(watch.update((40 + i) * block, late) == 0.0 for i, late in enumerate(burst))
    # From here every block is 0.25 s late (time was lost); once the skip is applied the
    # stream is on time again, so it is found exactly once.
    skipped = 0.0
    skips = []
    for i in range(60):
        skip = watch.update((80 + i) * block, 0.25 + (i % 2) * 0.01 - skipped)
        skipped += skip
        skips.append(skip)
    assert [s for s in skips if s] == [pytest.approx(0.25)]


def test_the_replay_plays_both_sides_at_their_recorded_level(tmp_path: Path) -> None:
    from cutin_tui.screens.replay_audio import RecordingClip, clip_audio

    path = tmp_path / "call.wav"
    rec = CallRecording(path)
    rec.push(
        np.concatenate([ones(16000, 0.4), np.zeros(16000, np.float32)]),
        np.concatenate([np.zeros(16000, np.float32), ones(16000, 0.2)]),
    )
    rec.close()
    audio = clip_audio(RecordingClip(path, 0.5, 1.5))
    assert audio.size == 16000
    assert audio[:8000].mean() == pytest.approx(0.4, abs=1e-3)  # the agent, not halved
    assert audio[8000:].mean() == pytest.approx(0.2, abs=1e-3)  # the caller
