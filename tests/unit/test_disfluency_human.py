"""The "human" disfluency style (controls.disfluency_human): its invariants as
properties, its self-corrections' shape, and the counter reading them back."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controls.disfluency import (
    DEFAULT_PROFILE,
    HUMAN_PROFILE,
    PAUSE_TOKEN,
    InsertionKind,
    inject_disfluency,
    is_protected,
    profile_for_style,
    remove_insertions,
)
from controls.disfluency_human import inject_human, phrase_starts
from replay.audit.counter import count, spoken_insertion_counts
from replay.audit.texts import split_conversations

FIXTURES = Path(__file__).parents[1] / "fixtures/disfluency_styles"
HELD_OUT = FIXTURES / "tau2_airline_user_turns_heldout.txt"

SAMPLE = (
    "I need to change the flight on my reservation , please . Yes, that's right. "
    "Could you check the booking again? I would like a refund for this trip; and "
    "can you tell me if the seat is in economy or business? Thanks, that's great. "
    "I'm not sure… maybe — I don't know. \"Express\" is fine."
)
PLAIN = SAMPLE.split()
PROTECTED = ("42", "EHGLP3", "jo@example.com", "#7", "2nd", "x²", "@home", "10:30", "٣")
words_st = st.lists(st.sampled_from(PLAIN + list(PROTECTED)), min_size=0, max_size=40)
text_st = words_st.map(" ".join)
alpha_st = st.floats(min_value=0.0, max_value=1.0)
seed_st = st.one_of(st.none(), st.integers(min_value=0, max_value=2**31))


def _risky(word: str) -> bool:
    return "@" in word or any(ch.isdigit() for ch in word)


@settings(max_examples=300, deadline=None)
@given(text_st, alpha_st, seed_st)
def test_alphanumerics_and_their_neighbours_are_never_touched(
    text: str, alpha: float, seed: int | None
) -> None:
    words = text.split()
    result = inject_human(text, alpha, seed)
    for ins in result.insertions:
        assert not is_protected(words, ins.index), (text, ins)
        assert not _risky(ins.token), (text, ins)
    # Every protected word and its neighbours are emitted with nothing between them.
    tokens = result.rendered.split()
    for i, word in enumerate(words):
        if _risky(word) and i + 1 < len(words):
            k = [j for j, t in enumerate(tokens) if t == word]
            assert any(j + 1 < len(tokens) and tokens[j + 1] == words[i + 1] for j in k)


@settings(max_examples=300, deadline=None)
@given(text_st, alpha_st, seed_st)
def test_deterministic_per_text_and_seed_and_reversible(
    text: str, alpha: float, seed: int | None
) -> None:
    first = inject_human(text, alpha, seed)
    assert first == inject_human(text, alpha, seed)
    assert remove_insertions(first.rendered, first.insertions) == text.split()
    assert first.profile == "human"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), seed_st)
def test_alpha_zero_leaves_any_text_unchanged(text: str, seed: int | None) -> None:
    result = inject_human(text, 0.0, seed)
    assert result.rendered == text
    assert result.insertions == ()


@settings(max_examples=200, deadline=None)
@given(text_st, alpha_st, alpha_st, seed_st)
def test_monotone_in_alpha(text: str, a: float, b: float, seed: int | None) -> None:
    """A higher α keeps every insertion of a lower one."""
    low, high = sorted((a, b))
    few = Counter(inject_human(text, low, seed).insertions)
    many = Counter(inject_human(text, high, seed).insertions)
    assert not few - many


def test_seed_changes_the_rendering_and_none_is_the_text_alone() -> None:
    text = SAMPLE
    renders = {inject_human(text, 0.8, s).rendered for s in range(8)}
    assert len(renders) > 1
    assert inject_human(text, 0.8).rendered == inject_human(text, 0.8, None).rendered


def test_registry_dispatches_and_paper_stays_the_default() -> None:
    text = "Yes I would like to change the flight on my reservation please"
    assert profile_for_style(None) is DEFAULT_PROFILE
    assert profile_for_style("paper") is DEFAULT_PROFILE
    assert inject_disfluency(text, 0.7, HUMAN_PROFILE) == inject_human(text, 0.7)
    assert inject_disfluency(text, 0.7).profile == "default"
    with pytest.raises(ValueError, match="human"):
        profile_for_style("robot")


def test_phrase_starts_follow_function_words_and_punctuation() -> None:
    sentence = "Well, I need the blue one for my trip"
    words = sentence.split()
    assert phrase_starts(words) == [True, True, False, True, False, False, True, True, False]


def _self_corrections(kind: InsertionKind, text: str) -> list[tuple[str, int, list[str]]]:
    """(rendered, index, broken-off words) of each text rendering with one ``kind``."""
    out = []
    for seed in range(80):
        r = inject_human(text, 1.0, seed)
        runs = [i for i in r.insertions if i.kind is kind]
        if runs and len({i.index for i in runs}) == 1:
            out.append((r.rendered, runs[0].index, [i.token for i in runs]))
    return out


def test_a_repair_retraces_to_the_phrase_start_and_replaces_one_word() -> None:
    text = "I need the blue one"
    found = _self_corrections(InsertionKind.REPAIR, text)
    assert found
    for rendered, index, run in found:
        assert run[-1].endswith(PAUSE_TOKEN)
        assert not any(t.endswith(PAUSE_TOKEN) for t in run[:-1])
        said = [t.rstrip(PAUSE_TOKEN) for t in run]
        original = text.split()[index : index + len(said)]
        assert said[0] == original[0]  # retraced to where the phrase starts
        assert sum(a != b for a, b in zip(said, original, strict=True)) == 1
        assert count(rendered).repairs == 1


def test_a_restart_says_three_words_or_more_again() -> None:
    text = "I would like the blue one"
    found = _self_corrections(InsertionKind.RESTART, text)
    assert found
    for rendered, index, run in found:
        said = [t.rstrip(PAUSE_TOKEN) for t in run]
        assert len(said) >= 3 and said == text.split()[index : index + len(said)]
        assert count(rendered).restarts == 1


def test_counter_agrees_with_the_insertions_on_real_turns() -> None:
    """count(rendered) - count(original) is what the insertion list says, turn by turn."""
    turns = [t for c in split_conversations(HELD_OUT.read_text().splitlines()) for t in c]
    assert len(turns) == 147
    seen: Counter[str] = Counter()
    for seed in (None, 1, 2):
        for text in turns:
            r = inject_human(text, 0.9, seed)
            d = count(r.rendered) - count(text)
            m = spoken_insertion_counts(r.insertions)
            assert (d.fillers, d.repetitions, d.repairs, d.restarts) == (
                m.fillers,
                m.repetitions,
                m.repairs,
                m.restarts,
            ), r.rendered
            assert d.initial_filler == bool(m.initial_fillers)
            seen.update(str(i.kind) for i in r.insertions)
    assert all(seen[k] > 0 for k in ("filler", "repetition", "pause", "repair", "restart"))


def test_paper_rule_never_makes_a_self_correction() -> None:
    turns = [t for c in split_conversations(HELD_OUT.read_text().splitlines()) for t in c]
    for text in turns:
        c = count(inject_disfluency(text, 1.0).rendered)
        assert c.repairs == c.restarts == 0


def test_rate_multiplier_keeps_mean_one_and_is_the_gamma_draw_at_power_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import random

    from controls import disfluency_human as human

    assert human.RATE_POWER == 1.0
    assert human.rate_multiplier(0.37) == 0.37  # the default renders as before, exactly
    rng = random.Random(5)
    draws = [rng.gammavariate(human.GAMMA_SHAPE, 1 / human.GAMMA_SHAPE) for _ in range(40_000)]
    monkeypatch.setattr(human, "RATE_POWER", 1.2)
    spread = [human.rate_multiplier(g) for g in draws]
    mean = sum(spread) / len(spread)
    assert mean == pytest.approx(1.0, abs=0.03)
    var = sum((m - mean) ** 2 for m in spread) / len(spread)
    assert var > sum((g - 1.0) ** 2 for g in draws) / len(draws)  # wider than the gamma's
