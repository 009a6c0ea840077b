"""Is the agent asking the user something? A small, documented rule set.

The turn-taking rule never interrupts or backchannels over a question or a
request, because the user is being asked to speak. The rules look at the
*latest sentence* of what the agent has said so far in this turn:

1. It contains a question mark.
2. It starts with a question opener: a wh-word ("what", "which", "when", "where",
   "who", "why", "how") or an auxiliary addressed to the user ("do you", "did you",
   "are you", "is that", "would you", "could you", "can you", "will you", "shall I",
   "may I", "should I", "have you").
3. It contains a request phrase anywhere: "could you", "can you", "would you",
   "please", "would you mind", "let me know", "tell me", "what is your",
   "what's your", "may I have", "I need you to", "go ahead and".

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
    "are you",
    "is that",
    "is it",
    "would you",
    "could you",
    "can you",
    "will you",
    "shall i",
    "may i",
    "should i",
    "have you",
)
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
    "go ahead and",
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_OPENER_RE = re.compile(r"^(?:" + "|".join(re.escape(o) for o in QUESTION_OPENERS) + r")\b")
_REQUEST_RE = re.compile(r"\b(?:" + "|".join(re.escape(o) for o in REQUEST_OPENERS) + r")\b")
_LEADING = re.compile(r"^[^\w']+")


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
    # Drop a short lead-in ("Okay, so what ..."), then test the opener.
    for candidate in (lowered, *_after_lead_ins(lowered)):
        if _OPENER_RE.match(candidate):
            return True
    return bool(_REQUEST_RE.search(lowered))


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
