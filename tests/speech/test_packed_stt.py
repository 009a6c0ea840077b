"""Packed speech-to-text (sessions/speech/packing.py): several calls' pieces in one Whisper
input, words handed back by timestamp, a repetition loop cut and logged.

Real espeak-ng speech and the real tiny.en model for what the model hears; the loop guard
is pure and fed a made-up word stream (a real model cannot be made to loop on demand).
"""

from __future__ import annotations

import re
from concurrent.futures import Future

import numpy as np
import pytest

from sessions.call.far_ends.agent_ears import AgentEars
from sessions.speech import SAMPLE_RATE
from sessions.speech.packing import (
    LoopGuard,
    PackedTranscriber,
    PackSpan,
    PieceResult,
    WaitingPiece,
    assign_words,
    by_call,
    fits,
    pack,
    repetition_loop,
)
from sessions.speech.stt import Transcriber, Transcript
from sessions.speech.tts import EspeakTts
from sessions.speech.vad import load_vad
from sessions.speech.words import TimedWord

CALL_A = (
    "The parcel left our warehouse on Monday morning.",
    "The courier expects to deliver it by Thursday.",
)
CALL_B = (
    "Your refund of forty two dollars is approved.",
    "The payment goes back to your credit card.",
)
KEYWORDS_A = {"parcel", "warehouse", "monday", "courier", "deliver", "thursday"}
KEYWORDS_B = {"refund", "forty", "42", "dollars", "approved", "payment", "credit", "card"}
"""Each call's own words: no other word of its text is said in the other call's (tiny.en
may hear a small word as another small word, "of" as "on", so those are not compared)."""


def words_of(text: str) -> list[str]:
    return text.split()


def norm(word: str) -> str:
    return re.sub(r"[^a-z0-9]", "", word.lower())


@pytest.fixture(scope="module")
def speech(espeak: EspeakTts) -> dict[str, np.ndarray]:
    return {t: espeak.synthesize(t).audio for t in (*CALL_A, *CALL_B)}


# ---- pure parts -----------------------------------------------------------------------


def test_a_repetition_loop_is_found_where_its_second_saying_starts() -> None:
    words = words_of("I have your order open thank you thank you thank you thank you thank")
    assert repetition_loop(words) == (7, 2, 4)
    # Punctuation and case do not hide a loop; a word said three times is speech.
    assert repetition_loop(["Okay.", "okay,", "OKAY", "okay"] * 2) == (1, 1, 8)
    assert repetition_loop(words_of("no no no I said no")) is None
    assert repetition_loop(words_of("I have your order open here and I can see it")) is None
    assert repetition_loop([]) is None


def test_the_guard_cuts_a_looping_word_stream_and_says_so() -> None:
    said = words_of("the tracking number is in the email")
    loop = ["we", "sent", "you"] * 40
    stream = [TimedWord(w, 0.3 * k, 0.3 * k + 0.2) for k, w in enumerate(said + loop)]
    guard = LoopGuard(audio_s=20.0)
    # Fed as the model produces it, segment by segment: quiet until the loop shows.
    assert guard(stream[: len(said) + 3]) is None
    cut = guard(stream)
    assert cut is not None
    index, note = cut
    assert index == len(said) + 3  # "we sent you" kept once, the repeats cut
    assert "repetition loop" in note and "'we sent you'" in note
    assert guard.cut_t == pytest.approx(stream[index].start)


def test_the_guard_cuts_a_runaway_without_a_loop() -> None:
    words = [TimedWord(f"w{k}", 0.01 * k, 0.01 * k + 0.005) for k in range(200)]
    guard = LoopGuard(audio_s=2.0)  # one piece: 7 words/s × 2 s + 10 = 24 words at most
    cut = guard(words)
    assert cut is not None and cut[0] == 24 and "runaway" in cut[1]


