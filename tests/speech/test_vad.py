"""Silero VAD (onnx) + pause detector on real espeak-ng speech with exact SSML pauses."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from controls import PauseEvent, PauseEventKind
from sessions.speech import FRAME_S, SAMPLE_RATE
from sessions.speech.tts import EspeakTts
from sessions.speech.vad import (
    PauseSettings,
    SileroOnnxVad,
    StreamingPauses,
    StreamingVad,
    VadError,
    VadFrame,
    detect_pauses,
    load_vad,
    silero_model_path,
    talk_over_from_audio,
    talk_over_seconds,
    vad_frames,
    vad_probs,
)
from tests.speech.signals import inner_silences, silences

PHRASES = (
    "I have your order open and I can see the address",
    "we have on file from last year",
    "which is the one on Elm Street",
    "let me check that for you now",
    "the delivery window is tomorrow morning",
)

# The pause fires at a frame boundary once silence reaches 200 ms: after 7 frames (224 ms)
# counted from the first 32-ms frame the VAD calls silent, and Silero calls a frame silent
# only from the first frame wholly after the sound (often one frame later). So the event is
# later than onset + 200 ms by the 24 ms timer rounding plus up to two frames.
EARLY_S = 0.040
TIMER_ROUNDING_S = math.ceil(0.2 / FRAME_S - 1e-9) * FRAME_S - 0.2
LATE_S = 0.040 + TIMER_ROUNDING_S + FRAME_S


def with_breaks(ms: int) -> str:
    return "<speak>" + f' <break time="{ms}ms"/> '.join(PHRASES) + "</speak>"


@pytest.fixture(scope="module")
def speech_by_break(espeak: EspeakTts) -> dict[int, np.ndarray]:
    return {ms: espeak.synthesize_ssml(with_breaks(ms)) for ms in (150, 300, 450, 700)}


def kinds(events: list[PauseEvent], kind: PauseEventKind) -> list[PauseEvent]:
    return [e for e in events if e.kind is kind]


def test_model_file_is_the_one_faster_whisper_ships() -> None:
    path = silero_model_path()
    assert path.name == "silero_vad_v6.onnx"
    assert path.parent.name == "assets" and path.parent.parent.name == "faster_whisper"


@pytest.mark.parametrize("ms", [300, 450])
def test_pauses_of_300ms_or_more_fire_a_short_pause_200ms_after_the_silence_onset(
    ms: int, speech_by_break: dict[int, np.ndarray], onnx_vad: SileroOnnxVad
) -> None:
    audio = speech_by_break[ms]
    gaps = inner_silences(audio, min_s=ms / 1000 - 0.05)
    assert len(gaps) == len(PHRASES) - 1, gaps
    events = detect_pauses(audio, onnx_vad).events
    short = kinds(events, PauseEventKind.SHORT_PAUSE)
    for onset, end in gaps:
        fired = [e for e in short if onset < e.t <= end + FRAME_S]
        assert len(fired) == 1, (onset, end, [e.as_dict() for e in short])
        error = fired[0].t - (onset + 0.200)
        assert -EARLY_S <= error <= LATE_S, f"pause at {onset:.3f} s fired {error * 1000:+.0f} ms"
        assert fired[0].silence_start is not None
        assert onset - EARLY_S <= fired[0].silence_start <= onset + 2 * FRAME_S


def test_pauses_of_150ms_fire_no_short_pause(
    speech_by_break: dict[int, np.ndarray], onnx_vad: SileroOnnxVad
) -> None:
    audio = speech_by_break[150]
    gaps = inner_silences(audio, min_s=0.12)
    assert len(gaps) >= len(PHRASES) - 1  # the breaks are really there
    last_sound = silences(audio, min_s=0.05)[-1][0]
    short = kinds(detect_pauses(audio, onnx_vad).events, PauseEventKind.SHORT_PAUSE)
    # Only the silence after the last word may fire.
    assert all(e.t > last_sound for e in short), [e.as_dict() for e in short]


def test_a_silence_of_600ms_or_more_is_a_turn_end_grown_from_its_short_pause(
    speech_by_break: dict[int, np.ndarray], onnx_vad: SileroOnnxVad
) -> None:
    audio = speech_by_break[700]
    gaps = inner_silences(audio, min_s=0.6)
    assert len(gaps) == len(PHRASES) - 1
    events = detect_pauses(audio, onnx_vad).events
    ends = kinds(events, PauseEventKind.TURN_END)
    starts = kinds(events, PauseEventKind.SPEECH_START)
    short = kinds(events, PauseEventKind.SHORT_PAUSE)
    for onset, end in gaps:
        fired = [e for e in ends if onset < e.t <= end + FRAME_S]
        assert len(fired) == 1
        turn_end = fired[0]
        assert turn_end.silence_start is not None
        assert turn_end.t == pytest.approx(turn_end.silence_start + 16 * FRAME_S)
        grown_from = [s for s in short if s.index == turn_end.short_pause_index]
        assert grown_from and grown_from[0].silence_start == turn_end.silence_start
        # After a turn end the next phrase is a new speech start.
        assert any(end - FRAME_S <= s.t <= end + 3 * FRAME_S for s in starts)


def test_streaming_in_any_chunk_sizes_equals_the_whole_file_exactly(
    speech_by_break: dict[int, np.ndarray],
) -> None:
    audio = speech_by_break[300]
    whole = detect_pauses(audio, SileroOnnxVad())
    rng = np.random.default_rng(7)
    for sizes in ([512], [1], [160, 320, 7], [4000], list(rng.integers(1, 3000, size=50))):
        stream = StreamingPauses(SileroOnnxVad(), keep_frames=True)
        events = []
        pos, k = 0, 0
        while pos < audio.size:
            n = int(sizes[k % len(sizes)])
            events += stream.push(audio[pos : pos + n])
            pos += n
            k += 1
        events += stream.flush()
        assert stream.frames == whole.frames  # identical probabilities, bit for bit
        assert [e.as_dict() for e in events] == [e.as_dict() for e in whole.events]


def test_streaming_frames_carry_the_stream_clock(
    speech_by_break: dict[int, np.ndarray],
) -> None:
    audio = speech_by_break[300][: 40 * 512 + 100]
    sv = StreamingVad(SileroOnnxVad(), t0=12.5)
    frames = sv.push(audio) + sv.flush()
    assert len(frames) == 41
    assert frames[0].t == 12.5 and frames[-1].t == pytest.approx(12.5 + 40 * FRAME_S)
    assert [f.prob for f in frames] == [f.prob for f in vad_frames(audio, SileroOnnxVad())]


def test_silence_and_noise_are_not_speech(onnx_vad: SileroOnnxVad) -> None:
    rng = np.random.default_rng(1)
    quiet = np.zeros(SAMPLE_RATE * 2, dtype=np.float32)
    hiss = (rng.standard_normal(SAMPLE_RATE * 2) * 0.003).astype(np.float32)
    for audio in (quiet, hiss):
        probs = vad_probs(audio, onnx_vad)
        assert probs.size == 2 * SAMPLE_RATE // 512 + 1
        assert probs.max() < 0.35
        assert detect_pauses(audio, onnx_vad).events == []


def test_pause_settings_change_what_fires(
    speech_by_break: dict[int, np.ndarray], onnx_vad: SileroOnnxVad
) -> None:
    audio = speech_by_break[300]
    default = kinds(detect_pauses(audio, onnx_vad).events, PauseEventKind.SHORT_PAUSE)
    patient = PauseSettings(pause_ms=400, turn_end_ms=800)
    fewer = kinds(detect_pauses(audio, onnx_vad, patient).events, PauseEventKind.SHORT_PAUSE)
    assert len(default) >= len(PHRASES) - 1
    assert len(fewer) <= 1  # only the file's tail silence is long enough


def test_torch_backend_is_optional_with_a_clear_message(
    speech_by_break: dict[int, np.ndarray],
) -> None:
    if importlib.util.find_spec("silero_vad") is None:
        with pytest.raises(VadError, match=r"pip install 'cutin\[silero\]'"):
            load_vad("silero-torch")
    else:  # only where the extra is installed: same pauses, within a frame
        audio = speech_by_break[300]
        torch_events = detect_pauses(audio, load_vad("silero-torch")).events
        onnx_events = detect_pauses(audio, SileroOnnxVad()).events
        assert [e.kind for e in torch_events] == [e.kind for e in onnx_events]
        for a, b in zip(torch_events, onnx_events, strict=True):
            assert abs(a.t - b.t) <= 2 * FRAME_S + 1e-6
    with pytest.raises(VadError, match="unknown VAD backend"):
        load_vad("webrtc")


def test_talk_over_counts_agent_speech_after_the_cut() -> None:
    frames = [VadFrame(i * FRAME_S, p) for i, p in enumerate([0.9] * 20 + [0.1] * 10 + [0.8] * 5)]
    # Speech is frames 0-19 (0.64 s) and 30-34; cut at 0.5 s leaves 0.14 s + 0.16 s.
    assert talk_over_seconds(frames, 0.5) == pytest.approx(0.14 + 5 * FRAME_S)
    assert talk_over_seconds(frames, 2.0) == 0.0
    # Hysteresis carries over the cut: 0.4 keeps speech going (>= 0.35), but cannot start it.
    held = [VadFrame(i * FRAME_S, p) for i, p in enumerate([0.9, 0.4, 0.4, 0.2, 0.4])]
    assert talk_over_seconds(held, FRAME_S) == pytest.approx(2 * FRAME_S)


def test_talk_over_from_agent_audio_measures_the_speech_left(
    espeak: EspeakTts, onnx_vad: SileroOnnxVad
) -> None:
    audio = espeak.synthesize_ssml("<speak>Your refund will arrive in five business days.</speak>")
    sound = silences(audio, min_s=0.05)
    speech_end = sound[-1][0] if sound else audio.size / SAMPLE_RATE
    t0 = 3.0
    cut = t0 + 0.8
    measured = talk_over_from_audio(audio, cut, t0=t0, vad=onnx_vad)
    assert measured == pytest.approx(t0 + speech_end - cut, abs=0.1)
    assert talk_over_from_audio(audio, t0 + speech_end + 0.3, t0=t0, vad=onnx_vad) == 0.0
