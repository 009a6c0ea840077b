"""Measuring test audio from the samples themselves (no model involved)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE

HOP = SAMPLE_RATE // 1000  # 1 ms


def silences(
    audio: npt.NDArray[Any], *, min_s: float = 0.1, floor_db: float = -50.0
) -> list[tuple[float, float]]:
    """(onset, end) of every stretch at least ``min_s`` long whose 1 ms peak stays below
    ``floor_db`` re the loudest millisecond. Onsets are exact to the millisecond."""
    arr = np.abs(np.asarray(audio, dtype=np.float32).reshape(-1))
    n = arr.size // HOP
    env = arr[: n * HOP].reshape(n, HOP).max(axis=1)
    quiet = env < env.max() * 10 ** (floor_db / 20)
    out: list[tuple[float, float]] = []
    i = 0
    while i < n:
        if not quiet[i]:
            i += 1
            continue
        j = i
        while j < n and quiet[j]:
            j += 1
        if (j - i) / 1000 >= min_s:
            out.append((i / 1000, j / 1000))
        i = j
    return out


def inner_silences(audio: npt.NDArray[Any], *, min_s: float = 0.1) -> list[tuple[float, float]]:
    """:func:`silences` between the first and last sound (no lead-in, no tail)."""
    found = silences(audio, min_s=min_s)
    duration = np.asarray(audio).size / SAMPLE_RATE
    return [(a, b) for a, b in found if a > 0.0 and b < duration - 0.002]


def locate(haystack: npt.NDArray[Any], needle: npt.NDArray[Any]) -> tuple[int, float]:
    """Sample offset where ``needle`` best matches inside ``haystack``, and the normalized
    correlation there (1.0 = identical)."""
    from scipy.signal import correlate

    h = np.asarray(haystack, dtype=np.float64)
    k = np.asarray(needle, dtype=np.float64)
    corr = correlate(h, k, mode="valid", method="fft")
    # The haystack's energy under each needle position: a running sum, O(N) (a direct
    # convolution with ones is O(N·K): minutes for 30 s against 1 s at 16 kHz).
    power = np.concatenate(([0.0], np.cumsum(h * h)))
    energy = power[k.size :] - power[: power.size - k.size]
    score = corr / (np.sqrt(np.maximum(energy, 1e-12)) * np.linalg.norm(k))
    best = int(np.argmax(score))
    return best, float(score[best])
