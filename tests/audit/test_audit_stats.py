"""The audit's statistics against values computed independently, on small fixed data."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from scipy import stats as sps

from replay.audit.counter import TurnCounts
from replay.audit.report import disfluency_row
from replay.audit.sessions import Conversation
from replay.audit.stats import (
    kendall_trend,
    paired_bootstrap_ci,
    paired_test,
    percentile_interval,
    resample_counts,
    vmr,
)

# Per conversation, per turn: (words, fillers, adjacent repetitions, turn-initial filler).
DATA: list[list[tuple[int, int, int, bool]]] = [
    [(12, 1, 0, True), (8, 0, 0, False), (20, 2, 1, False)],
    [(15, 0, 0, False)],
    [(9, 1, 1, True), (11, 0, 2, False)],
    [(30, 3, 0, False), (5, 0, 0, False), (7, 1, 0, True), (10, 0, 0, False)],
    [(14, 0, 1, False), (6, 0, 0, False)],
    [(25, 2, 2, True)],
]
Turn = tuple[int, int, int, bool]
SEED = 7
B = 500


def conversations() -> list[Conversation]:
    out = []
    for i, turns in enumerate(DATA):
        conv = Conversation(id=str(i), source="", kind="texts", header={})
        conv.turns = [TurnCounts(w, f, r, 0, 0, init) for w, f, r, init in turns]
        out.append(conv)
    return out


def naive_bootstrap(statistic: Callable[[list[Turn]], float | None]) -> tuple[float, float]:
    """Resample conversations in a plain loop, from the documented draw."""
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, len(DATA), size=(B, len(DATA)))
    values = []
    for row in picks:
        turns = [t for i in row for t in DATA[i]]
        value = statistic(turns)
        if value is not None:
            values.append(value)
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def combined_per_1k(turns: list[Turn]) -> float | None:
    words = sum(t[0] for t in turns)
    return 1000.0 * sum(t[1] + t[2] for t in turns) / words if words else None


def initial_share(turns: list[Turn]) -> float | None:
    fillers = sum(t[1] for t in turns)
    return sum(t[3] for t in turns) / fillers if fillers else None


def turn_vmr(turns: list[Turn]) -> float | None:
    counts = [t[1] + t[2] for t in turns]
    if len(counts) < 2 or statistics.mean(counts) == 0:
        return None
    return statistics.variance(counts) / statistics.mean(counts)


def test_the_disfluency_row_matches_a_naive_loop() -> None:
    row = disfluency_row({"alpha": 0.5}, conversations(), resamples=B, seed=SEED)
    flat = [t for conv in DATA for t in conv]
    words = sum(t[0] for t in flat)
    assert row["words"] == words == 172
    assert row["fillers_per_1k"] == pytest.approx(1000 * 10 / words)
    assert row["repetitions_per_1k"] == pytest.approx(1000 * 7 / words)
    assert row["combined_per_1k"] == pytest.approx(combined_per_1k(flat))
    assert row["initial_share"] == pytest.approx(4 / 10)
    assert row["any_share"] == pytest.approx(8 / 13)
    assert row["vmr"] == pytest.approx(turn_vmr(flat))
    assert row["combined_ci"] == pytest.approx(naive_bootstrap(combined_per_1k))
    assert row["initial_ci"] == pytest.approx(naive_bootstrap(initial_share))
    assert row["vmr_ci"] == pytest.approx(naive_bootstrap(turn_vmr))


def test_another_seed_gives_other_intervals_and_the_same_seed_the_same() -> None:
    a = disfluency_row({}, conversations(), resamples=B, seed=SEED)
    b = disfluency_row({}, conversations(), resamples=B, seed=SEED)
    c = disfluency_row({}, conversations(), resamples=B, seed=SEED + 1)
    assert a["combined_ci"] == b["combined_ci"]
    assert a["combined_ci"] != c["combined_ci"]


def test_resample_counts_are_the_documented_draw() -> None:
    counts = resample_counts(4, 3, seed=11)
    picks = np.random.default_rng(11).integers(0, 4, size=(3, 4))
    for b in range(3):
        assert list(counts[b]) == [int((picks[b] == i).sum()) for i in range(4)]
    assert counts.sum(axis=1).tolist() == [4, 4, 4]


def test_percentile_interval_skips_undefined_resamples() -> None:
    assert percentile_interval([1.0, float("nan"), 3.0]) == pytest.approx((1.05, 2.95))
    assert percentile_interval([float("nan")]) is None


def test_vmr() -> None:
    assert vmr([1, 1, 1, 1]) == 0.0
    assert vmr([0, 2, 0, 2]) == pytest.approx(statistics.variance([0, 2, 0, 2]) / 1.0)
    assert vmr([0, 0, 0]) is None
    assert vmr([3]) is None


def naive_tau_b(x: list[float], y: list[float]) -> float:
    """τ-b from its definition: (C - D) / sqrt((n0 - n1)(n0 - n2))."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            ties_x += 1
            ties_y += 1
        elif dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx * dy > 0:
            concordant += 1
        else:
            discordant += 1
    n0 = len(x) * (len(x) - 1) // 2
    return (concordant - discordant) / math.sqrt((n0 - ties_x) * (n0 - ties_y))


def test_kendall_tau_b_with_ties() -> None:
    strength = [0, 0, 0, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 1, 1, 1]
    realized = [0, 0, 10, 0, 25, 25, 40, 0, 55, 60, 100, 100.0]
    trend = kendall_trend(strength, realized)
    assert trend.n == 12
    assert trend.tau_b == pytest.approx(naive_tau_b(strength, realized))
    scipy_result = sps.kendalltau(strength, realized, variant="b")
    assert trend.tau_b == pytest.approx(scipy_result.statistic)
    assert trend.p == pytest.approx(scipy_result.pvalue)


def test_kendall_is_undefined_without_variation() -> None:
    assert kendall_trend([1, 1, 1], [1, 2, 3]).tau_b is None
    assert kendall_trend([1, 2, 3], [0, 0, 0]).p is None


def naive_w(d: Sequence[float]) -> float:
    """Smaller signed-rank sum; zeros dropped, ties share their average rank."""
    nz = [v for v in d if v != 0]
    order = sorted(abs(v) for v in nz)
    rank = {a: statistics.mean(i + 1 for i, b in enumerate(order) if b == a) for a in order}
    plus = sum(rank[abs(v)] for v in nz if v > 0)
    minus = sum(rank[abs(v)] for v in nz if v < 0)
    return min(plus, minus)


def test_wilcoxon_and_its_paired_bootstrap() -> None:
    treatment = [5, 3, 4, 6, 2, 3, 7, 4, 5, 3]
    baseline = [1, 3, 2, 1, 2, 0, 2, 5, 1, 1]
    d = [t - b for t, b in zip(treatment, baseline, strict=True)]
    test = paired_test(treatment, baseline, resamples=B, seed=SEED)
    assert test.pairs == 10
    assert test.nonzero == 8
    assert test.mean_diff == pytest.approx(statistics.mean(d))
    assert test.w == pytest.approx(naive_w(d))
    assert test.p == pytest.approx(sps.wilcoxon(d).pvalue)
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, len(d), size=(B, len(d)))
    means = [statistics.mean(d[i] for i in row) for row in picks]
    assert test.ci == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))
    assert paired_bootstrap_ci(d, resamples=B, seed=SEED) == test.ci


def test_wilcoxon_with_every_pair_equal_has_nothing_to_rank() -> None:
    test = paired_test([2, 3, 4], [2, 3, 4])
    assert (test.nonzero, test.w, test.p, test.mean_diff) == (0, None, None, 0.0)
