"""controls.questions' fast paths give exactly what the plain definitions give: the last
part of a regex split, the ``_FINISHED`` regex, a loop over the lead-ins, and the
request regex on its own (the rule runs at every pause, so these were made cheaper)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from controls import question_or_request
from controls.questions import (
    _FINISHED,
    _LEAD_INS,
    _LEADING,
    _REQUEST_HINTS,
    _REQUEST_RE,
    _SENTENCE_END,
    REQUEST_OPENERS,
    _after_lead_ins,
    latest_sentence,
)

# Pieces that exercise every branch: terminators, odd whitespace, closers, lead-ins,
# openers and request phrases.
PIECES = st.sampled_from(
    [
        ".",
        "!",
        "?",
        " ",
        "  ",
        "\t",
        "\n",
        "\u00a0",
        "\u2003",
        ",",
        "'",
        '"',
        "”",
        "’",
        ")",
        "]",
        "3.5",
        "a",
        "okay",
        "ok",
        "so",
        "and",
        "all right",
        "alright",
        "now",
        "great",
        "thanks",
        "sure",
        "what",
        "do you",
        "can i",
        "go ahead",
        "spell",
        "could you",
        "please",
        "let me know",
        "tell me",
        "what's your",
        "may i have",
        "i need you to",
        "you",
        "Mr.",
        "e.g.",
        "order",
        "ships Monday",
    ]
)
TEXTS = st.lists(PIECES, max_size=30).map("".join)


def reference_latest_sentence(text: str) -> str:
    parts = [p for p in _SENTENCE_END.split(text.strip()) if p.strip()]
    return parts[-1] if parts else ""


def reference_after_lead_ins(sentence: str) -> list[str]:
    out: list[str] = []
    rest = sentence
    for _ in range(3):
        for lead in _LEAD_INS:
            if rest.startswith(lead + " ") or rest.startswith(lead + ","):
                rest = rest[len(lead) :].lstrip(" ,")
                out.append(rest)
                break
        else:
            break
    return out


def reference_question_or_request(text: str) -> bool:
    sentence = reference_latest_sentence(text)
    if not sentence:
        return False
    if "?" in sentence:
        return True
    lowered = _LEADING.sub("", sentence.lower().replace("’", "'"))
    if _REQUEST_RE.search(lowered):
        return True
    unfinished = _FINISHED.search(lowered) is None
    from controls.questions import _IMPERATIVE_RE, _OPENER_RE

    for candidate in (lowered, *reference_after_lead_ins(lowered)):
        if _IMPERATIVE_RE.match(candidate):
            return True
        if unfinished and _OPENER_RE.match(candidate):
            return True
    return False


@settings(max_examples=3000, deadline=None)
@given(TEXTS)
def test_fast_paths_equal_the_definitions(text: str) -> None:
    assert latest_sentence(text) == reference_latest_sentence(text)
    lowered = text.lower()
    assert _after_lead_ins(lowered) == reference_after_lead_ins(lowered)
    assert question_or_request(text) == reference_question_or_request(text)


def test_every_request_phrase_has_a_hint() -> None:
    assert all(any(hint in phrase for hint in _REQUEST_HINTS) for phrase in REQUEST_OPENERS)


def test_the_reference_can_tell_them_apart() -> None:
    # The property above would pass vacuously if the texts never asked anything.
    assert reference_question_or_request("Okay, so could you spell it")
    assert not reference_question_or_request("Okay, so it ships Monday.")
    assert latest_sentence("Hi.  \u00a0Can you  hear me") == "Can you  hear me"
