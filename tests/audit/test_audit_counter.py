"""The independent disfluency counter: every form both ways, and exact agreement with
the insertion metadata of controls.inject_disfluency."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controls import inject_disfluency
from replay.audit.counter import (
    TurnCounts,
    count,
    spoken_insertion_counts,
    spoken_tokens,
    word_count,
)


def reps(text: str) -> tuple[int, int, int]:
    c = count(text)
    return (c.adjacent, c.filler_separated, c.phrase)


# ---- tokens and words ----------------------------------------------------------------


def test_an_em_dash_separates_words_and_is_not_one() -> None:
    assert spoken_tokens("I was trying to—wait, let me think") == [
        "I",
        "was",
        "trying",
        "to",
        "wait,",
        "let",
        "me",
        "think",
    ]
    assert word_count("so — um — yes") == 3
    assert word_count("well--I mean") == 3


def test_silent_tokens_are_not_words() -> None:
    assert word_count("Can you [pause] sorry ... & help [clears throat] me") == 5
    assert word_count("") == 0
    assert count("— ... —") == TurnCounts()


# ---- fillers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["um, yes", "Uh, I think so", "ummm okay", "uhh fine", "uhm right", "er, maybe", "erm no"],
)
def test_filler_spellings_count(text: str) -> None:
    assert count(text).fillers == 1


@pytest.mark.parametrize(
    "text",
    [
        "uh-huh that is right",
        "mm-hmm go on",
        "like I said, you know",
        "I mean it",
        "the umbrella, the human, the error",
        "hmm let me see",
    ],
)
def test_words_that_are_not_fillers(text: str) -> None:
    assert count(text).fillers == 0


def test_an_unspaced_dash_cannot_hide_a_filler() -> None:
    assert count("to—um—wait").fillers == 1


def test_turn_initial_filler() -> None:
    assert count("uh, Yes, I'm here.").initial_filler
    assert count("um- um, yes").initial_filler
    assert not count("Yes, um, I'm here.").initial_filler
    assert not count("").initial_filler


def test_repeated_fillers_are_fillers_not_repetitions() -> None:
    c = count("uh, uh, well")
    assert (c.fillers, c.repetitions) == (2, 0)


# ---- the three repetition forms -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the- the account", (1, 0, 0)),
        ("But- But, I said", (1, 0, 0)),
        ("I I need it", (1, 0, 0)),
        ("I- I- I want", (2, 0, 0)),
        ("th- the order", (1, 0, 0)),
        ("I- I'm sure", (1, 0, 0)),
        ("to—wait- to—wait", (1, 0, 0)),
        ("I, uh, I think", (0, 1, 0)),
        ("the um, the- the box", (1, 1, 0)),
        ("are you— are you sure", (0, 0, 1)),
        ("can you, can you help", (0, 0, 1)),
        ("are you, um, are you there", (0, 0, 1)),
        ("a b a b a b", (0, 0, 2)),
        ("um- um, yes", (1, 0, 0)),
    ],
)
def test_repetition_forms_are_found(text: str, expected: tuple[int, int, int]) -> None:
    assert reps(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "the cat sat on the mat",
        "I think I can",
        "you said you would",
        "I wa- we want",
        "the then",
        "are you sure you are",
        "uh, uh, okay",
        "it is what it is",
        "pre- and post-op",
    ],
)
def test_no_repetition_where_there_is_none(text: str) -> None:
    assert count(text).repetitions == 0


def test_naturally_repeated_words_count_as_repetitions() -> None:
    # The documented choice: the counter cannot tell grammar from a stutter.
    assert reps("I know that that is true") == (1, 0, 0)


# ---- agreement with the injection metadata ------------------------------------------

_SENTENCES = (
    "I need to change the address on my order please it was placed last week and "
    "the new one is on Elm Street can you tell me when the refund will arrive "
    "okay that makes sense thank you so much for checking sorry what did you say "
    "are you sure because I was told something else yesterday by your colleague"
)
_WORDS = _SENTENCES.split(" ")
_EXTRA = [
    "Yes,",
    "No.",
    "well—",
    "to—wait",
    "—so",
    "you?",
    "(hello",
    "that,",
    "um,",
    "uh",
    "[pause]",
    "4B",
    "jo@example.com",
    "I-",
    "that that",
    "are you are you",
    "—",
    "...",
    "Yes!",
    "yes.",
    "No.",
    "no?",
    "I...",
    "###STOP###",
]


def corpus(n: int, seed: int) -> list[str]:
    """Utterances of tester-like words, with the awkward cases mixed in."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(1, 25))]
        for _ in range(rng.randint(0, 3)):
            words.insert(rng.randint(0, len(words)), rng.choice(_EXTRA))
        words[0] = words[0].capitalize()
        out.append(" ".join(words) + rng.choice(("", ".", "?", "!")))
    return out


