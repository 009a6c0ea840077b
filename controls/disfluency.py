"""Rule-based disfluency injection (DESIGN.md, "Disfluency injection").

The default profile is the published algorithm to the letter: the generator is
seeded with the text itself (``random.Random(str)`` hashes the string with SHA-512,
so it does not depend on PYTHONHASHSEED), one draw is taken at every word boundary
(protected or not), and an insertion goes *before* its word.
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum

from controls.tendencies import check_tendency

PAUSE_TOKEN = "—"


class InsertionKind(StrEnum):
    FILLER = "filler"
    REPETITION = "repetition"
    PAUSE = "pause"
    # The human style's self-corrections (controls.disfluency_human): each is a run of
    # inserted words (the reparandum) whose last token ends in "—", the interruption point.
    REPAIR = "repair"
    RESTART = "restart"


@dataclass(frozen=True, slots=True)
class DisfluencyProfile:
    """The constants of one injection profile."""

    name: str = "default"
    max_prob_per_word: float = 0.2
    p_filler: float = 0.5
    p_reps: float = 0.3
    fillers: tuple[str, ...] = ("um,", "uh,")
    style: str = "paper"
    """Which algorithm renders it: "paper" (this module) or "human" (disfluency_human)."""


DEFAULT_PROFILE = DisfluencyProfile()
HUMAN_PROFILE = DisfluencyProfile(name="human", style="human")
PROFILES: dict[str, DisfluencyProfile] = {
    DEFAULT_PROFILE.name: DEFAULT_PROFILE,
    HUMAN_PROFILE.name: HUMAN_PROFILE,
}
# The style registry: the name on the command line and in the session header -> the
# profile a call carries. "paper" is the published rule, byte-exact.
STYLES: dict[str, DisfluencyProfile] = {"paper": DEFAULT_PROFILE, "human": HUMAN_PROFILE}
DEFAULT_STYLE = "paper"


def profile_for_style(style: str | None) -> DisfluencyProfile:
    """The profile of a style name (None = the paper's); an unknown name is an error."""
    try:
        return STYLES[style or DEFAULT_STYLE]
    except KeyError:
        raise ValueError(
            f"unknown disfluency style {style!r}; one of {', '.join(STYLES)}"
        ) from None


@dataclass(frozen=True, slots=True)
class Insertion:
    """One inserted token, placed before original word ``index``."""

    index: int
    kind: InsertionKind
    token: str

    def as_dict(self) -> dict[str, object]:
        return {"index": self.index, "kind": str(self.kind), "token": self.token}


@dataclass(frozen=True, slots=True)
class DisfluencyResult:
    original: str
    rendered: str
    insertions: tuple[Insertion, ...] = field(default_factory=tuple)
    alpha: float = 0.0
    profile: str = DEFAULT_PROFILE.name

    def as_dict(self) -> dict[str, object]:
        return {
            "original": self.original,
            "rendered": self.rendered,
            "insertions": [i.as_dict() for i in self.insertions],
            "alpha": self.alpha,
            "profile": self.profile,
        }


# For an ASCII word, "has a digit" is exactly [0-9]; a regex answers that in C.
_ASCII_RISKY = re.compile(r"[0-9@]")


def _risky(word: str) -> bool:
    """Does the word hold a digit (any script's, as ``str.isdigit`` says) or an '@'?"""
    if word.isascii():
        return _ASCII_RISKY.search(word) is not None
    return "@" in word or any(ch.isdigit() for ch in word)


def is_protected(words: list[str], i: int) -> bool:
    """A boundary is protected when word i-1 or word i holds a digit or an '@'."""
    return _risky(words[i]) or (i > 0 and _risky(words[i - 1]))


def stem(word: str) -> str:
    """The part of a word that is repeated: trailing punctuation stripped ("But," -> "But").

    Punctuation is Unicode's (general category P*: ``.,;:!?"')]``, dashes, curly
    quotes, ``…``, ``*``, ``/`` ...). A word that is all punctuation is its own stem."""
    end = len(word)
    while end and unicodedata.category(word[end - 1])[0] == "P":
        end -= 1
    return word[:end] if end else word


def inject_disfluency(
    text: str, alpha: float, profile: DisfluencyProfile = DEFAULT_PROFILE
) -> DisfluencyResult:
    """Insert fillers, repetitions and pauses into ``text`` at tendency ``alpha``.

    A profile of the "human" style is rendered by :mod:`controls.disfluency_human`
    (seeded from the text alone, as here); every other profile runs the paper's rule."""
    if profile.style == "human":
        from controls.disfluency_human import inject_human

        return inject_human(text, alpha)
    alpha = check_tendency("alpha", alpha)
    rng = random.Random(text)
    p = alpha * profile.max_prob_per_word
    words = text.split()
    emitted: list[str] = []
    insertions: list[Insertion] = []
    p_filler = profile.p_filler
    p_filler_reps = profile.p_filler + profile.p_reps
    draw = rng.random
    risky = [_risky(w) for w in words]
    previous_risky = False
    for i, word in enumerate(words):
        u = draw()  # drawn at every boundary, protected or not
        here_risky = risky[i]
        if here_risky or previous_risky:  # is_protected(words, i), precomputed
            emitted.append(word)
            previous_risky = here_risky
            continue
        if u < p:
            roll = draw()
            if roll < p_filler:
                token = rng.choice(profile.fillers)
                kind = InsertionKind.FILLER
            elif roll < p_filler_reps:
                token = stem(word) + "-"
                kind = InsertionKind.REPETITION
            else:
                token = PAUSE_TOKEN
                kind = InsertionKind.PAUSE
            emitted.append(token)
            insertions.append(Insertion(i, kind, token))
        emitted.append(word)
    return DisfluencyResult(
        original=text,
        rendered=" ".join(emitted),
        insertions=tuple(insertions),
        alpha=alpha,
        profile=profile.name,
    )


def remove_insertions(
    rendered: str, insertions: tuple[Insertion, ...] | list[Insertion]
) -> list[str]:
    """Give back the original words of a rendered text, using its insertion list."""
    tokens = rendered.split()
    # Each insertion is one token placed before original word `index`; walking the
    # insertions in order, the k-th one sits at rendered position index + k.
    drop = {ins.index + k for k, ins in enumerate(insertions)}
    return [tok for pos, tok in enumerate(tokens) if pos not in drop]
