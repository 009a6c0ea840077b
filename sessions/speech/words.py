"""Timed words: what TTS estimates and STT hears, and the spoken/unspoken split at a cut."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TimedWord:
    word: str
    start: float
    """Seconds, on whatever clock the producer was given (``t0`` offsets)."""
    end: float
    probability: float | None = None
    """STT word confidence; None for TTS estimates."""

    def shifted(self, dt: float) -> TimedWord:
        return TimedWord(self.word, self.start + dt, self.end + dt, self.probability)

    def as_dict(self) -> dict[str, object]:
        """The session log's ``WordTiming`` shape (word, start, end)."""
        return {"word": self.word, "start": round(self.start, 3), "end": round(self.end, 3)}


def confidence(probability: float | None) -> float | None:
    """An STT word probability as the log keeps it: 0..1 to 3 places; None if unusable."""
    if probability is None or not math.isfinite(probability):
        return None
    return round(min(max(probability, 0.0), 1.0), 3)


def split_at(words: Sequence[TimedWord], cut_t: float) -> tuple[list[TimedWord], list[TimedWord]]:
    """Split at a cut: *spoken* = words whose end is at or before ``cut_t``, the rest unspoken.

    ``len(spoken)`` is the cut word index (the first word not fully heard).
    """
    spoken: list[TimedWord] = []
    rest: list[TimedWord] = []
    for w in words:
        (spoken if w.end <= cut_t and not rest else rest).append(w)
    return spoken, rest


def words_text(words: Sequence[TimedWord]) -> str:
    return " ".join(w.word for w in words)
