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

_REQUEST_HINTS = ("you", "please", "let me", "tell me", "may i")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# The last sentence break, found from the end: a terminator then whitespace, searched in
# the reversed text (the rule runs at every pause, and splitting the whole turn each time
# cost more than the rest of the decision).
_BREAK_REVERSED = re.compile(r"\s[.!?]")
_OPENER_RE = re.compile(r"^(?:" + "|".join(re.escape(o) for o in QUESTION_OPENERS) + r")\b")
_IMPERATIVE_RE = re.compile(r"^(?:" + "|".join(re.escape(o) for o in IMPERATIVE_OPENERS) + r")\b")
_REQUEST_RE = re.compile(r"\b(?:" + "|".join(re.escape(o) for o in REQUEST_OPENERS) + r")\b")
_LEADING = re.compile(r"^[^\w']+")
# A finished statement: ends in "." or "!", maybe followed by closing quotes/brackets.
_FINISHED = re.compile(r"[.!]['\"”’)\]]*$")
_CLOSERS = "'\"”’)]"


def latest_sentence(text: str) -> str:
    """The last non-empty sentence of ``text`` (possibly unfinished)."""
    # Same result as the last non-empty part of ``_SENTENCE_END.split(text.strip())``:
    # whitespace right after the last terminator starts the last break, and the break
    # runs over all the whitespace that follows it.
    stripped = text.strip()
    found = _BREAK_REVERSED.search(stripped[::-1])
    if found is None:
        return stripped
    return stripped[len(stripped) - found.start() :].lstrip()


def question_or_request(text: str) -> bool:
    """True when the latest sentence of ``text`` asks or requests something."""
    sentence = latest_sentence(text)
    if not sentence:
        return False
    if "?" in sentence:
        return True
    lowered = _LEADING.sub("", sentence.lower().replace("’", "'"))
    # Plain substring tests first (every request phrase contains one of _REQUEST_HINTS,
    # which a test checks): the word-bounded regex then only confirms a phrase.
    if (
        "you" in lowered
        or "please" in lowered
        or "let me" in lowered
        or "tell me" in lowered
        or "may i" in lowered
    ) and _REQUEST_RE.search(lowered):
        return True
    # What _FINISHED matches: "." or "!" once the closing quotes/brackets are dropped.
    unfinished = not lowered.rstrip(_CLOSERS).endswith((".", "!"))
    for candidate in (lowered, *_after_lead_ins(lowered)):
        if _IMPERATIVE_RE.match(candidate):
            return True
        if unfinished and _OPENER_RE.match(candidate):
            return True
    return False


_LEAD_INS = ("okay", "ok", "so", "and", "alright", "all right", "now", "great", "thanks", "sure")


# The first lead-in in _LEAD_INS order followed by " " or "," (alternatives are tried
# in order, as a loop over _LEAD_INS would).
_LEAD_IN_RE = re.compile("(?:" + "|".join(re.escape(lead) for lead in _LEAD_INS) + ")[ ,]")


def _after_lead_ins(sentence: str) -> list[str]:
    out: list[str] = []
    rest = sentence
    for _ in range(3):
        found = _LEAD_IN_RE.match(rest)
        if found is None:
            break
        rest = rest[found.end() - 1 :].lstrip(" ,")
        out.append(rest)
    return out
