"""controls.inject_disfluency against DESIGN.md "Disfluency injection", to the letter."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import unicodedata
from collections import Counter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from controls import (
    DEFAULT_PROFILE,
    InsertionKind,
    TendencyError,
    inject_disfluency,
    is_protected,
    remove_insertions,
    stem,
)

# A realistic tester vocabulary: words as they come out of typing or STT, with
# punctuation on them, and a few protected tokens (digits, e-mail addresses).
SAMPLE_SPEECH = (
    "I need to change the shipping address on my order , please . Yes, that's right. "
    "Well, actually I think so. But, um no wait. Could you check again? Sure! "
    "It's the one from last year; the Elm Street place. Okay. Thanks so much, "
    "that's great. I'm not sure… maybe — I don't know. \"Express\" delivery (next day) "
    "sounds good. Can I speak to someone else? No. Hello, hi, hey."
)
PLAIN_WORDS = tuple(SAMPLE_SPEECH.split())
PROTECTED_WORDS = ("42", "3B", "jo@example.com", "#7", "2nd", "x²", "@home", "A1", "10:30")
ALL_WORDS = PLAIN_WORDS + PROTECTED_WORDS


def seeded_texts(seed: int, count: int, words: tuple[str, ...] | list[str]) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, 30))) for _ in range(count)]


# --- an independent implementation of the published pseudo-code ---------------------


def _reference_stem(word: str) -> str:
    cut = word
    while cut and unicodedata.category(cut[-1]).startswith("P"):
        cut = cut[:-1]
    return cut if cut else word


def _reference_risky(word: str) -> bool:
    return "@" in word or any(ch.isdigit() for ch in word)


def reference_inject(text: str, alpha: float) -> tuple[str, list[tuple[int, str, str]]]:
    """DESIGN.md's pseudo-code, transcribed line by line."""
    rng = random.Random(text)
    p = alpha * 0.2
    words = text.split()
    emitted: list[str] = []
    insertions: list[tuple[int, str, str]] = []
    for i, word in enumerate(words):
        u = rng.random()
        if _reference_risky(word) or (i > 0 and _reference_risky(words[i - 1])):
            emitted.append(word)
            continue
        if u < p:
            roll = rng.random()
            if roll < 0.5:
                token, kind = rng.choice(("um,", "uh,")), "filler"
            elif roll < 0.5 + 0.3:
                token, kind = _reference_stem(word) + "-", "repetition"
            else:
                token, kind = "—", "pause"
            emitted.append(token)
            insertions.append((i, kind, token))
        emitted.append(word)
    return " ".join(emitted), insertions


def as_tuples(text: str, alpha: float) -> tuple[str, list[tuple[int, str, str]]]:
    result = inject_disfluency(text, alpha)
    return result.rendered, [(i.index, str(i.kind), i.token) for i in result.insertions]


# --- properties -----------------------------------------------------------------------

texts = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(ALL_WORDS), max_size=40).map(" ".join),
    st.lists(st.sampled_from(ALL_WORDS), max_size=20).map("\t \n".join),
)
alphas = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(texts, alphas)
@example("But, I wanted the 2nd one.", 1.0)
def test_removing_the_insertions_gives_back_the_original_words(text: str, alpha: float) -> None:
    result = inject_disfluency(text, alpha)
    assert remove_insertions(result.rendered, result.insertions) == text.split()
    assert len(result.rendered.split()) == len(text.split()) + len(result.insertions)


@given(texts, alphas)
def test_matches_an_independent_transcription_of_the_pseudo_code(text: str, alpha: float) -> None:
    assert as_tuples(text, alpha) == reference_inject(text, alpha)


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.75, 1.0])
def test_matches_the_transcription_on_a_realistic_corpus(alpha: float) -> None:
    for text in seeded_texts(7, 3000, ALL_WORDS):
        assert as_tuples(text, alpha) == reference_inject(text, alpha), text


@given(texts)
def test_alpha_zero_is_identity(text: str) -> None:
    result = inject_disfluency(text, 0.0)
    assert result.insertions == ()
    assert result.rendered == " ".join(text.split())


def test_alpha_zero_keeps_single_spaced_text_byte_for_byte() -> None:
    for text in seeded_texts(3, 500, ALL_WORDS):
        assert inject_disfluency(text, 0.0).rendered == text


