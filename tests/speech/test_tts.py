"""espeak-ng and OpenAI TTS (over HTTP to the loopback server), word estimates, token cache."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from controls import inject_disfluency
from sessions.speech import SAMPLE_RATE
from sessions.speech.backchannel_cache import BACKCHANNEL_TOKENS, BackchannelCache, trim_silence
from sessions.speech.timing import Pause
from sessions.speech.tts import (
    EspeakTts,
    OpenAiTts,
    TtsError,
    make_tts,
    pieces_to_ssml,
    ssml_to_pieces,
    text_for_plain_tts,
    text_to_pieces,
)
from sessions.speech.tts import Speech as Synthesized
from tests.speech.signals import inner_silences, silences
from tests.support.openai_server import Error, OpenAIServer, Speech


def test_pause_tokens_become_ssml_breaks_and_markup_is_escaped() -> None:
    pieces = text_to_pieces("Sure — I can <b> do that & more", pause_ms=250)
    assert pieces == ["Sure", Pause(0.25), "I", "can", "<b>", "do", "that", "&", "more"]
    ssml = pieces_to_ssml(pieces)
    assert '<break time="250ms"/>' in ssml
    assert "&lt;b&gt;" in ssml and "&amp;" in ssml
    assert ssml_to_pieces(ssml) == pieces


def test_ssml_breaks_in_seconds_and_other_tags_are_read() -> None:
    pieces = ssml_to_pieces('<speak><p>One <break time="1.5s"/> two <emphasis>three</emphasis></p>')
    assert pieces == ["One", Pause(1.5), "two", "three"]


def test_espeak_speaks_16k_audio_with_exact_breaks(espeak: EspeakTts) -> None:
    speech = espeak.synthesize("Thanks for holding — I have your order open.")
    assert speech.audio.dtype == np.float32 and speech.backend == "espeak"
    assert 1.5 < speech.duration < 5.0
    assert 0.1 < float(np.abs(speech.audio).max()) <= 1.0
    gaps = inner_silences(speech.audio, min_s=0.2)
    assert len(gaps) == 1
    onset, end = gaps[0]
    assert end - onset == pytest.approx(0.3, abs=0.06)


def test_disfluent_text_from_the_rule_engine_is_spoken_with_its_pauses(espeak: EspeakTts) -> None:
    result = inject_disfluency(
        "I need to change the shipping address on my order before it goes out tomorrow", 1.0
    )
    pauses = result.rendered.split().count("—")
    assert pauses >= 1, result.rendered  # this text at alpha 1 gets two
    speech = espeak.synthesize(result.rendered)
    assert len(inner_silences(speech.audio, min_s=0.25)) >= pauses
    assert "—" not in [w.word for w in speech.words]


def test_word_estimates_are_ordered_and_respect_the_breaks(espeak: EspeakTts) -> None:
    text = "Your order ships tomorrow. — The refund takes five days."
    speech = espeak.synthesize(text)
    words = speech.words
    assert [w.word for w in words] == [t for t in text.split() if t != "—"]
    assert all(a.end <= b.start + 1e-9 for a, b in itertools.pairwise(words))
    assert all(w.start < w.end for w in words)
    assert words[0].start >= 0.0 and words[-1].end <= speech.duration
    (onset, end), *_ = [g for g in inner_silences(speech.audio, min_s=0.25)]
    assert words[3].end <= onset + 0.02  # "tomorrow." ends before the break
    assert words[4].start >= end - 0.02  # "The" starts after it


def test_espeak_errors_are_clear() -> None:
    with pytest.raises(TtsError, match="apt-get install espeak-ng"):
        EspeakTts(executable="espeak-ng-not-here").synthesize("hello")


def test_espeak_bad_voice_is_a_clear_error(espeak: EspeakTts) -> None:
    with pytest.raises(TtsError, match="espeak-ng failed"):
        EspeakTts(voice="qqzz").synthesize("hello")


def test_openai_tts_pcm_24k_is_resampled_to_16k(openai_server: OpenAIServer) -> None:
    openai_server.enqueue_speech(Speech(seconds=0.75, frequency_hz=440.0, amplitude=0.5))
    tts = OpenAiTts(base_url=openai_server.base_url, model="tts-test", voice="verse")
    speech = tts.synthesize("Sure — one moment please.")
    assert speech.backend == "openai"
    assert speech.audio.size == pytest.approx(0.75 * SAMPLE_RATE, abs=2)
    # Still a 440 Hz tone after resampling: the spectrum peaks there.
    spectrum = np.abs(np.fft.rfft(speech.audio))
    peak_hz = np.argmax(spectrum) * SAMPLE_RATE / speech.audio.size
    assert peak_hz == pytest.approx(440.0, abs=3.0)
    assert float(np.abs(speech.audio).max()) == pytest.approx(0.5, abs=0.03)
    body = openai_server.speech_requests()[-1].body
    assert body["response_format"] == "pcm"
    assert body["model"] == "tts-test" and body["voice"] == "verse"
    assert body["input"] == "Sure... one moment please."  # no SSML: the pause is an ellipsis
    assert [w.word for w in speech.words] == ["Sure", "one", "moment", "please."]


def test_openai_tts_server_error_is_a_tts_error(openai_server: OpenAIServer) -> None:
    openai_server.enqueue_speech(Error(500), Error(500), Error(500))
    tts = OpenAiTts(base_url=openai_server.base_url)
    with pytest.raises(TtsError, match="OpenAI TTS failed"):
        tts.synthesize("hello")


def test_openai_tts_without_key_or_server_says_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(TtsError, match="OPENAI_API_KEY"):
        OpenAiTts().synthesize("hello")


def test_plain_tts_text_keeps_words_and_marks_pauses() -> None:
    assert text_for_plain_tts("um, I — I think — so") == "um, I... I think... so"
    assert text_for_plain_tts("— leading") == "leading"


def test_make_tts_by_name() -> None:
    assert make_tts("espeak", voice="en-gb").cache_key.startswith("espeak-en-gb")
    assert make_tts("openai", voice="alloy").name == "openai"
    with pytest.raises(TtsError, match="unknown TTS backend"):
        make_tts("festival")


class CountingTts:
    """Real espeak-ng, counting how often it is asked to speak."""

    def __init__(self, inner: EspeakTts) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[str] = []

    @property
    def cache_key(self) -> str:
        return self.inner.cache_key

    def synthesize(self, text: str) -> Synthesized:
        self.calls.append(text)
        return self.inner.synthesize(text)


def test_backchannels_are_synthesized_once_then_loaded_from_disk(
    espeak: EspeakTts, tmp_path: Path
) -> None:
    tts = CountingTts(espeak)
    first = BackchannelCache(tts, tmp_path).load()
    assert tts.calls == list(BACKCHANNEL_TOKENS)
    assert first.synthesized == list(BACKCHANNEL_TOKENS)
    for token in BACKCHANNEL_TOKENS:
        assert first.path_for(token).is_file()
        audio = first.get(token)
        assert 0.15 < audio.size / SAMPLE_RATE < 1.2
        # Trimmed: sound starts at once, no trailing silence left.
        head = np.abs(audio[: SAMPLE_RATE // 100]).max()
        assert head > 0.01 * np.abs(audio).max()
        assert not silences(audio, min_s=0.05)

    second = BackchannelCache(tts, tmp_path).load()
    assert len(tts.calls) == len(BACKCHANNEL_TOKENS)  # nothing synthesized again
    assert second.synthesized == []
    for token in BACKCHANNEL_TOKENS:
        assert np.array_equal(second.get(token), first.get(token))


def test_a_damaged_cache_file_is_rebuilt(espeak: EspeakTts, tmp_path: Path) -> None:
    cache = BackchannelCache(espeak, tmp_path, tokens=("yeah",)).load()
    cache.path_for("yeah").write_bytes(b"RIFF-broken")
    again = BackchannelCache(espeak, tmp_path, tokens=("yeah",)).load()
    assert again.synthesized == ["yeah"]
    assert again.get("yeah").size > 0


def test_voices_do_not_share_cached_tokens(espeak: EspeakTts, tmp_path: Path) -> None:
    a = BackchannelCache(espeak, tmp_path, tokens=("okay",))
    b = BackchannelCache(EspeakTts(voice="en-gb"), tmp_path, tokens=("okay",))
    assert a.path_for("okay") != b.path_for("okay")


def test_trim_silence_keeps_the_sound() -> None:
    audio = np.zeros(SAMPLE_RATE, dtype=np.float32)
    audio[4000:6000] = 0.5
    trimmed = trim_silence(audio)
    assert trimmed.size == pytest.approx(2000 + 2 * 80, abs=2)
    assert trim_silence(np.zeros(100, dtype=np.float32)).size == 0
