"""Is the agent asking the user something? A small, documented rule set.

The turn-taking rule never interrupts or backchannels over a question or a
request, because the user is being asked to speak. The rules look at the
*latest sentence* of what the agent has said so far in this turn:

1. It contains a question mark.
2. It is still unfinished (no closing ".", "!" yet) and starts with a question
   opener: a wh-word ("what", "which", "when", "where", "who", "why", "how") or an
   auxiliary addressed to the user ("do you", "are you", "is there", "can I", ...).
   Mid-sentence the "?" has not been heard yet, so the opener is the only clue; a
   finished sentence shows its own punctuation, and one ending in "." is a
   statement ("When it ships, you'll get an email.").
3. It starts with an imperative request ("go ahead", "give me", "read me", ...).
4. It contains a request phrase anywhere: "could you", "can you", "would you",
   "please", "would you mind", "let me know", "tell me", "what is your",
   "what's your", "may I have", "I need you to".

Rules 2 and 3 first drop up to three lead-ins ("Okay, so what ...").
A sentence ends at ".", "!" or "?" followed by whitespace; text after the last
terminator is the latest (unfinished) sentence, unless it is empty.
"""

from __future__ import annotations

import re

QUESTION_OPENERS: tuple[str, ...] = (
    "what",
    "which",
    "when",
    "where",
    "who",
    "whom",
    "whose",
    "why",
    "how",
    "do you",
    "did you",
    "does that",
    "does it",
    "does this",
    "are you",
    "are there",
    "is that",
    "is it",
    "is this",
    "is there",
    "was that",
    "were you",
    "would you",
    "would it",
    "could you",
    "could i",
    "can you",
    "can i",
    "will you",
    "shall i",
    "shall we",
    "may i",
    "should i",
    "should we",
    "have you",
)
IMPERATIVE_OPENERS: tuple[str, ...] = (
    "go ahead",
    "give me",
    "read me",
    "send me",
    "spell",
    "confirm",
)
# Not only openers: these phrases mark a request wherever they stand in the sentence.
REQUEST_OPENERS: tuple[str, ...] = (
    "could you",
    "can you",
    "would you",
    "please",
    "would you mind",
    "let me know",
    "tell me",
    "what is your",
    "what's your",
    "may i have",
    "i need you to",
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_OPENER_RE = re.compile(r"^(?:" + "|".join(re.escape(o) for o in QUESTION_OPENERS) + r")\b")
_IMPERATIVE_RE = re.compile(r"^(?:" + "|".join(re.escape(o) for o in IMPERATIVE_OPENERS) + r")\b")
_REQUEST_RE = re.compile(r"\b(?:" + "|".join(re.escape(o) for o in REQUEST_OPENERS) + r")\b")
_LEADING = re.compile(r"^[^\w']+")
# A finished statement: ends in "." or "!", maybe followed by closing quotes/brackets.
_FINISHED = re.compile(r"[.!]['\"”’)\]]*$")


def latest_sentence(text: str) -> str:
    """The last non-empty sentence of ``text`` (possibly unfinished)."""
    parts = [p for p in _SENTENCE_END.split(text.strip()) if p.strip()]
    return parts[-1] if parts else ""


def question_or_request(text: str) -> bool:
    """True when the latest sentence of ``text`` asks or requests something."""
    sentence = latest_sentence(text)
    if not sentence:
        return False
    if "?" in sentence:
        return True
    lowered = _LEADING.sub("", sentence.lower().replace("’", "'"))
    if _REQUEST_RE.search(lowered):
        return True
    unfinished = _FINISHED.search(lowered) is None
    for candidate in (lowered, *_after_lead_ins(lowered)):
        if _IMPERATIVE_RE.match(candidate):
            return True
        if unfinished and _OPENER_RE.match(candidate):
            return True
    return False


_LEAD_INS = ("okay", "ok", "so", "and", "alright", "all right", "now", "great", "thanks", "sure")


def _after_lead_ins(sentence: str) -> list[str]:
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
