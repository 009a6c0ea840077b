"""The batch page's plots as inline SVG: no library, no script, no external resource.

Two kinds, both on plain linear axes whose tick labels a reader (or a test) can read
the scale back from:

* :func:`cdf_svg`: the empirical distribution (CDF) of one measure per condition, a
  step line each, with reference values (τ-Voice's published figures,
  :mod:`.tau_voice_reference`) as dashed vertical lines;
* :func:`rates_svg`: realized rates against the configured dial (the shape of
  τ-Voice's Table 2: each dial's configured strength, the rate it realized), a point per
  condition with its 95% interval as a bar.

Every text is escaped; a value that is not a finite number is left out, never drawn
at NaN. Coordinates are rounded to 0.01 px.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

PALETTE = ("#1a5fb4", "#c64600", "#26a269", "#813d9c", "#986a44", "#e01b24", "#3d8eb9", "#5e5c64")
"""A colour per condition, in order (the same condition keeps its colour on a page)."""
REF_COLOUR = "#b3261e"
WIDTH = 640
HEIGHT = 240
MARGIN = (16, 20, 40, 48)
"""top, right, bottom, left (px)."""


def _h(text: object) -> str:
    return html.escape(str(text), quote=True)


def _c(v: float) -> str:
    """A coordinate: two decimals, no trailing zeros."""
    return f"{v:.2f}".rstrip("0").rstrip(".")


def finite(values: Sequence[float | None]) -> list[float]:
    """The values that are finite numbers (None, NaN and infinities dropped)."""
    return [float(v) for v in values if isinstance(v, int | float) and math.isfinite(v)]


def nice_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Round tick values covering ``[lo, hi]``: steps of 1, 2 or 5 × 10^k, at most
    ``most`` + 1 of them."""
    if not hi > lo:
        hi = lo + 1.0
    raw = (hi - lo) / most
    k = 10 ** math.floor(math.log10(raw))
    step = next(m * k for m in (1, 2, 5, 10) if m * k >= raw)
    first = math.floor(lo / step + 1e-9) * step
    out: list[float] = []
    v = first
    while v <= hi + step * 1e-9:
        out.append(round(v, 10))
        v += step
    if out[-1] < hi - step * 1e-9:
        out.append(round(out[-1] + step, 10))
    return out


def _tick_label(v: float) -> str:
    return f"{v:.6g}"


@dataclass(frozen=True, slots=True)
class Axis:
    """A linear map of values ``[lo, hi]`` onto pixels ``[p0, p1]``."""

    lo: float
    hi: float
    p0: float
    p1: float

    def __call__(self, v: float) -> float:
        return self.p0 + (v - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)


@dataclass(frozen=True, slots=True)
class Reference:
    """A published value drawn as a dashed line."""

    label: str
    value: float


def _frame(
    x: Axis, y: Axis, x_ticks: Sequence[float], y_ticks: Sequence[float], x_label: str, y_label: str
) -> list[str]:
    out = [
        f'<line class="axis" x1="{_c(x.p0)}" y1="{_c(y.p0)}" x2="{_c(x.p1)}" y2="{_c(y.p0)}" '
        'stroke="#55606b"/>',
        f'<line class="axis" x1="{_c(x.p0)}" y1="{_c(y.p0)}" x2="{_c(x.p0)}" y2="{_c(y.p1)}" '
        'stroke="#55606b"/>',
    ]
    for t in x_ticks:
        px = x(t)
        out.append(
            f'<line x1="{_c(px)}" y1="{_c(y.p0)}" x2="{_c(px)}" y2="{_c(y.p1)}" stroke="#eceae4"/>'
            f'<text class="xtick" data-value="{_tick_label(t)}" x="{_c(px)}" y="{_c(y.p0 + 14)}" '
            f'text-anchor="middle">{_tick_label(t)}</text>'
        )
    for t in y_ticks:
        py = y(t)
        out.append(
            f'<line x1="{_c(x.p0)}" y1="{_c(py)}" x2="{_c(x.p1)}" y2="{_c(py)}" stroke="#eceae4"/>'
            f'<text class="ytick" data-value="{_tick_label(t)}" x="{_c(x.p0 - 6)}" '
            f'y="{_c(py)}" dy="0.35em" text-anchor="end">{_tick_label(t)}</text>'
        )
    out.append(
        f'<text x="{_c((x.p0 + x.p1) / 2)}" y="{_c(y.p0 + 32)}" text-anchor="middle">'
        f"{_h(x_label)}</text>"
        f'<text x="12" y="{_c((y.p0 + y.p1) / 2)}" text-anchor="middle" '
        f'transform="rotate(-90 12 {_c((y.p0 + y.p1) / 2)})">{_h(y_label)}</text>'
    )
    return out


def _svg(label: str, body: Sequence[str], width: int, height: int) -> str:
    return (
        f'<svg role="img" aria-label="{_h(label)}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="system-ui,sans-serif" font-size="11" fill="#1d232a" class="plot">'
        f"<title>{_h(label)}</title>" + "".join(body) + "</svg>"
    )