def test_the_same_line_from_several_calls_in_one_pack_is_no_loop() -> None:
    """Four calls to one agent hear its greeting at once; packed back to back, the line
    repeats four times in the input, once in each piece."""
    line = words_of("Hello, you are through to the test line.")
    spans = [PackSpan(4.5 * k, 4.5 * k + 4.0) for k in range(4)]
    words = [
        TimedWord(w, span.start + 0.3 * i, span.start + 0.3 * i + 0.2)
        for span in spans
        for i, w in enumerate(line)
    ]
    assert repetition_loop([w.word for w in words]) is not None  # as one stream: a loop
    assert LoopGuard(18.0, spans)(words) is None  # piece by piece: four sayings
    # A loop inside one of the pieces (after its line) is still cut, at its second saying.
    looping = [TimedWord("again", 11.5 + 0.05 * i, 11.53 + 0.05 * i) for i in range(9)]
    cut = LoopGuard(18.0, spans)(sorted([*words, *looping], key=lambda w: w.start))
    assert cut is not None and "'again' 9 times" in cut[1]


def test_a_transcriber_stops_decoding_at_the_guards_cut(
    transcriber: Transcriber, speech: dict[str, np.ndarray]
) -> None:
    calls: list[int] = []

    def stop_at_once(words: object) -> tuple[int, str]:
        calls.append(1)
        return 0, "cut for the test"

    audio = np.concatenate([speech[CALL_A[0]], np.zeros(SAMPLE_RATE * 20, np.float32)])
    heard = transcriber.transcribe(audio, fallback=False, guard=stop_at_once)
    assert heard.words == [] and heard.note == "cut for the test"
    assert calls == [1]  # no segment after the cut was asked for


def test_packs_fill_up_to_the_limit_and_words_go_to_the_span_holding_most_of_them() -> None:
    assert fits([5.0] * 10, pack_s=28.0, gap_s=0.5) == 5  # 5 × 5.5 = 27.5
    assert fits([40.0, 1.0]) == 1  # a long piece goes alone
    whole = pack([np.ones(16_000, np.float32), np.ones(8_000, np.float32)], gap_s=0.5)
    assert whole.spans == [PackSpan(0.0, 1.0), PackSpan(1.5, 2.0)]
    assert whole.audio.size == 16_000 + 8_000 + 2 * 8_000 and not whole.audio[16_000:24_000].any()
    words = [
        TimedWord("a", 0.2, 0.4),
        # Middle 1.1, in the gap: Whisper stretched the piece's last word over the
        # silence after it; it overlaps the first span only, so it is the first's.
        TimedWord("edge", 0.9, 1.3),
        TimedWord("lost", 1.1, 1.4),  # wholly in the gap: dropped
        TimedWord("early", 1.2, 1.7),  # middle 1.45 in the gap, overlaps the second
        TimedWord("b", 1.75, 1.8),
        TimedWord("tail", 1.9, 2.3),  # middle 2.1, past every span: the second's
        TimedWord("after", 2.1, 2.3),  # wholly past every span: dropped
    ]
    a, b = assign_words(words, whole, [100.0, 200.0])
    got = [(w.word, round(w.start, 6), round(w.end, 6)) for w in a]
    assert got == [("a", 100.2, 100.4), ("edge", 100.9, 101.0)]
    got = [(w.word, round(w.start, 6), round(w.end, 6)) for w in b]
    assert got == [("early", 200.0, 200.2), ("b", 200.25, 200.3), ("tail", 200.4, 200.5)]


