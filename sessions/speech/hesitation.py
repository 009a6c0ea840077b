"""How the human style's hesitations sound: silences and filled pauses of human length.

The human disfluency style (:mod:`controls.disfluency_human`) writes a self-correction's
interruption point as a dash on the broken-off word ("I want the— I need the blue
one") and its fillers as ``um,`` / ``uh,``. Said as written, espeak-ng makes the dash
a clause pause of about 250 ms and a filler a short syllable with a comma pause, so an
agent's turn detector never meets a hesitation a person would make. Here each is given
a length (docs/disfluency-styles.md, "Hesitations in the caller's audio"):

* a **break-off** ("the—") and a standalone pause token ("—") are followed by
  :data:`BREAK_OFF_S` of silence before the speaker goes on;
* a **filler** is said slowly (a filled pause, :data:`FILLED_PAUSE_S` long on the text
  clock, espeak's rate :data:`FILLER_RATE_PERCENT` in audio) and followed by a silence,
  longer after *um* than after *uh*.

The lengths are assumptions inside the ranges the issue names, not measured values;
the doc says what they rest on. Stdlib only: the text clock imports this too.
"""

from __future__ import annotations

from dataclasses import dataclass

BREAK_OFF_S = 0.40
"""Silence between a broken-off word (or a pause token) and what the speaker says next."""
FILLED_PAUSE_S = {"um": 0.45, "uh": 0.35}
"""How long the filler itself lasts on the text clock (espeak's measured lengths at
:data:`FILLER_RATE_PERCENT`, 165 words per minute, are within 40 ms of these)."""
FILLER_SILENCE_S = {"um": 0.25, "uh": 0.15}
"""Silence after the filler, in place of its comma pause."""
FILLER_RATE_PERCENT = 60
"""espeak-ng speaking rate for a filler, as a percentage of the voice's rate."""
PAUSE_TOKENS = frozenset({"—", "--", "…"})
BREAK_OFF_MARK = "—"


@dataclass(frozen=True, slots=True)
class Spoken:
    """One piece of a hesitant turn: a word to say, or (``word`` empty) a silence."""

    word: str
    """What to say (the dash or the filler's comma removed); empty for a lone silence."""
    written: str
    """The token as written in the rendered text (empty for a lone silence)."""
    filler: str = ""
    """``um`` or ``uh`` when the word is a filled pause."""
    silence_after: float = 0.0
    """Seconds of silence after the word (0: only what the voice makes itself)."""


def filler_of(token: str) -> str:
    """``um`` or ``uh`` when ``token`` is a filler ("um," "Uh" "uh,"), else ``""``."""
    key = token.rstrip(",").lower()
    return key if key in FILLED_PAUSE_S else ""


def is_break_off(token: str) -> bool:
    """A word cut off by the speaker: a dash written on its end ("the—")."""
    return len(token) > 1 and token.endswith(BREAK_OFF_MARK) and token not in PAUSE_TOKENS


def hesitant_pieces(text: str) -> list[Spoken]:
    """The words of ``text`` with the silences and filled pauses a person would give them."""
    out: list[Spoken] = []
    for token in text.split():
        if token in PAUSE_TOKENS:
            out.append(Spoken("", "", silence_after=BREAK_OFF_S))
        elif is_break_off(token):
            out.append(Spoken(token.rstrip(BREAK_OFF_MARK), token, silence_after=BREAK_OFF_S))
        elif filler := filler_of(token):
            said = token.rstrip(",")
            out.append(Spoken(said, token, filler, FILLER_SILENCE_S[filler]))
        else:
            out.append(Spoken(token, token))
    return out