def cdf_svg(
    label: str,
    series: Sequence[tuple[str, Sequence[float | None]]],
    references: Sequence[Reference] = (),
    *,
    unit: str = "s",
    width: int = WIDTH,
    height: int = HEIGHT,
) -> str:
    """The empirical CDF of each series (a condition's values) as a step line, the
    references as dashed vertical lines; "" when no series has a finite value."""
    data = [(name, sorted(finite(values))) for name, values in series]
    data = [(name, values) for name, values in data if values]
    if not data:
        return ""
    refs = [r for r in references if math.isfinite(r.value)]
    top = max([v for _, vs in data for v in vs] + [r.value for r in refs])
    x_ticks = nice_ticks(0.0, top * 1.05 if top > 0 else 1.0)
    t, r, b, left = MARGIN
    x = Axis(0.0, x_ticks[-1], left, width - r)
    y = Axis(0.0, 1.0, height - b, t)
    body = _frame(x, y, x_ticks, [0, 0.25, 0.5, 0.75, 1], f"{label} ({unit})", "share of events")
    for i, (name, values) in enumerate(data):
        colour = PALETTE[i % len(PALETTE)]
        n = len(values)
        points = [f"{_c(x(0.0))},{_c(y(0.0))}"]
        for k, v in enumerate(values):
            points.append(f"{_c(x(v))},{_c(y(k / n))}")
            points.append(f"{_c(x(v))},{_c(y((k + 1) / n))}")
        points.append(f"{_c(x.p1)},{_c(y(1.0))}")
        body.append(
            f'<polyline class="cdf" data-series="{_h(name)}" data-n="{n}" fill="none" '
            f'stroke="{colour}" stroke-width="1.8" points="{" ".join(points)}">'
            f"<title>{_h(name)}: {n} events</title></polyline>"
        )
    for i, (name, values) in enumerate(data):  # the legend, bottom right
        ly = y.p0 - 10 - 14 * (len(data) - 1 - i)
        colour = PALETTE[i % len(PALETTE)]
        body.append(
            f'<line x1="{_c(x.p1 - 150)}" y1="{_c(ly - 4)}" x2="{_c(x.p1 - 134)}" '
            f'y2="{_c(ly - 4)}" stroke="{colour}" stroke-width="2.5"/>'
            f'<text class="legend" x="{_c(x.p1 - 130)}" y="{_c(ly)}">{_h(name)} '
            f"(n {len(values)})</text>"
        )
    for k, ref in enumerate(refs):
        px = x(ref.value)
        body.append(
            f'<line class="ref" data-value="{ref.value:g}" x1="{_c(px)}" y1="{_c(y.p0)}" '
            f'x2="{_c(px)}" y2="{_c(y.p1)}" stroke="{REF_COLOUR}" stroke-dasharray="5 3" '
            f'stroke-width="1.4"><title>{_h(ref.label)}: {ref.value:g} {_h(unit)}</title></line>'
            f'<text class="ref-label" x="{_c(px + 4)}" y="{_c(y.p1 + 12 + 12 * k)}" '
            f'fill="{REF_COLOUR}">{_h(ref.label)} {ref.value:g} {_h(unit)}</text>'
        )
    return _svg(label, body, width, height)


@dataclass(frozen=True, slots=True)
class RatePoint:
    """One condition's realized rate at its configured dial, with its interval."""

    label: str
    configured: float
    realized: float | None
    interval: tuple[float, float] | None = None
    events: int = 0


def rates_svg(
    label: str,
    dial: str,
    points: Sequence[RatePoint],
    *,
    width: int = 320,
    height: int = HEIGHT,
) -> str:
    """Realized rate (y) against the configured dial (x, 0 to 1), a point per condition
    with its interval as a vertical bar; "" when no point has a value."""
    shown = [p for p in points if p.realized is not None and math.isfinite(p.realized)]
    if not shown:
        return ""
    highs = [p.realized for p in shown if p.realized is not None]
    highs += [p.interval[1] for p in shown if p.interval and math.isfinite(p.interval[1])]
    y_ticks = nice_ticks(0.0, max(max(highs), 0.1), most=5)
    t, r, b, left = MARGIN
    x = Axis(-0.05, 1.05, left, width - r)
    y = Axis(0.0, y_ticks[-1], height - b, t)
    body = _frame(x, y, [0, 0.25, 0.5, 0.75, 1], y_ticks, f"configured {dial}", label)
    for p in shown:
        assert p.realized is not None
        px, py = x(p.configured), y(p.realized)
        tip = f"{p.label}: {p.realized:.3f}"
        if p.interval is not None and all(math.isfinite(v) for v in p.interval):
            lo, hi = y(p.interval[0]), y(p.interval[1])
            tip += f" [{p.interval[0]:.3f}, {p.interval[1]:.3f}]"
            body.append(
                f'<line class="ci" x1="{_c(px)}" y1="{_c(lo)}" x2="{_c(px)}" y2="{_c(hi)}" '
                'stroke="#55606b" stroke-width="1.4"/>'
                f'<line x1="{_c(px - 4)}" y1="{_c(lo)}" x2="{_c(px + 4)}" y2="{_c(lo)}" '
                'stroke="#55606b"/>'
                f'<line x1="{_c(px - 4)}" y1="{_c(hi)}" x2="{_c(px + 4)}" y2="{_c(hi)}" '
                'stroke="#55606b"/>'
            )
        body.append(
            f'<circle class="pt" data-configured="{p.configured:g}" '
            f'data-realized="{p.realized:.6g}" cx="{_c(px)}" cy="{_c(py)}" r="4" '
            f'fill="#1a5fb4"><title>{_h(tip)} ({p.events} events)</title></circle>'
        )
    return _svg(f"{label} by configured {dial}", body, width, height)


__all__ = [
    "PALETTE",
    "Axis",
    "RatePoint",
    "Reference",
    "cdf_svg",
    "finite",
    "nice_ticks",
    "rates_svg",
]
