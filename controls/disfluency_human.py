"""The "human" disfluency style: a caller whose disfluencies look like conversational speech.

The paper's rule (:mod:`controls.disfluency`) draws the same chance at every word, so
fillers rarely open a turn, the spread between turns is only the spread of turn
lengths, and no speaker ever corrects themself. This style keeps what makes the rule
usable (α is the dial, the same text renders the same way, the insertion list gives
back the original words, alphanumerics and their neighbours are never touched) and
changes the shape (docs/disfluency-styles.md has the targets and their sources):

* a **turn-initial filler** slot of its own, so about one filler in six opens the turn;
* **um / uh** drawn in a speech-like proportion, not 50/50;
* **self-repairs and restarts** at phrase starts: the speaker says the start of the
  phrase, breaks off at an interruption point ("—" on the last broken-off word) and
  says it again, either with one word replaced by a near alternative ("I want the—
  I need the blue one": a *repair*) or as it was ("I need the— I need the blue one":
  a *restart*);
* a per-turn **rate multiplier** drawn from a gamma distribution (mean 1), so some
  turns are much more disfluent than others of the same length (over-dispersion).

Every boundary takes the same number of draws whatever α is, and each event fires
when its own uniform falls under a probability proportional to α: a higher α keeps
every insertion of a lower one and may add more (monotone), and α = 0 adds nothing.
Stdlib only, no I/O.
"""

from __future__ import annotations

import math
import random

from controls.disfluency import (
    HUMAN_PROFILE,
    PAUSE_TOKEN,
    DisfluencyResult,
    Insertion,
    InsertionKind,
    _risky,
    stem,
)
from controls.tendencies import check_tendency

# Per-boundary chances at α = 0.5 (they scale linearly with α), tuned on one half of
# the τ2-bench airline user turns and reported on the other (docs/disfluency-styles.md).
INITIAL_FILLER = 0.106
"""Chance of a filler before the first word of the turn."""
FILLER = 0.0326
"""Chance of a filler at any other open boundary."""
REPETITION = 0.0230
"""Chance of a one-word repetition ("the- the") at an open boundary."""
SELF_REPAIR = 0.0380
"""Chance of a repair or restart at an open phrase start."""
PAUSE = 0.010
"""Chance of a silent pause token at an open boundary."""
UM_SHARE = 0.40
"""Share of "um" among the filled pauses (the rest are "uh")."""
REPAIR_SHARE = 0.55
"""Share of repairs (a word replaced) among self-corrections that can be repairs."""
GAMMA_SHAPE = 1.3
"""Shape k of the gamma draw G ~ Gamma(k, 1/k) behind the per-turn rate multiplier."""
RATE_POWER = 1.0
"""The multiplier is G ** p scaled back to mean 1: p > 1 spreads turns further apart
(more over-dispersion) while each turn keeps its rank and every other draw its value.
p = 1.2 reaches the dispersion target on both halves but moved the held-out turn-initial
share out of tolerance, so it is not on (docs/disfluency-styles.md, "Dispersion")."""
MAX_CHANCE = 0.9

# Words that open a phrase (determiners, pronouns, prepositions, conjunctions, modals):
# a self-correction retraces to one of these, or to the word after a punctuation mark.
_OPENERS = """
    the a an my your our his her their this that these those some any
    i i'd i'm i'll i've we we'd we're you you're he she they it it's there
    to for with on in at from about of by into
    and but so or because if when then
    can could would will should do does did is are was were have has
    please what how which who where why
"""
PHRASE_OPENERS = frozenset(_OPENERS.split())
# A plausible near alternative for a word the speaker then corrects (both ways round).
_PAIRS = (
    ("need", "want"),
    ("the", "a"),
    ("this", "that"),
    ("can", "could"),
    ("would", "could"),
    ("will", "can"),
    ("book", "get"),
    ("check", "see"),
    ("flight", "trip"),
    ("reservation", "booking"),
    ("cancel", "change"),
    ("is", "was"),
    ("in", "on"),
    ("to", "for"),
    ("some", "any"),
    ("my", "the"),
    ("help", "assist"),
    ("like", "want"),
)
ALTERNATIVES: dict[str, str] = {}
for _a, _b in _PAIRS:
    ALTERNATIVES.setdefault(_a, _b)
    ALTERNATIVES.setdefault(_b, _a)
del _a, _b

_CLAUSE_PUNCTUATION = frozenset(",;:.!?\u2026")
_MAX_REPARANDUM = 4


def _ends_clause(word: str) -> bool:
    """Does a mark that closes a phrase follow the word's letters ("flight," "yes.")?"""
    return (bool(word) and word[-1] in _CLAUSE_PUNCTUATION) or word.endswith(('."', '?"'))


def phrase_starts(words: list[str]) -> list[bool]:
    """For each word: does a phrase start there (first word, after , ; : . ! ? or at
    a phrase-opening function word)?"""
    out: list[bool] = []
    for i, word in enumerate(words):
        key = stem(word).lower().strip("\"'(")
        out.append(i == 0 or _ends_clause(words[i - 1]) or key in PHRASE_OPENERS)
    return out


def _match_case(model: str, word: str) -> str:
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def _phrase_end(words: list[str], starts: list[bool], i: int) -> int:
    """One past the last word of the phrase starting at ``i`` (at most a few words)."""
    j = i + 1
    while j < len(words) and j - i < _MAX_REPARANDUM and not _ends_clause(words[j - 1]):
        if starts[j] and j - i >= 2:
            break
        j += 1
    return j