@given(st.lists(st.sampled_from(ALL_WORDS), max_size=40), alphas)
def test_no_insertion_next_to_a_digit_or_at_sign(words: list[str], alpha: float) -> None:
    result = inject_disfluency(" ".join(words), alpha)
    for ins in result.insertions:
        i = ins.index
        assert not _reference_risky(words[i]), (words, ins)
        assert i == 0 or not _reference_risky(words[i - 1]), (words, ins)


def test_is_protected_looks_at_both_sides_of_the_boundary() -> None:
    words = ["call", "555", "now", "or", "email", "me@x.org", "today"]
    assert [is_protected(words, i) for i in range(len(words))] == [
        False,  # "call": start of text, nothing risky
        True,  # "555" itself
        True,  # after "555"
        False,
        False,
        True,  # "me@x.org"
        True,  # after "me@x.org"
    ]


def test_all_protected_text_gets_no_insertion_even_at_alpha_one() -> None:
    for text in seeded_texts(11, 300, PROTECTED_WORDS):
        assert inject_disfluency(text, 1.0).insertions == ()


def _first_index_from_draws(text: str, p: float, *, draw_when_protected: bool) -> int | None:
    """Where the first insertion goes, replaying the generator by hand (no insertion
    before it, so the only draws so far are one per boundary)."""
    rng = random.Random(text)
    words = text.split()
    for i in range(len(words)):
        if is_protected(words, i) and not draw_when_protected:
            continue
        u = rng.random()
        if not is_protected(words, i) and u < p:
            return i
    return None


def test_a_draw_is_taken_at_protected_boundaries_too() -> None:
    discriminating = 0
    for tail in seeded_texts(13, 400, PLAIN_WORDS):
        text = "Room 42 on floor 7 " + tail
        got = [i.index for i in inject_disfluency(text, 1.0).insertions][:1]
        spec = _first_index_from_draws(text, 0.2, draw_when_protected=True)
        assert got == ([] if spec is None else [spec]), text
        if spec != _first_index_from_draws(text, 0.2, draw_when_protected=False):
            discriminating += 1
    assert discriminating > 50  # the check above can tell the two readings apart


def test_same_text_same_output_in_fresh_interpreters(child_env: dict[str, str]) -> None:
    corpus = seeded_texts(5, 200, ALL_WORDS)
    here = [as_tuples(t, 0.8) for t in corpus]
    script = (
        "import json, sys\n"
        "from controls import inject_disfluency\n"
        "out = []\n"
        "for t in json.load(sys.stdin):\n"
        "    r = inject_disfluency(t, 0.8)\n"
        "    out.append([r.rendered, [[i.index, str(i.kind), i.token] for i in r.insertions]])\n"
        "print(json.dumps(out))\n"
    )
    for seed in ("0", "1", "4242", "random"):
        env = dict(child_env, PYTHONHASHSEED=seed)
        proc = subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps(corpus),
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=60,
        )
        there = [(r, [tuple(x) for x in ins]) for r, ins in json.loads(proc.stdout)]
        assert there == here, f"PYTHONHASHSEED={seed}"


def test_realized_rate_and_kind_split_track_the_profile() -> None:
    corpus: list[str] = []
    boundaries = 0
    rng = random.Random(2024)
    while boundaries < 200_000:
        n = rng.randint(3, 40)
        corpus.append(" ".join(rng.choice(PLAIN_WORDS) for _ in range(n)))
        boundaries += n
    for alpha in (0.25, 0.5, 1.0):
        kinds: Counter[InsertionKind] = Counter()
        for text in corpus:
            kinds.update(i.kind for i in inject_disfluency(text, alpha).insertions)
        total = sum(kinds.values())
        p = alpha * DEFAULT_PROFILE.max_prob_per_word
        rate_sd = math.sqrt(p * (1 - p) / boundaries)
        assert abs(total / boundaries - p) < 5 * rate_sd, (alpha, total / boundaries)
        for kind, share in (
            (InsertionKind.FILLER, 0.5),
            (InsertionKind.REPETITION, 0.3),
            (InsertionKind.PAUSE, 0.2),
        ):
            sd = math.sqrt(share * (1 - share) / total)
            assert abs(kinds[kind] / total - share) < 5 * sd, (alpha, kind, kinds)


# --- tokens ---------------------------------------------------------------------------


