"""The statistics of an audit: pure functions over numbers, no logs, no printing.

**Bootstrap over conversations.** Turns of one conversation share a persona and a
history, so intervals resample whole conversations, never turns. For ``C``
conversations and ``B`` resamples the draw is, exactly::

    rng = numpy.random.default_rng(seed)
    picks = rng.integers(0, C, size=(B, C))      # row b = the conversations of resample b

and a resample's statistic pools the turns of the conversations it picked (a
conversation picked twice counts twice). The interval is the 2.5th and 97.5th
percentile (numpy's default linear interpolation) of the resample statistics that
are defined (a resample with no words has no rate); with none defined it is None.
Computation is vectorised: a ``(B, C)`` matrix of pick counts times the per-
conversation sums gives every resample's sums at once.

**Variance-to-mean ratio** of per-turn counts: sample variance (``ddof=1``) over the
mean; None when the mean is 0 or there are fewer than two turns. 1 is what
independent placement at a constant rate gives.

**Trend**: Kendall's τ-b (``scipy.stats.kendalltau(variant="b")``) between the
configured strength and the realized per-observation value.

**Paired test**: two-sided Wilcoxon signed-rank (``scipy.stats.wilcoxon``, zero
differences dropped, as scipy's default ``zero_method="wilcox"``) on treatment minus
baseline per pair, with ``W`` the smaller signed-rank sum, and a paired-bootstrap
interval of the mean difference (pairs resampled as above).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
LEVEL = 0.95
MIN_EVENTS = 10
"""A rate over fewer events than this is printed as its count, with no interval
(τ-Voice hides such rates too): with so few, a bootstrap interval is mostly the
handful of events themselves (one call gives ``[100.0, 100.0]``)."""

FloatArray = npt.NDArray[np.float64]
Interval = tuple[float, float]


def resample_counts(n_units: int, resamples: int, seed: int) -> npt.NDArray[np.int64]:
    """How often each unit appears in each resample: a ``(resamples, n_units)`` matrix.

    Row ``b`` counts the picks ``rng.integers(0, n_units, size=(resamples, n_units))[b]``
    of a fresh ``numpy.random.default_rng(seed)`` (see the module docstring)."""
    if n_units <= 0 or resamples <= 0:
        return np.zeros((max(resamples, 0), max(n_units, 0)), dtype=np.int64)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_units, size=(resamples, n_units))
    flat = picks + (np.arange(resamples, dtype=np.int64) * n_units)[:, None]
    counts = np.bincount(flat.ravel(), minlength=resamples * n_units)
    return counts.reshape(resamples, n_units)


def percentile_interval(values: npt.ArrayLike, level: float = LEVEL) -> Interval | None:
    """The central ``level`` interval of the finite values, or None if there are none."""
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(arr, [tail, 100.0 - tail])
    return (float(lo), float(hi))


def _safe_divide(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def too_few(events: float, units: int | None = None) -> str | None:
    """Why a rate counting ``events`` is printed as its count (and an interval over
    ``units`` resampled conversations, calls or pairs is not shown); None when not."""
    if events < MIN_EVENTS:
        return f"{events:g} event{'s' if events != 1 else ''} (fewer than {MIN_EVENTS})"
    if units is not None and units < 2:
        return "one conversation: resampling it cannot vary"
    return None


def ratio(num: float, den: float, scale: float = 1.0) -> float | None:
    """``scale * num / den``, or None when ``den`` is 0."""
    return scale * num / den if den else None


def vmr(counts: Sequence[float] | npt.ArrayLike) -> float | None:
    """Variance-to-mean ratio (sample variance, ddof=1) of per-turn counts."""
    arr = np.asarray(counts, dtype=np.float64)
    if arr.size < 2:
        return None
    mean = float(arr.mean())
    if mean == 0.0:
        return None
    return float(arr.var(ddof=1)) / mean


def vmr_from_sums(n: FloatArray, s: FloatArray, q: FloatArray) -> FloatArray:
    """VMR from turn count ``n``, sum ``s`` and sum of squares ``q`` (elementwise)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s / n
        var = (q - s * s / n) / (n - 1)
        out = var / mean
    out[(n < 2) | ~np.isfinite(out) | (s == 0)] = np.nan
    return out


@dataclass(frozen=True, slots=True)
class ConversationSums:
    """Per-conversation totals the disfluency statistics are built from (length C each)."""

    words: FloatArray
    fillers: FloatArray
    repetitions: FloatArray
    initial_fillers: FloatArray
    turns: FloatArray
    turns_with_any: FloatArray
    sum_combined: FloatArray
    """Sum over turns of (fillers + repetitions)."""
    sum_combined_sq: FloatArray
    """Sum over turns of (fillers + repetitions) squared."""

    def matrix(self) -> FloatArray:
        return np.column_stack(
            [
                self.words,
                self.fillers,
                self.repetitions,
                self.initial_fillers,
                self.turns,
                self.turns_with_any,
                self.sum_combined,
                self.sum_combined_sq,
            ]
        )


