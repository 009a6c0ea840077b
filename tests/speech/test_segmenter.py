"""Hands-free (VAD-segmented) and push-to-talk utterances, fed to real STT."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sessions.speech import SAMPLE_RATE
from sessions.speech.segmenter import PushToTalk, UtteranceSegmenter
from sessions.speech.stt import Transcriber
from sessions.speech.tts import EspeakTts
from sessions.speech.vad import SileroOnnxVad
from tests.speech.signals import silences


def silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * SAMPLE_RATE), dtype=np.float32)


@pytest.fixture(scope="module")
def two_utterances(espeak: EspeakTts) -> tuple[np.ndarray, list[float]]:
    """1 s silence, utterance, 1.2 s silence, utterance, 1 s silence; and the sound onsets."""
    first = espeak.synthesize("I need to change my delivery address.").audio
    second = espeak.synthesize("The new one is on Maple Avenue.").audio
    parts = [silence(1.0), first, silence(1.2), second, silence(1.0)]
    audio = np.concatenate(parts)
    onsets = [1.0, (parts[0].size + first.size + parts[2].size) / SAMPLE_RATE]
    return audio, onsets


def test_hands_free_cuts_one_utterance_per_turn(
    two_utterances: tuple[np.ndarray, list[float]], transcriber: Transcriber
) -> None:
    audio, onsets = two_utterances
    seg = UtteranceSegmenter(SileroOnnxVad(), t0=100.0)
    utterances = []
    for block in np.array_split(audio, audio.size // 480):  # 30 ms mic blocks
        utterances += seg.push(block)
    utterances += seg.flush()
    assert len(utterances) == 2
    for utt, onset in zip(utterances, onsets, strict=True):
        # Speech start (the cut time for an interruption) is the onset, within VAD frames.
        assert 100.0 + onset - 0.05 <= utt.speech_start <= 100.0 + onset + 0.1
        assert utt.start == pytest.approx(utt.speech_start - 0.25)
        # The utterance holds the whole phrase: sound at its start, silence at its end.
        quiet = silences(utt.audio, min_s=0.05)
        assert quiet and quiet[-1][1] >= utt.duration - 0.002
    first = transcriber.transcribe(utterances[0].audio).text.lower()
    second = transcriber.transcribe(utterances[1].audio).text.lower()
    assert "address" in first and "maple" not in first
    assert "avenue" in second and "address" not in second


def test_segmenter_reports_when_the_tester_holds_the_floor(
    two_utterances: tuple[np.ndarray, list[float]],
) -> None:
    audio, onsets = two_utterances
    seg = UtteranceSegmenter(SileroOnnxVad())
    seg.push(audio[: round((onsets[0] + 0.5) * SAMPLE_RATE)])
    assert seg.speaking
    seg.push(audio[round((onsets[0] + 0.5) * SAMPLE_RATE) : round((onsets[1] - 0.1) * SAMPLE_RATE)])
    assert not seg.speaking


def test_a_long_monologue_is_cut_at_the_maximum(espeak: EspeakTts) -> None:
    speech = espeak.synthesize(
        "This is a rather long statement that keeps going without any real break at all"
    ).audio
    seg = UtteranceSegmenter(SileroOnnxVad(), max_utterance_s=1.0)
    parts = seg.push(speech) + seg.flush()
    assert len(parts) >= 2
    assert all(p.duration <= 1.0 + 0.25 + 0.04 for p in parts[:-1])
    # The parts follow each other without overlap.
    assert all(a.end <= b.start + 1e-9 for a, b in itertools.pairwise(parts))


def test_push_to_talk_keeps_what_was_said_while_held() -> None:
    ptt = PushToTalk()
    ptt.push(np.ones(100, dtype=np.float32))  # not held: dropped
    assert ptt.release(1.0) is None
    ptt.press(2.0)
    assert ptt.held
    ptt.push(np.full(160, 0.5, dtype=np.float32))
    ptt.push(np.full(160, 0.25, dtype=np.float32))
    utt = ptt.release(2.5)
    assert utt is not None and not ptt.held
    assert utt.audio.size == 320 and utt.start == 2.0 and utt.end == 2.5
    ptt.press(3.0)
    assert ptt.release(3.1) is None  # nothing recorded
