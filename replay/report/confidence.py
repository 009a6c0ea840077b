"""How sure cutin's ears were of a black-box agent's words, once for every view.

A line's agent words come from speech-to-text (tiny.en on telephone audio by default),
so some are wrong. Each heard word carries the model's probability (``WordTime.p``);
the call screen, replay and the reports dim a word below :data:`UNSURE_BELOW` and mark
it with :data:`UNSURE_MARK`, and show a turn's mean confidence, so a tester reads a
garbled transcript as what it is. Words cutin knows (a simulated agent's text) have no
probability and are never marked.

``bench/bench_agent_ears.py`` measures how well the mark separates right from wrong
words on the bot's known text over an 8 kHz μ-law line.
"""

from __future__ import annotations

from collections.abc import Sequence

from replay.model import Turn, WordTime
from replay.plural import plural

UNSURE_BELOW = 0.6
"""A heard word whose probability is below this is shown as unsure."""
UNSURE_MARK = "?"


def is_unsure(p: float | None) -> bool:
    return p is not None and p < UNSURE_BELOW


def unsure_indices(turn: Turn) -> frozenset[int]:
    """Indices, in ``turn.spoken.split()``, of the words the ears were unsure of.

    Only when the heard words line up one to one with the spoken text (the log's
    spoken text is the heard words joined); otherwise nothing is marked rather than
    the wrong word."""
    spoken = turn.spoken.split()
    heard = turn.words[: len(spoken)]
    if not heard or len(heard) != len(spoken) or all(w.p is None for w in heard):
        return frozenset()
    if any(w.word != s for w, s in zip(heard, spoken, strict=True)):
        return frozenset()
    return frozenset(i for i, w in enumerate(heard) if is_unsure(w.p))


def mean_confidence(words: Sequence[WordTime]) -> float | None:
    """The mean probability of the heard words (None: no heard words)."""
    ps = [w.p for w in words if w.p is not None]
    return sum(ps) / len(ps) if ps else None


def marked(word: str) -> str:
    """A word as plain text shows it when unsure (``word?``)."""
    return f"{word}{UNSURE_MARK}"


def marked_spoken(turn: Turn) -> str:
    """The turn's spoken text with every unsure word marked (``word?``), for plain text."""
    unsure = unsure_indices(turn)
    if not unsure:
        return turn.spoken
    return " ".join(marked(w) if i in unsure else w for i, w in enumerate(turn.spoken.split()))


def confidence_note(turn: Turn) -> str | None:
    """``heard with 64 % confidence, 3 of 12 words unsure`` for a heard turn, else None."""
    mean = mean_confidence(turn.words)
    if mean is None:
        return None
    unsure = sum(is_unsure(w.p) for w in turn.words)
    return (
        f"heard with {100 * mean:.0f} % confidence, "
        f"{unsure} of {plural(len(turn.words), 'word')} unsure ({UNSURE_MARK})"
    )