def _self_correction(
    words: list[str], risky: list[bool], starts: list[bool], i: int, c_kind: float, c_len: float
) -> tuple[InsertionKind, list[str]] | None:
    """The broken-off words of a repair or restart retracing to word ``i``, or None when
    the phrase is too short or touches a protected word."""
    end = _phrase_end(words, starts, i)
    if end - i < 2:
        return None
    # Protection as the paper's: no copied word, and no neighbour of one, holds a digit or '@'.
    lo, hi = max(i - 1, 0), min(end + 1, len(words))
    if any(risky[lo:hi]):
        return None
    length = 2 + int(c_len * (end - i - 1))  # 2 .. phrase length
    copied = words[i : i + length]
    replaceable = [k for k in range(1, length) if stem(copied[k]).lower() in ALTERNATIVES]
    if replaceable and c_kind < REPAIR_SHARE:
        k = replaceable[int(c_kind / REPAIR_SHARE * len(replaceable))]
        alt = ALTERNATIVES[stem(copied[k]).lower()]
        copied[k] = _match_case(copied[k], alt)
        kind = InsertionKind.REPAIR
    elif end - i >= 3:
        # A word-for-word retrace of two words is a phrase repetition ("are you— are
        # you"), as the counter has always read it; a restart says three or more again.
        copied = words[i : i + 3 + int(c_len * (end - i - 2))]
        kind = InsertionKind.RESTART
    else:
        return None
    copied[-1] = stem(copied[-1]) + PAUSE_TOKEN
    return kind, copied


def rate_multiplier(g: float) -> float:
    """The per-turn multiplier for a gamma draw ``g``: ``g ** p / E[G ** p]`` (mean 1)."""
    k, p = GAMMA_SHAPE, RATE_POWER
    if p == 1.0:
        return g  # exactly the gamma draw (its mean is 1), so renderings stay as they were
    mean = math.exp(math.lgamma(k + p) - math.lgamma(k) - p * math.log(k))
    return math.pow(g, p) / mean


def _chance(base: float, alpha: float, multiplier: float) -> float:
    return min(MAX_CHANCE, 2.0 * alpha * base * multiplier)


def inject_human(text: str, alpha: float, seed: int | None = None) -> DisfluencyResult:
    """Render ``text`` with human-shaped disfluencies at tendency ``alpha``.

    Seeded from the text (and ``seed`` when given): the same text and seed always
    render the same way. Insertions go before their word, in the order pause, filler,
    self-correction words, repetition stem."""
    alpha = check_tendency("alpha", alpha)
    words = text.split()
    if alpha == 0.0 or not words:
        return DisfluencyResult(text, text, (), alpha, HUMAN_PROFILE.name)
    rng = random.Random(text if seed is None else f"{seed}\x1f{text}")
    draw = rng.random
    multiplier = rate_multiplier(rng.gammavariate(GAMMA_SHAPE, 1.0 / GAMMA_SHAPE))
    p_initial = _chance(INITIAL_FILLER, alpha, multiplier)
    p_filler = _chance(FILLER, alpha, multiplier)
    p_rep = _chance(REPETITION, alpha, multiplier)
    p_fix = _chance(SELF_REPAIR, alpha, multiplier)
    p_pause = _chance(PAUSE, alpha, multiplier)
    risky = [_risky(w) for w in words]
    starts = phrase_starts(words)
    emitted: list[str] = []
    insertions: list[Insertion] = []
    free = 0  # the first boundary a self-correction may retrace to

    def insert(i: int, kind: InsertionKind, token: str) -> None:
        emitted.append(token)
        insertions.append(Insertion(i, kind, token))

    for i, word in enumerate(words):
        # Seven draws at every boundary, protected or not, whatever α is.
        u_pause, u_filler, u_fix, u_rep, c_filler, c_kind, c_len = (draw() for _ in range(7))
        if risky[i] or (i > 0 and risky[i - 1]):
            emitted.append(word)
            continue
        fix: tuple[InsertionKind, list[str]] | None = None
        if starts[i] and i >= free:
            fix = _self_correction(words, risky, starts, i, c_kind, c_len)
            if fix is not None:
                # No other self-correction inside the words this one says again, fired
                # or not: which sites can fire must not depend on α (monotone).
                free = i + len(fix[1])
                fix = fix if u_fix < p_fix else None
        if u_pause < p_pause and i > 0:
            insert(i, InsertionKind.PAUSE, PAUSE_TOKEN)
        if u_filler < (p_initial if i == 0 else p_filler):
            insert(i, InsertionKind.FILLER, "um," if c_filler < UM_SHARE else "uh,")
        if fix is not None:
            kind, copied = fix
            for token in copied:
                insert(i, kind, token)
        if u_rep < p_rep:
            insert(i, InsertionKind.REPETITION, stem(word) + "-")
        emitted.append(word)
    return DisfluencyResult(
        original=text,
        rendered=" ".join(emitted),
        insertions=tuple(insertions),
        alpha=alpha,
        profile=HUMAN_PROFILE.name,
    )


__all__ = [
    "ALTERNATIVES",
    "GAMMA_SHAPE",
    "PHRASE_OPENERS",
    "UM_SHARE",
    "inject_human",
    "phrase_starts",
]
