"""The human anchors of ``cutin audit --texts FILE --style human``: each figure of
conversational speech (docs/disfluency-styles.md) beside what a style realizes.

Everything is counted on the rendered text by :func:`replay.audit.counter.count`, never
read from insertion metadata, so the table measures what a listener would hear. Each
interval is a 95% percentile bootstrap over conversations (one shared set of
resamples, like the disfluency table's).

The **length-adjusted dispersion index** is Pearson's χ² over turns divided by its
degrees of freedom: with ``c_i`` the disfluencies of turn i, ``n_i`` its words and
``r = Σc / Σn`` the pooled rate, ``D = Σ (c_i − r·n_i)² / (r·n_i) / (T − 1)``. A
constant rate per word gives D ≈ 1 whatever the turn lengths are (the plain
variance-to-mean ratio grows with the spread of lengths alone); D > 1 means some
turns are more disfluent than their length explains.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from replay.audit.counter import TurnCounts
from replay.audit.stats import Interval, percentile_interval, resample_counts

if TYPE_CHECKING:
    from rich.table import Table

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Anchor:
    key: str
    label: str
    target: float
    source: str
    """Short provenance; docs/disfluency-styles.md says more."""


ANCHORS: tuple[Anchor, ...] = (
    Anchor("fillers_per_1k", "fillers / 1k words", 33.0, "issue target (see docs)"),
    Anchor("repetitions_per_1k", "repetitions / 1k words", 20.0, "issue target (see docs)"),
    Anchor("um_share", "um share of um+uh", 0.40, "our pick: uh outnumbers um (see docs)"),
    Anchor("initial_share", "unit-initial filler share", 0.16, "issue target (see docs)"),
    Anchor(
        "disfluencies_per_100",
        "disfluencies / 100 words",
        6.0,
        "Fox Tree 1995 (as commonly cited)",
    ),
    Anchor(
        "self_corrections_per_1k",
        "repairs+restarts / 1k words",
        7.0,
        "derived: 60 - 33 - 20",
    ),
    Anchor("dispersion", "length-adjusted dispersion", 1.4, "issue target (>= 1.4)"),
)
TOLERANCE = 0.15
"""An anchor is met when the realized point is within 15% of its target."""

# Columns of the per-conversation matrix.
_W, _F, _R, _UM, _UH, _I, _S, _T, _C, _C2N = range(10)


def conversation_sums(conversations: Sequence[Sequence[TurnCounts]]) -> FloatArray:
    """One row per conversation: the totals every anchor is a function of."""
    rows: list[list[float]] = []
    for turns in conversations:
        row = [0.0] * 10
        for t in turns:
            if t.words <= 0:
                continue
            c = float(t.disfluencies)
            row[_W] += t.words
            row[_F] += t.fillers
            row[_R] += t.repetitions
            row[_UM] += t.um
            row[_UH] += t.uh
            row[_I] += t.initial_filler
            row[_S] += t.self_corrections
            row[_T] += 1
            row[_C] += c
            row[_C2N] += c * c / t.words
        rows.append(row)
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), 10)


def _divide(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def anchor_values(totals: FloatArray) -> dict[str, FloatArray]:
    """Each anchor from column totals (shape ``(B, 10)``: one row per resample)."""
    w, f, r = totals[:, _W], totals[:, _F], totals[:, _R]
    um, uh, i, s = totals[:, _UM], totals[:, _UH], totals[:, _I], totals[:, _S]
    turns, c, c2n = totals[:, _T], totals[:, _C], totals[:, _C2N]
    rate = _divide(c, w)
    chi2 = _divide(c2n, rate) - c
    return {
        "fillers_per_1k": 1000.0 * _divide(f, w),
        "repetitions_per_1k": 1000.0 * _divide(r, w),
        "um_share": _divide(um, um + uh),
        "initial_share": _divide(i, f),
        "disfluencies_per_100": 100.0 * _divide(f + r + s, w),
        "self_corrections_per_1k": 1000.0 * _divide(s, w),
        "dispersion": _divide(chi2, turns - 1.0),
    }


@dataclass(frozen=True, slots=True)
class RealizedValue:
    value: float | None
    ci: Interval | None


def realized(
    conversations: Sequence[Sequence[TurnCounts]], *, resamples: int = 2000, seed: int = 0
) -> dict[str, RealizedValue]:
    """Every anchor's point value and bootstrap interval for one set of conversations."""
    m = conversation_sums(conversations)
    point = anchor_values(m.sum(axis=0, keepdims=True))
    boot = anchor_values(resample_counts(m.shape[0], resamples, seed).astype(np.float64) @ m)
    out: dict[str, RealizedValue] = {}
    for a in ANCHORS:
        v = float(point[a.key][0])
        out[a.key] = RealizedValue(
            None if not np.isfinite(v) else v, percentile_interval(boot[a.key])
        )
    return out