@dataclass(frozen=True, slots=True)
class DisfluencyStats:
    """The disfluency row's numbers for one condition."""

    conversations: int
    turns: int
    words: int
    fillers: int
    repetitions: int
    initial_fillers: int
    fillers_per_1k: float | None
    repetitions_per_1k: float | None
    combined_per_1k: float | None
    combined_ci: Interval | None
    initial_share: float | None
    initial_ci: Interval | None
    any_share: float | None
    vmr: float | None
    vmr_ci: Interval | None


def disfluency_stats(
    sums: ConversationSums, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> DisfluencyStats:
    """Rates per 1,000 words, shares and VMR, each interval bootstrapped over
    conversations with one shared set of resamples."""
    m = sums.matrix()
    total = m.sum(axis=0)
    words, fillers, reps, initial, turns, anyt, sc, sq = (float(v) for v in total)
    c = m.shape[0]
    boot = resample_counts(c, resamples, seed).astype(np.float64) @ m if c else np.zeros((0, 8))
    combined_b = 1000.0 * _safe_divide(boot[:, 1] + boot[:, 2], boot[:, 0])
    initial_b = _safe_divide(boot[:, 3], boot[:, 1])
    vmr_b = vmr_from_sums(boot[:, 4], boot[:, 6], boot[:, 7])
    point_vmr = vmr_from_sums(np.array([turns]), np.array([sc]), np.array([sq]))[0]
    return DisfluencyStats(
        conversations=c,
        turns=int(turns),
        words=int(words),
        fillers=int(fillers),
        repetitions=int(reps),
        initial_fillers=int(initial),
        fillers_per_1k=ratio(fillers, words, 1000.0),
        repetitions_per_1k=ratio(reps, words, 1000.0),
        combined_per_1k=ratio(fillers + reps, words, 1000.0),
        combined_ci=percentile_interval(combined_b) if words else None,
        initial_share=ratio(initial, fillers),
        initial_ci=percentile_interval(initial_b) if fillers else None,
        any_share=ratio(anyt, turns),
        vmr=None if math.isnan(point_vmr) else float(point_vmr),
        vmr_ci=percentile_interval(vmr_b),
    )


@dataclass(frozen=True, slots=True)
class Trend:
    """Kendall's τ-b between configured strength and realized value."""

    n: int
    tau_b: float | None
    p: float | None


def kendall_trend(strength: Sequence[float], realized: Sequence[float]) -> Trend:
    """τ-b and its two-sided p; None when either side is constant or n < 2."""
    from scipy.stats import kendalltau

    n = len(strength)
    if n != len(realized):
        raise ValueError("strength and realized must have the same length")
    if n < 2 or len(set(strength)) < 2 or len(set(realized)) < 2:
        return Trend(n, None, None)
    result = kendalltau(strength, realized, variant="b")
    return Trend(n, _finite(float(result.statistic)), _finite(float(result.pvalue)))


@dataclass(frozen=True, slots=True)
class PairedTest:
    """Treatment against baseline, paired (e.g. by scenario)."""

    pairs: int
    nonzero: int
    mean_diff: float | None
    ci: Interval | None
    w: float | None
    p: float | None


def paired_bootstrap_ci(
    diffs: Sequence[float] | FloatArray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """Interval of the mean difference, resampling pairs."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.size == 0:
        return None
    counts = resample_counts(d.size, resamples, seed).astype(np.float64)
    return percentile_interval(counts @ d / d.size)


def paired_test(
    treatment: Sequence[float],
    baseline: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedTest:
    """Wilcoxon signed-rank on ``treatment - baseline`` plus a paired-bootstrap CI.
    With no nonzero difference there is nothing to rank: W and p are None."""
    from scipy.stats import wilcoxon

    t = np.asarray(treatment, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if t.shape != b.shape:
        raise ValueError("treatment and baseline must pair up")
    d = t - b
    nonzero = int(np.count_nonzero(d))
    w = p = None
    if nonzero:
        result = wilcoxon(d)
        w, p = _finite(float(result.statistic)), _finite(float(result.pvalue))
    return PairedTest(
        pairs=int(d.size),
        nonzero=nonzero,
        mean_diff=float(d.mean()) if d.size else None,
        ci=paired_bootstrap_ci(d, resamples=resamples, seed=seed),
        w=w,
        p=p,
    )


__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "LEVEL",
    "MIN_EVENTS",
    "ConversationSums",
    "DisfluencyStats",
    "Interval",
    "PairedTest",
    "Trend",
    "disfluency_stats",
    "kendall_trend",
    "paired_bootstrap_ci",
    "paired_test",
    "percentile_interval",
    "ratio",
    "resample_counts",
    "too_few",
    "vmr",
    "vmr_from_sums",
]
