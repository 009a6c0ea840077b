"""controls.question_or_request on realistic agent speech, both ways."""

from __future__ import annotations

import pytest

from controls import question_or_request
from controls.questions import latest_sentence

ASKING = [
    # a "?" in the latest sentence
    "Thanks for calling. How can I help you today?",
    "I see two orders on your account. Which one is it?",
    "Is the shipping address still 12 Elm Street?",
    "Got it. And that was the blue one, right?",
    # unfinished: the "?" has not been heard yet, the opener says it all
    "Thanks for holding. What is the order number",
    "Okay, so when did you first notice the charge",
    "Alright. Do you have the confirmation email handy",
    "Is there anything else I can help you with",
    "And are you calling about the same order as last time",
    "Great, can I get your full name for the account",
    "Where should we send the replacement",
    # requests, finished or not
    "Could you spell your last name for me.",
    "Please read me the six-digit code from the text message.",
    "I need you to confirm the last four digits of the card.",
    "Let me know when you have the receipt in front of you.",
    "Tell me a little more about what happened with the delivery.",
    "Okay, go ahead and read me the number.",
    "Would you mind holding for just a moment while I check",
    "What's your date of birth",
    "Sure. May I have the email address on the account.",
]

TELLING = [
    "Thanks for holding. I have your order open.",
    "Your refund of forty dollars was issued this morning.",
    "I can see the address we have on file, which is the Elm Street one from last year",
    "I'll go ahead and cancel that for you.",
    "When the package arrives, you'll get an email with the tracking details.",
    "What I can do is issue a store credit today.",
    "How it works is simple: the credit shows up within two days.",
    "That's a great question.",
    "Okay, so your order ships Monday",
    "Can you confirm? Great, so your order ships Monday",
    "I understand how frustrating that must be, and I'm sorry about the delay",
    "Let me pull up your account real quick",
    "Our team will reach out to you within one business day.",
    "However, the warranty only covers manufacturing defects.",
    "The confirmation number is A B C one two three.",
    "I've updated the delivery window to Thursday afternoon",
    "Sure thing, I've made a note on the account",
    "Your new plan starts on the first of next month.",
    "",
    "   ",
]


@pytest.mark.parametrize("text", ASKING)
def test_questions_and_requests_are_recognized(text: str) -> None:
    assert question_or_request(text) is True


@pytest.mark.parametrize("text", TELLING)
def test_statements_are_not_questions(text: str) -> None:
    assert question_or_request(text) is False


def test_enough_examples_both_ways() -> None:
    assert len(ASKING) >= 15 and len(TELLING) >= 15


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Can you confirm? Great, so your order ships Monday", "Great, so your order ships Monday"),
        ("Can you confirm?", "Can you confirm?"),
        ("First. Second! Third? Fourth", "Fourth"),
        ("Done.   ", "Done."),
        ("", ""),
    ],
)
def test_latest_sentence(text: str, expected: str) -> None:
    assert latest_sentence(text) == expected


def test_only_the_latest_sentence_counts() -> None:
    assert question_or_request("Your order ships Monday. Can you confirm the address?")
    assert not question_or_request("Can you confirm the address? Great. It ships Monday.")


def test_curly_apostrophes_count_as_straight_ones() -> None:
    assert question_or_request("What’s your account number")


def test_a_wh_word_inside_another_word_is_not_an_opener() -> None:
    assert not question_or_request("Whatever happens, the credit stays on your account")
    assert not question_or_request("Somehow the parcel went to the old address")