def test_only_speech_goes_into_a_pack_and_words_map_back_through_it() -> None:
    """A piece's pause is left out of the pack (its two stretches back to back), and its
    words come back at their times in the piece; a piece with no speech takes no room."""
    ramp = np.linspace(0.1, 0.9, 32_000, dtype=np.float32)  # 2 s, every sample distinct
    two_stretches = [(0, 8_000), (24_000, 32_000)]  # 0-0.5 s and 1.5-2.0 s
    packed = pack(
        [ramp, np.zeros(16_000, np.float32), np.full(8_000, 0.5, np.float32)],
        [two_stretches, [], [(0, 8_000)]],
        gap_s=0.2,
    )
    assert np.array_equal(packed.audio[:8_000], ramp[:8_000])
    assert np.array_equal(packed.audio[8_000:16_000], ramp[24_000:32_000])
    assert packed.spans[0] == PackSpan(0.0, 1.0)
    assert packed.spans[1].start == packed.spans[1].end  # no speech: an empty span
    assert packed.spans[2] == PackSpan(1.4, 1.9)  # after two gaps of 0.2 s
    assert packed.audio.size == 16_000 + 8_000 + 3 * 3_200
    words = [
        TimedWord("a", 0.1, 0.3),
        TimedWord("across", 0.4, 0.6),  # over the joint: each end through its stretch
        TimedWord("b", 0.6, 0.8),
        TimedWord("edge", 1.05, 1.2),  # wholly in the gaps: dropped
        TimedWord("c", 1.5, 1.7),
    ]
    first, silent, third = assign_words(words, packed, [100.0, 200.0, 300.0])
    got = [(w.word, round(w.start, 6), round(w.end, 6)) for w in first]
    assert got == [("a", 100.1, 100.3), ("across", 100.4, 101.6), ("b", 101.6, 101.8)]
    assert silent == []
    assert [(w.word, round(w.start, 6), round(w.end, 6)) for w in third] == [("c", 300.1, 300.3)]


def test_a_pack_keeps_each_calls_pieces_side_by_side_in_order() -> None:
    def piece(key: object, t0: float) -> WaitingPiece:
        return WaitingPiece(np.zeros(10, np.float32), t0, Future(), 0.0, key)

    a, b = object(), object()
    items = [piece(a, 1), piece(b, 2), piece(None, 3), piece(a, 4), piece(b, 5), piece(a, 6)]
    assert [(w.key, w.t0) for w in by_call(items)] == [
        (a, 1),
        (a, 4),
        (a, 6),
        (b, 2),
        (b, 5),
        (None, 3),
    ]


# ---- real tiny.en ---------------------------------------------------------------------


def test_two_calls_packed_in_one_input_never_exchange_words(
    transcriber: Transcriber, speech: dict[str, np.ndarray]
) -> None:
    packer = PackedTranscriber(transcriber, max_wait_s=0.5)
    # Interleaved as two live calls hand them in; one call's clock at 100 s, the other's
    # at 500 s, so a word moved across would also land at an impossible time.
    order = [(CALL_A[0], 100.0), (CALL_B[0], 500.0), (CALL_A[1], 103.0), (CALL_B[1], 503.0)]
    futures = [packer.submit(speech[text], t0, key=text in CALL_A) for text, t0 in order]
    results = [f.result(timeout=120) for f in futures]
    assert packer.stats.packs == 1 and packer.stats.pieces == 4  # one input for all four
    heard_a: set[str] = set()
    heard_b: set[str] = set()
    for (text, t0), result in zip(order, results, strict=True):
        assert result.note is None
        words = {norm(w.word) for w in result.words}
        mine = text in CALL_A
        assert not words & (KEYWORDS_B if mine else KEYWORDS_A), (text, words)
        (heard_a if mine else heard_b).update(words)
        end = t0 + speech[text].size / SAMPLE_RATE
        for w in result.words:
            assert t0 - 1e-6 <= w.start <= w.end <= end + 1e-6, (text, w)
    # The packed path hears what was said (espeak is hard on Whisper: most keywords).
    assert len(heard_a & KEYWORDS_A) >= 4, heard_a
    assert len(heard_b & KEYWORDS_B) >= 5, heard_b


