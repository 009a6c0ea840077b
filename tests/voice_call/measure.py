"""Reading a voice call's timing off audio: silence onsets, token onsets, alignment.

Shared by the device tests and bench/bench_voice.py. Everything is measured on the
samples (1 ms envelopes, normalized correlation); no model is involved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE

MS = SAMPLE_RATE // 1000
Audio = npt.NDArray[np.float32]


def envelope(audio: npt.NDArray[Any]) -> Audio:
    """Peak of each millisecond."""
    arr = np.abs(np.asarray(audio, dtype=np.float32).reshape(-1))
    n = arr.size // MS
    return np.asarray(arr[: n * MS].reshape(n, MS).max(axis=1), dtype=np.float32)


def last_sound_before(
    audio: Audio, t: float, *, floor: float = 3e-3, window_s: float = 1.0
) -> float:
    """End (seconds) of the last millisecond louder than ``floor`` before ``t``: a silence onset."""
    a = max(0, round((t - window_s) * 1000))
    env = envelope(audio)[a : round(t * 1000)]
    loud = np.nonzero(env > floor)[0]
    return (a + int(loud[-1]) + 1) / 1000 if loud.size else t - window_s


def first_sound_after(
    audio: Audio, t: float, *, floor: float = 3e-3, window_s: float = 1.5
) -> float | None:
    """Start (seconds) of the first millisecond louder than ``floor`` at or after ``t``."""
    a = max(0, round(t * 1000))
    env = envelope(audio)[a : a + round(window_s * 1000)]
    loud = np.nonzero(env > floor)[0]
    return (a + int(loud[0])) / 1000 if loud.size else None


def locate(haystack: npt.NDArray[Any], needle: npt.NDArray[Any]) -> tuple[int, float]:
    """Sample offset where ``needle`` best matches in ``haystack``, and the normalized
    correlation there (1.0 = identical)."""
    from scipy.signal import correlate

    h = np.asarray(haystack, dtype=np.float64)
    k = np.asarray(needle, dtype=np.float64)
    if h.size < k.size or not k.any():
        return 0, 0.0
    corr = correlate(h, k, mode="valid", method="fft")
    # The haystack's energy under each needle position: a running sum, O(N) (a direct
    # convolution with ones is O(N·K): minutes for 30 s against 1 s at 16 kHz).
    power = np.concatenate(([0.0], np.cumsum(h * h)))
    energy = power[k.size :] - power[: power.size - k.size]
    score = corr / (np.sqrt(np.maximum(energy, 1e-12)) * np.linalg.norm(k))
    best = int(np.argmax(score))
    return best, float(score[best])


@dataclass(frozen=True)
class TokenTiming:
    silence_onset: float
    """Call time the agent's sound stopped before the pause."""
    token_onset: float
    """Call time the token's sound started, as read off the monitor."""
    score: float
    """How well the agent audio around the pause matched the monitor."""

    @property
    def latency_s(self) -> float:
        return self.token_onset - self.silence_onset


def token_onsets_on_monitor(
    monitor: Audio, agent: Audio, pauses: list[float], *, min_score: float = 0.95
) -> tuple[list[TokenTiming], int]:
    """For each pause (the call time its short pause fired), the agent's silence onset and
    the token's onset, both read off ``monitor`` (what the device played, recorded).

    The agent channel around each pause is matched in the monitor on its own (a
    recording can drop samples under load) and subtracted; the token is the first
    sound left after the silence onset. Returns the timings and how many pauses were
    skipped because the agent audio could not be matched there.
    """
    out: list[TokenTiming] = []
    skipped = 0
    first, _ = locate(monitor[: 30 * SAMPLE_RATE], agent[agent.nonzero()[0][0] :][:SAMPLE_RATE])
    shift = first - int(agent.nonzero()[0][0])  # monitor index of agent sample 0 (first guess)
    for fired in pauses:
        onset = last_sound_before(agent, fired)
        a = max(0, round((onset - 1.0) * SAMPLE_RATE))
        b = min(agent.size, round((onset + 0.8) * SAMPLE_RATE))
        segment = agent[a:b]
        lo = max(0, shift + a - SAMPLE_RATE)
        found, score = locate(
            monitor[lo : lo + segment.size + 2 * SAMPLE_RATE],
            segment[: round((onset - a / SAMPLE_RATE) * SAMPLE_RATE)],
        )
        if score < min_score:
            skipped += 1
            continue
        at = lo + found
        shift = at - a
        local = monitor[at : at + segment.size]
        residual = local - segment[: local.size]
        token = first_sound_after(residual, onset - a / SAMPLE_RATE, floor=1e-2)
        if token is None:
            skipped += 1
            continue
        out.append(TokenTiming(onset, token + a / SAMPLE_RATE, score))
    return out, skipped


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, int(np.ceil(q * len(ordered))) - 1))
    return ordered[k]


def describe_ms(values: list[float]) -> str:
    """``p50 N ms · p95 M ms`` of seconds."""
    import statistics

    return (
        f"p50 {statistics.median(values) * 1000:.0f} ms · "
        f"p95 {percentile(values, 0.95) * 1000:.0f} ms"
    )