def diff_and_metadata(text: str, alpha: float) -> tuple[tuple[int, int], tuple[int, int]]:
    result = inject_disfluency(text, alpha)
    d = count(result.rendered) - count(result.original)
    m = spoken_insertion_counts(result.insertions)
    return (d.fillers, d.repetitions), (m.fillers, m.repetitions)


@pytest.mark.parametrize("alpha", [0.25, 0.5, 0.75, 1.0])
def test_counter_difference_equals_metadata_on_a_large_corpus(alpha: float) -> None:
    texts = corpus(5000, seed=int(alpha * 100))
    inserted = 0
    for text in texts:
        got, want = diff_and_metadata(text, alpha)
        assert got == want, text
        inserted += sum(want)
    assert inserted > 1000  # the corpus really exercised the injector


def test_every_injected_repetition_form_counts_once() -> None:
    # "I- I": a repetition of a one-letter word.
    assert count("I- I want") - count("I want") == TurnCounts(1, 0, 1, 0, 0, False)
    # A filler between two identical words turns adjacent into filler-separated:
    # per-form counts move, the totals agree with one filler inserted.
    d = count("the uh, the box") - count("the the box")
    assert (d.fillers, d.repetitions) == (1, 0)
    # A stem on a filler of the original.
    d = count("um- um, yes") - count("um, yes")
    assert (d.fillers, d.repetitions) == (0, 1)


def test_silent_repetitions_are_set_apart() -> None:
    m = spoken_insertion_counts(
        [
            {"index": 0, "kind": "filler", "token": "um,"},
            {"index": 2, "kind": "repetition", "token": "—-"},
            {"index": 3, "kind": "repetition", "token": "[pause-"},
            {"index": 4, "kind": "repetition", "token": "the-"},
            {"index": 5, "kind": "pause", "token": "—"},
        ]
    )
    assert (m.fillers, m.repetitions, m.silent_repetitions, m.pauses, m.initial_fillers) == (
        1,
        1,
        2,
        1,
        1,
    )


# A hostile vocabulary: few keys (so repeats collide), dashes inside and around words,
# cut words and cut fillers, stage directions, protected words.
_HOSTILE = [
    "a", "b", "A", "a-", "b,", "ab-", "a?", "—a", "a—b", "b—a", "a—b—a", "a—um", "um—a",
    "um,", "um-", "uh", "uh—", "—uh-", "—", "b--a", "[pause]", "[p", "x1", "q@r",
    "a.", "b!", "A?", "a...", "b…", 'a."', "a.—b", "um.", "###STOP###",
]  # fmt: skip


@given(
    st.lists(st.sampled_from(_HOSTILE), min_size=1, max_size=18),
    st.sampled_from([0.25, 0.5, 1.0]),
)
def test_agreement_holds_on_hostile_texts(words: list[str], alpha: float) -> None:
    got, want = diff_and_metadata(" ".join(words), alpha)
    assert got == want


# ---- sentence ends (issue 14: "Yes! Yes," is not a repetition) ----------------------


@pytest.mark.parametrize(
    "text",
    [
        "Yes! Yes, I'm sure.",
        "No. No way.",
        "Okay? Okay.",
        'He said "go." Go now.',
        "Right. um, Right, so.",
        "are you. are you",
        "What?! What?",
        "Thanks.—thanks",
    ],
)
def test_no_repetition_across_a_sentence_end(text: str) -> None:
    assert count(text).repetitions == 0, text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes, yes, I'm sure.", (1, 0, 0)),
        ("I... I think so.", (1, 0, 0)),
        ("I… I think so.", (1, 0, 0)),
        ("Yes! Yes- Yes, sure.", (1, 0, 0)),  # the stem repeats the second sentence's word
        ("No. No, no, no.", (2, 0, 0)),
        ("are you are you sure?", (0, 0, 1)),
    ],
)
def test_repetitions_within_a_sentence_still_count(
    text: str, expected: tuple[int, int, int]
) -> None:
    c = count(text)
    assert (c.adjacent, c.filler_separated, c.phrase) == expected, text


def test_injection_never_creates_or_hides_a_sentence_end() -> None:
    # Every sentence-final word of these turns can get a stem, a filler or a pause
    # before it; the difference must still be exactly what was injected.
    texts = ["Yes! Yes, that is right.", "No. No. I said no.", "Okay? Okay. Okay!"] * 200
    for k, text in enumerate(texts):
        got, want = diff_and_metadata(f"{text} {k}", 1.0)
        assert got == want, text


def test_control_tokens_are_not_words() -> None:
    assert count("###STOP###") == TurnCounts()
    assert count("Thank you! ###STOP###").words == 2
    assert count("###TRANSFER### ###TRANSFER###").repetitions == 0
