"""Estimated word timings for synthesized speech.

Neither espeak-ng's command line nor OpenAI TTS reports when each word is spoken,
so we estimate: the text is split into phrases at explicit pauses and clause
punctuation, the audio into voiced islands by short-time energy; the largest
silent gaps are taken as the phrase boundaries, and inside a phrase each word gets
time in proportion to its letters. Good to a word or two — what was *heard* comes
from STT word timestamps instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE
from sessions.speech.words import TimedWord

_HOP_S = 0.010
_CLAUSE_END = re.compile(r"[.,;:!?]+[\"')\]]*$")


@dataclass(frozen=True, slots=True)
class Pause:
    seconds: float


Piece = str | Pause
"""A word (as written) or an explicit pause, in speaking order."""


def voiced_spans(
    audio: npt.NDArray[Any],
    *,
    rate: int = SAMPLE_RATE,
    floor_db: float = -35.0,
    min_gap_s: float = 0.06,
) -> list[tuple[float, float]]:
    """(start, end) seconds of stretches whose 10 ms RMS is within ``floor_db`` of the peak.

    Gaps shorter than ``min_gap_s`` (stop closures inside words) are bridged.
    """
    arr = np.asarray(audio, dtype=np.float32).reshape(-1)
    hop = max(1, int(rate * _HOP_S))
    n = arr.size // hop
    if n == 0:
        return []
    rms = np.sqrt(np.mean(arr[: n * hop].reshape(n, hop) ** 2, axis=1))
    peak = float(rms.max())
    if peak <= 1e-6:
        return []
    voiced = rms >= max(peak * 10 ** (floor_db / 20), 1e-5)
    spans: list[tuple[float, float]] = []
    i = 0
    while i < n:
        if not voiced[i]:
            i += 1
            continue
        j = i
        while j < n and voiced[j]:
            j += 1
        start, end = i * _HOP_S, j * _HOP_S
        if spans and start - spans[-1][1] < min_gap_s:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
        i = j
    return spans


def _phrases(pieces: list[Piece]) -> list[list[str]]:
    phrases: list[list[str]] = [[]]
    for piece in pieces:
        if isinstance(piece, Pause):
            if phrases[-1]:
                phrases.append([])
            continue
        phrases[-1].append(piece)
        if _CLAUSE_END.search(piece):
            phrases.append([])
    return [p for p in phrases if p]


def _weight(word: str) -> float:
    return 1.0 + sum(ch.isalnum() for ch in word)


def _spread(words: list[str], start: float, end: float) -> list[TimedWord]:
    weights = [_weight(w) for w in words]
    total = sum(weights)
    out: list[TimedWord] = []
    t = start
    for w, wt in zip(words, weights, strict=True):
        dt = (end - start) * wt / total
        out.append(TimedWord(w, round(t, 4), round(t + dt, 4)))
        t += dt
    return out


def estimate_word_timings(
    pieces: list[Piece], audio: npt.NDArray[Any], *, rate: int = SAMPLE_RATE
) -> list[TimedWord]:
    """Estimate when each word in ``pieces`` is spoken in ``audio`` (seconds from its start)."""
    phrases = _phrases(pieces)
    if not phrases:
        return []
    spans = voiced_spans(audio, rate=rate)
    if not spans:
        duration = np.asarray(audio).size / rate
        return _spread([w for p in phrases for w in p], 0.0, duration)
    k = len(phrases)
    if len(spans) < k:
        # Fewer islands than phrases: spread every word over the voiced extent.
        return _spread([w for p in phrases for w in p], spans[0][0], spans[-1][1])
    gaps = [(spans[i + 1][0] - spans[i][1], i) for i in range(len(spans) - 1)]
    cut_after = sorted(i for _, i in sorted(gaps, reverse=True)[: k - 1])
    bounds: list[tuple[float, float]] = []
    first = 0
    for i in [*cut_after, len(spans) - 1]:
        bounds.append((spans[first][0], spans[i][1]))
        first = i + 1
    out: list[TimedWord] = []
    for words, (start, end) in zip(phrases, bounds, strict=True):
        out.extend(_spread(words, start, end))
    return out