def _first_insertion_of(kind: InsertionKind, at: int, prefix: str) -> tuple[str, str]:
    """Search seeded texts starting with ``prefix`` for an insertion of ``kind`` at ``at``."""
    rng = random.Random(99)
    for _ in range(20_000):
        tail = " ".join(rng.choice(PLAIN_WORDS) for _ in range(rng.randint(2, 8)))
        text = f"{prefix} {tail}"
        result = inject_disfluency(text, 1.0)
        for ins in result.insertions:
            if ins.index == at and ins.kind is kind:
                return result.rendered, ins.token
    raise AssertionError(f"no {kind} at {at} found")


def test_fillers_are_lower_case_even_before_the_first_word() -> None:
    rendered, token = _first_insertion_of(InsertionKind.FILLER, 0, "Yes, I'm here.")
    assert token in ("um,", "uh,")
    assert rendered.startswith(f"{token} Yes, ")


def test_repetition_stem_drops_trailing_punctuation() -> None:
    rendered, token = _first_insertion_of(InsertionKind.REPETITION, 0, "But,")
    assert token == "But-"
    assert rendered.startswith("But- But,")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("But,", "But"),
        ("here.", "here"),
        ('"Express"', '"Express'),
        ("right?!", "right"),
        ("(next)", "(next"),
        ("wait…", "wait"),
        ("don't", "don't"),
        ("so—", "so"),
        ("…", "…"),
        ("hello", "hello"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


@given(texts, alphas)
def test_each_token_says_what_kind_it_is(text: str, alpha: float) -> None:
    words = text.split()
    result = inject_disfluency(text, alpha)
    rendered = result.rendered.split()
    for k, ins in enumerate(result.insertions):
        assert rendered[ins.index + k] == ins.token
        assert rendered[ins.index + k + 1] == words[ins.index]
        if ins.kind is InsertionKind.FILLER:
            assert ins.token in DEFAULT_PROFILE.fillers
        elif ins.kind is InsertionKind.REPETITION:
            assert ins.token == stem(words[ins.index]) + "-"
        else:
            assert ins.token == "—"


def test_result_as_dict_is_json_ready() -> None:
    result = inject_disfluency("Well I was hoping to change it today", 1.0)
    data = json.loads(json.dumps(result.as_dict()))
    assert data["original"] == result.original
    assert data["rendered"] == result.rendered
    assert data["alpha"] == 1.0
    assert data["profile"] == "default"
    assert [tuple(d.values()) for d in data["insertions"]] == [
        (i.index, str(i.kind), i.token) for i in result.insertions
    ]


@pytest.mark.parametrize("alpha", [-0.1, 1.01, float("nan"), "x"])
def test_alpha_outside_zero_to_one_is_refused(alpha: object) -> None:
    with pytest.raises(TendencyError, match="alpha"):
        inject_disfluency("hello there", alpha)  # type: ignore[arg-type]


def test_module_has_no_hidden_state_between_calls() -> None:
    text = "I was wondering whether you could move my appointment to next week"
    first = inject_disfluency(text, 0.9)
    inject_disfluency("something else entirely", 0.9)
    random.seed(0)  # the global generator must not matter
    assert inject_disfluency(text, 0.9) == first


@given(st.text(max_size=30))
@example("x²")
@example("٣")  # an Arabic-Indic digit
@example("a@b")
def test_protection_agrees_with_str_isdigit_on_any_word(word: str) -> None:
    words = [word, "next"]
    risky = _reference_risky(word)
    assert is_protected(words, 0) is risky
    assert is_protected(words, 1) is risky


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        (
            "Hi, I need to change the shipping address on my order, please.",
            "Hi, I need to change the shipping address on my order, please- please.",
        ),
        (
            "But I was hoping to get it before the weekend, to be honest, so could you "
            "check again?",
            "But I was hoping to get it before the weekend- weekend, to be honest, so could you "
            "check again?",
        ),
        (
            "My new address is 42 Elm Street and my email is jo@example.com, thanks.",
            "My new address um, is 42 Elm Street and my email is- is jo@example.com, thanks.",
        ),
    ],
)
def test_golden_renderings_never_change(text: str, rendered: str) -> None:
    # Logged calls are replayed and diffed against these renderings: a change here
    # breaks every log already written, on any machine.
    assert inject_disfluency(text, 1.0).rendered == rendered