def test_agent_ears_of_two_calls_on_one_packer_keep_their_own_words(
    transcriber: Transcriber, speech: dict[str, np.ndarray]
) -> None:
    """The ears' real-time path: pieces cut at pauses, packed with the other call's, back
    in the turn they came from; the turn closes once its last piece is back."""
    packer = PackedTranscriber(transcriber, max_wait_s=0.3)
    gap = np.zeros(SAMPLE_RATE // 2, np.float32)
    turns: dict[str, Future[list[TimedWord]]] = {}
    for name, texts, t0 in (("a", CALL_A, 10.0), ("b", CALL_B, 40.0)):
        ears = AgentEars(load_vad("onnx"), transcriber, inline=False, packer=packer)
        ears.start_turn(t0)
        at = t0
        for text in texts:
            audio = np.concatenate([speech[text], gap])
            ears.push(audio, speaking=True, frame_s=speech[text].size / SAMPLE_RATE)
            at += audio.size / SAMPLE_RATE
            ears.segment(at - gap.size / SAMPLE_RATE)  # cut at the pause
        turns[name] = ears.close_turn()
    a = {norm(w.word) for w in turns["a"].result(timeout=120)}
    b = {norm(w.word) for w in turns["b"].result(timeout=120)}
    assert len(a & KEYWORDS_A) >= 4 and not a & KEYWORDS_B, a
    assert len(b & KEYWORDS_B) >= 5 and not b & KEYWORDS_A, b
    assert packer.stats.packs <= 2  # the two calls' pieces shared inputs


class Looping:
    """A stand-in model that loops on every input (a real one cannot be made to on
    demand): "again" every 0.1 s from 0.2 s, for as long as the guard lets it."""

    skip_silence_ms = None  # it hears every piece whole

    def __init__(self) -> None:
        self.calls = 0

    def transcribe(self, audio: np.ndarray, **kw: object) -> Transcript:
        self.calls += 1
        guard = kw["guard"]
        assert kw["fallback"] is False
        words: list[TimedWord] = []
        for k in range(1000):  # a model that would go on forever
            words.append(TimedWord("again", 0.2 + 0.1 * k, 0.25 + 0.1 * k))
            cut = guard(words)  # type: ignore[operator]
            if cut is not None:
                del words[cut[0] :]
                return Transcript("", words, audio.size / SAMPLE_RATE, cut[1])
        raise AssertionError("the guard never cut")


def test_a_loop_in_a_pack_is_logged_for_each_call_it_touched_and_nothing_spins() -> None:
    """A model that loops on every input: each piece's result carries the note, the
    pieces after the cut go round once more, then come back without words."""
    model = Looping()
    packer = PackedTranscriber(model, max_wait_s=0.05)  # type: ignore[arg-type]
    pieces = [np.full(SAMPLE_RATE * 2, 0.1, np.float32) for _ in range(3)]
    results: list[PieceResult] = [
        f.result(timeout=10) for f in [packer.submit(p, 0.0) for p in pieces]
    ]
    assert model.calls == 2  # the pack, then the pieces it left untranscribed once more
    assert all(r.note is not None and "repetition loop" in r.note for r in results)
    assert packer.stats.loops == 2
    # "again" once before each cut; the last piece, after the cut twice, gets no words.
    assert [len(r.words) for r in results] == [1, 1, 0]


def test_the_ears_log_a_loop_cut_as_a_note_not_an_error() -> None:
    """A loop cut is logged (a ``line`` event ``stt_cut``), and the call goes on: an
    error would file a batch's call as failed."""
    packer = PackedTranscriber(Looping(), max_wait_s=0.05)  # type: ignore[arg-type]
    ears = AgentEars(load_vad("onnx"), Looping(), inline=False, packer=packer)  # type: ignore[arg-type]
    ears.start_turn(0.0)
    ears.push(np.full(SAMPLE_RATE * 2, 0.1, np.float32), speaking=True, frame_s=2.0)
    words = ears.close_turn().result(timeout=10)
    assert [w.word for w in words] == ["again"]
    assert len(ears.notes) == 1 and "repetition loop" in ears.notes[0]
    assert ears.errors == []