def within(anchor: Anchor, value: float | None) -> bool:
    return value is not None and abs(value - anchor.target) <= TOLERANCE * anchor.target


def anchor_rows(
    by_style: Mapping[str, Sequence[Sequence[TurnCounts]]],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> list[dict[str, object]]:
    """One JSON-ready row per anchor: target, then each style's value, interval and
    whether it is within tolerance."""
    measured = {
        style: realized(convs, resamples=resamples, seed=seed) for style, convs in by_style.items()
    }
    rows: list[dict[str, object]] = []
    for a in ANCHORS:
        row: dict[str, object] = {
            "anchor": a.key,
            "label": a.label,
            "target": a.target,
            "source": a.source,
        }
        for style, values in measured.items():
            got = values[a.key]
            row[style] = {
                "value": got.value,
                "ci": None if got.ci is None else list(got.ci),
                "within": within(a, got.value),
            }
        rows.append(row)
    return rows


def texts_anchor_rows(
    conversations: Sequence[Sequence[str]],
    alpha: float,
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> list[dict[str, object]]:
    """The anchors for a text file's conversations injected at ``alpha`` by both
    styles (the paper's rule beside the human style)."""
    from controls.disfluency import STYLES, inject_disfluency
    from replay.audit.counter import count

    by_style = {
        style: [
            [count(inject_disfluency(t, alpha, profile).rendered) for t in c] for c in conversations
        ]
        for style, profile in STYLES.items()
    }
    return anchor_rows(by_style, resamples=resamples, seed=seed)


def _cell(got: object, percent: bool) -> str:
    if not isinstance(got, dict) or got.get("value") is None:
        return "—"
    scale, digits = (100.0, 1) if percent else (1.0, 2)
    text = f"{scale * got['value']:.{digits}f}"
    ci = got.get("ci")
    if ci:
        text += f" [{scale * ci[0]:.{digits}f}, {scale * ci[1]:.{digits}f}]"
    return text + ("  ✓" if got.get("within") else "")


def anchor_table(rows: Sequence[dict[str, object]], alpha: float) -> Table:
    """The anchors as a rich table: target, then each style with its interval; ✓ marks
    a value within 15% of the target."""
    from rich.table import Table

    styles = (
        [k for k in rows[0] if k not in ("anchor", "label", "target", "source")] if rows else []
    )
    table = Table(title=f"human anchors at α={alpha:g} (95% bootstrap over conversations)")
    table.add_column("anchor")
    table.add_column("human target", justify="right")
    for style in styles:
        table.add_column(f"{style} style", justify="right")
    table.add_column("target from")
    for row in rows:
        percent = str(row["anchor"]).endswith("share")
        target = float(str(row["target"]))
        shown = f"{100 * target:.0f}%" if percent else f"{target:g}"
        label = str(row["label"]) + (" (%)" if percent else "")
        table.add_row(label, shown, *(_cell(row[s], percent) for s in styles), str(row["source"]))
    return table


__all__ = [
    "ANCHORS",
    "TOLERANCE",
    "Anchor",
    "RealizedValue",
    "anchor_rows",
    "anchor_table",
    "anchor_values",
    "conversation_sums",
    "realized",
    "texts_anchor_rows",
    "within",
]
