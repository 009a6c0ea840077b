"""Pooling and resampling for :mod:`replay.check.compare`: the audit's measures over a
run's calls, and the same measures over bootstrap resamples of them, vectorised.

Pure numpy over :class:`~replay.audit.agent_measures.AgentCall` s. :func:`pooled` is the
audit's own computation (:func:`~replay.audit.agent_measures.pooled_measures`);
:func:`resampled` gives each measure over each resample by the audit's definitions, and
at one pick of each call equals :func:`pooled` (tests/check/test_compare.py checks it
measure by measure). :func:`pairing` says which calls of two runs are the same calls.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from replay.audit.agent_measures import RATIOS, SUM_COLUMN, pooled_measures

if TYPE_CHECKING:
    from replay.audit.agent_measures import AgentCall
    from replay.check.compare import Side, Unit


def pooled(
    calls: Sequence[AgentCall], totals: np.ndarray[Any, Any] | None = None
) -> dict[str, Any]:
    """The audit's pooled measures of these calls (a call listed twice counts twice):
    exactly what :func:`~replay.audit.agent_measures.condition_row` computes for a
    condition, without its own interval."""
    if totals is None:
        totals = np.asarray([c.sums() for c in calls], dtype=np.float64).sum(axis=0)
    yields = [v for c in calls for v in c.yield_latencies]
    responses = [v for c in calls for v in c.response_latencies]
    return {
        "calls": len(calls),
        **pooled_measures([float(v) for v in totals], yields, responses, calls),
    }


def ratio(num: np.ndarray[Any, Any], den: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def event_percentiles(
    counts: np.ndarray[Any, Any], lists: Sequence[Sequence[float]], q: float
) -> np.ndarray[Any, Any]:
    """The ``q`` percentile of each resample's pooled events (a call picked k times
    counts its events k times), as ``numpy.percentile``'s default linear interpolation
    gives it (the audit's medians and p95): the sorted events weighted by their call's
    picks, read at rank ``(n − 1)·q/100`` — vectorised, in chunks of bounded memory."""
    values = np.asarray([v for vs in lists for v in vs], dtype=np.float64)
    owner = np.repeat(np.arange(len(lists)), [len(vs) for vs in lists])
    out = np.full(counts.shape[0], np.nan)
    if not values.size:
        return out
    order = np.argsort(values, kind="stable")
    v, own = values[order], owner[order]
    chunk = max(1, 2_000_000 // v.size)
    for start in range(0, counts.shape[0], chunk):
        cw = np.cumsum(counts[start : start + chunk][:, own], axis=1)
        n = cw[:, -1]
        h = np.maximum(n - 1, 0) * (q / 100.0)
        lo = np.floor(h)
        i_lo = (cw > lo[:, None]).argmax(axis=1)
        i_hi = (cw > np.minimum(lo + 1, np.maximum(n - 1, 0))[:, None]).argmax(axis=1)
        value = v[i_lo] + (h - lo) * (v[i_hi] - v[i_lo])
        out[start : start + chunk] = np.where(n > 0, value, np.nan)
    return out


def resampled(
    units: Sequence[Unit], counts: np.ndarray[Any, Any], names: Sequence[str]
) -> np.ndarray[Any, Any]:
    """``(resamples, measures)``: each measure over each resample's calls (NaN: undefined),
    by the audit's definitions (its ratio table over the pooled sums; medians and p95
    over the pooled events), vectorised over resamples. At one pick of each call it is
    :func:`pooled`'s value (tests/check/test_compare.py checks it measure by measure)."""
    calls = [u.agent for u in units]
    w = counts.astype(np.float64)
    totals = w @ np.asarray([c.sums() for c in calls], dtype=np.float64)
    extra = w @ np.asarray(
        [
            [
                math.fsum(c.backchannel_response_latencies),
                len(c.backchannel_response_latencies),
                *(c.selectivity.get(k, [0, 0])[i] for k in SELECTIVE for i in (0, 1)),
            ]
            for c in calls
        ],
        dtype=np.float64,
    )
    gaps = np.asarray([max(c.dead_air_gaps, default=-np.inf) for c in calls], dtype=np.float64)
    out = np.full((counts.shape[0], len(names)), np.nan)
    for j, name in enumerate(names):
        if name in RATIOS:
            num, den, scale = RATIOS[name]
            out[:, j] = scale * ratio(totals[:, SUM_COLUMN[num]], totals[:, SUM_COLUMN[den]])
        elif name == "selectivity_backchannel":
            fy = ratio(
                totals[:, SUM_COLUMN["false_yields"]], totals[:, SUM_COLUMN["backchannel_total"]]
            )
            out[:, j] = 1.0 - fy
        elif name == "backchannel_response_latency_mean":
            out[:, j] = ratio(extra[:, 0], extra[:, 1])
        elif name.startswith("selectivity_") and name[12:] in SELECTIVE:
            k = 2 + 2 * SELECTIVE.index(name[12:])
            out[:, j] = 1.0 - ratio(extra[:, k + 1], extra[:, k])
        elif name == "dead_air_max_gap_s":
            picked = np.where(counts > 0, gaps[None, :], -np.inf).max(axis=1)
            out[:, j] = np.where(np.isfinite(picked), picked, np.nan)
        elif name in EVENT_LISTS:
            attr, q = EVENT_LISTS[name]
            out[:, j] = event_percentiles(counts, [getattr(c, attr) for c in calls], q)
        else:  # a measure this table does not know: no interval (never a wrong one)
            continue
    return out


SELECTIVE = ("vocal_tic", "non_directed")
EVENT_LISTS = {
    "yield_latency_median": ("yield_latencies", 50.0),
    "yield_latency_p95": ("yield_latencies", 95.0),
    "response_latency_median": ("response_latencies", 50.0),
}


@dataclass(frozen=True, slots=True)
class Pairing:
    """The calls of both runs that pair by (scenario, seed), in matching order, and the
    rest of each."""

    base: list[Unit]
    new: list[Unit]
    base_rest: list[Unit]
    new_rest: list[Unit]


def pairing(base: Side, new: Side) -> Pairing:
    """A call pairs when its (scenario, seed) names exactly one call in each run."""

    def once(side: Side) -> dict[tuple[str, int], Unit]:
        seen: dict[tuple[str, int], list[Unit]] = {}
        for u in side.units:
            if u.key is not None:
                seen.setdefault(u.key, []).append(u)
        return {k: us[0] for k, us in seen.items() if len(us) == 1}

    b, n = once(base), once(new)
    keys = [u.key for u in base.units if u.key in b and u.key in n]
    return Pairing(
        [b[k] for k in keys if k is not None],
        [n[k] for k in keys if k is not None],
        [u for u in base.units if u.key not in keys],
        [u for u in new.units if u.key not in keys],
    )


__all__ = [
    "EVENT_LISTS",
    "SELECTIVE",
    "Pairing",
    "event_percentiles",
    "pairing",
    "pooled",
    "ratio",
    "resampled",
]
