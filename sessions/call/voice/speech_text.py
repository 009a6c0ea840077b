"""Text on its way to a TTS in a call: cut into sentences as it streams, shaped for espeak.

Sentences are the unit of synthesis: the first can play while the agent's text is
still arriving, and each clip's own trailing silence becomes the pause between
sentences, as the voice makes it.

espeak-ng pauses 170-220 ms at a comma at 165 words per minute; with Silero's
hysteresis that reads as 200-250 ms of silence, which is a 200 ms short pause at
nearly every comma. A listener hears a comma as a continuation, not as a place to
come in, so for espeak each clause comma becomes an explicit 80 ms break (the
pauses at sentence ends, 330-420 ms, are left as the voice makes them).
"""

from __future__ import annotations

import html
import re

from sessions.speech.timing import Pause, Piece
from sessions.speech.tts import PAUSE_TOKENS

_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*$")
_CLAUSE = re.compile(r"^(.*?\w[\"')\]]*)([,;:])$")
CLAUSE_BREAK_S = 0.08
"""The break espeak gets instead of its own comma pause."""
PAUSE_TOKEN_S = 0.3
"""A standalone pause token ("—", what disfluency injection writes)."""
MAX_WORDS = 40
"""A sentence this long without an end is synthesized anyway (at its last comma)."""


def split_sentences(text: str, *, final: bool = False) -> tuple[list[str], str]:
    """Complete sentences in ``text`` (a stream so far) and the incomplete rest.

    A word ending in ``.``, ``!``, ``?`` (or an ellipsis) followed by more text ends
    a sentence; with ``final`` the rest is a sentence too. A run of more than
    :data:`MAX_WORDS` words without an end is cut after its last comma.
    """
    # The last token may still grow ("Mr" -> "Mr."), so only whitespace-ended tokens count.
    complete_upto = len(text) if final else max(text.rfind(" "), text.rfind("\n")) + 1
    head, rest = text[:complete_upto], text[complete_upto:]
    sentences: list[str] = []
    current: list[str] = []
    for word in head.split():
        current.append(word)
        if _SENTENCE_END.search(word):
            sentences.append(" ".join(current))
            current = []
        elif len(current) >= MAX_WORDS:
            commas = [i for i, w in enumerate(current) if w.endswith((",", ";", ":"))]
            cut = commas[-1] + 1 if commas else len(current)
            sentences.append(" ".join(current[:cut]))
            current = current[cut:]
    if final and current:
        sentences.append(" ".join(current))
        current = []
    left = " ".join(current)
    if current and rest:
        left += " "
    return sentences, left + rest


def clause_pieces(text: str) -> list[Piece]:
    """Words (punctuation kept) with a short :class:`Pause` after each clause comma and
    a longer one for each standalone pause token."""
    pieces: list[Piece] = []
    for token in text.split():
        if token in PAUSE_TOKENS:
            pieces.append(Pause(PAUSE_TOKEN_S))
            continue
        pieces.append(token)
        if _CLAUSE.match(token):
            pieces.append(Pause(CLAUSE_BREAK_S))
    return pieces


def pieces_to_espeak_ssml(pieces: list[Piece]) -> str:
    """SSML for espeak-ng: a word before a break loses its comma (the break replaces it)."""
    parts: list[str] = []
    for i, piece in enumerate(pieces):
        if isinstance(piece, Pause):
            parts.append(f'<break time="{round(piece.seconds * 1000)}ms"/>')
            continue
        word = piece
        following = pieces[i + 1] if i + 1 < len(pieces) else None
        match = _CLAUSE.match(word)
        if match and isinstance(following, Pause):
            word = match.group(1)
        parts.append(html.escape(word, quote=False))
    return "<speak>" + " ".join(parts) + "</speak>"
