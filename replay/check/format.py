"""How a check's numbers read in every rendering (table, Markdown, JUnit)."""

from __future__ import annotations

from replay.check.evaluate import CheckRow
from sessions.hostile.inert_text import terminal_line


def number(value: float | None, unit: str = "") -> str:
    if value is None:
        return "—"
    text = f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:.0f}"
    return f"{text} {unit}".rstrip() if unit and unit != "/min" else text + unit


def interval(row: CheckRow) -> str:
    if row.interval is None:
        return "—"
    return f"[{number(row.interval[0])}, {number(row.interval[1])}]"


def cells(row: CheckRow) -> list[str]:
    """measure, expected, measured, interval, n, verdict, note: each one inert line."""
    return [
        terminal_line(c)
        for c in (
            row.measure,
            row.expected,
            number(row.measured, row.unit),
            interval(row),
            str(row.n),
            row.status,
            row.note,
        )
    ]


HEADERS = ["measure", "expected", "measured", "95% interval", "n", "verdict", "note"]


def table(rows: list[CheckRow]) -> str:
    """A plain-text table (no colour, no escape sequence), one line per expectation."""
    body = [HEADERS, *(cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in body) for i in range(len(HEADERS) - 1)]
    out = []
    for line in body:
        out.append(
            "  ".join(c.ljust(w) for c, w in zip(line[:-1], widths, strict=True)) + "  " + line[-1]
        )
    return "\n".join(s.rstrip() for s in out)


__all__ = ["HEADERS", "cells", "interval", "number", "table"]
