"""Lay a call's timeline out as rows of character cells (pure; the widget draws them).

One cell is ``cell_s`` seconds (0.2 s: a 200 ms short pause is about one cell).
The window ends at "now" and scrolls left as the call goes on; its start snaps to
whole cells so the picture does not shimmer between frames.

Rows: ``time`` (a ruler every 5 s), ``agent`` (speech blocks, ✂ where it was cut),
``you`` (the caller's speech ━, ▲ interruptions, ◆ backchannels) and ``pauses``
(· a short pause; at an opportunity ○ not taken, ◆/▲ taken, ✕ decided but not
taken; │ a turn end). Each cell carries a style name the widget maps to CSS.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from cutin_tui.views.call_view import OpportunityMark, TimelineData

CELL_S = 0.2
RULER_EVERY_S = 5.0
ROWS = ("time", "agent", "you", "pauses")
LEGEND = "█ agent  ━ you  · pause  ○ not taken  ◆ backchannel  ▲ interruption  ✂ cut  │ turn end"
LINE_LEGEND = LEGEND.replace("✂ cut", "✂ cut  ■ it stopped")
"""For an agent on a line: ■ where its audio actually stopped after a cut or a backchannel."""

Cell = tuple[str, str]
"""(character, style name); style "" is plain."""
Run = tuple[str, str]
"""(text, style name): consecutive cells of one style."""

T = TypeVar("T")


def window_start(now: float, cells: int, cell_s: float = CELL_S) -> float:
    """Start of the window whose last cell holds ``now``."""
    last = math.floor(max(0.0, now) / cell_s + 1e-9)
    return round(max(0, last + 1 - cells) * cell_s, 9)


def _from(items: Sequence[T], start: float, key: Callable[[T], float]) -> int:
    """Index of the first item whose key is ≥ start (items sorted by key)."""
    return bisect.bisect_left(items, start, key=key)


def _cell(t: float, start: float, cell_s: float) -> int:
    return math.floor((t - start) / cell_s + 1e-9)


def layout(
    data: TimelineData, now: float, cells: int, cell_s: float = CELL_S
) -> dict[str, list[Cell]]:
    """Every row's cells for the window ending at ``now``."""
    cells = max(0, cells)
    start = window_start(now, cells, cell_s)
    end = start + cells * cell_s
    rows: dict[str, list[Cell]] = {name: [(" ", "")] * cells for name in ROWS}

    def put(row: str, t: float, char: str, style: str) -> None:
        i = _cell(t, start, cell_s)
        if 0 <= i < cells:
            rows[row][i] = (char, style)

    _ruler(rows["time"], start, end, cell_s)
    _agent(rows["agent"], data.agent, start, cell_s)
    for t in data.cuts[_from(data.cuts, start, float) :]:
        put("agent", t, "✂", "cut")
    for t in data.stops[_from(data.stops, start, float) :]:
        put("agent", t, "■", "stop")

    you = rows["you"]
    for s, e, source in data.user:
        if e < start or s >= end:
            continue
        style = "user-interrupt" if source == "interruption" else "user"
        for i in range(max(0, _cell(s, start, cell_s)), min(cells, _cell(e, start, cell_s) + 1)):
            you[i] = ("━", style)
    for t, _ in data.backchannels[_from(data.backchannels, start, lambda b: b[0]) :]:
        put("you", t, "◆", "backchannel")
    for t, _ in data.interruptions[_from(data.interruptions, start, lambda b: b[0]) :]:
        put("you", t, "▲", "interrupt")

    for t in data.turn_ends[_from(data.turn_ends, start, float) :]:
        put("pauses", t, "│", "turn-end")
    for t, index in data.pauses[_from(data.pauses, start, lambda p: p[0]) :]:
        mark = data.opportunities.get(index)
        if mark is None:
            put("pauses", t, "·", "pause")
        else:
            put("pauses", t, *_opportunity_glyph(mark))
    for mark in data.polls[_from(data.polls, start, lambda m: m.t) :]:
        put("pauses", mark.t, *_opportunity_glyph(mark))
    return rows


def _opportunity_glyph(mark: OpportunityMark) -> Cell:
    if mark.decision == "NOTHING":
        return ("○", "opportunity-end" if mark.at_turn_end else "opportunity")
    if not mark.executed:
        return ("✕", "opportunity")
    if mark.decision == "INTERRUPT":
        return ("▲", "interrupt")
    return ("◆", "backchannel")


def _ruler(row: list[Cell], start: float, end: float, cell_s: float) -> None:
    mark = math.ceil(start / RULER_EVERY_S - 1e-9) * RULER_EVERY_S
    while mark < end:
        i = _cell(mark, start, cell_s)
        label = f"╹{mark:.0f}s"
        for k, ch in enumerate(label):
            if 0 <= i + k < len(row):
                row[i + k] = (ch, "tick")
        mark += RULER_EVERY_S


def _agent(row: list[Cell], words: list[tuple[float, float]], start: float, cell_s: float) -> None:
    """Speech blocks: full █ when both halves of a cell are mostly speech, ▌/▐ for one."""
    half = cell_s / 2
    first = bisect.bisect_right(words, start, key=lambda w: w[1])
    cells = len(row)
    for s, e in words[first:]:
        i0 = max(0, _cell(s, start, cell_s))
        if i0 >= cells:
            break
        i1 = min(cells - 1, _cell(e, start, cell_s))
        for i in range(i0, i1 + 1):
            c0 = start + i * cell_s
            left = max(0.0, min(e, c0 + half) - max(s, c0))
            right = max(0.0, min(e, c0 + cell_s) - max(s, c0 + half))
            _add_cover(row, i, left, right, half)


def _add_cover(row: list[Cell], i: int, left: float, right: float, half: float) -> None:
    # A cell's char is recomputed from what it held: ▌ + ▐ make █.
    has_left = row[i][0] in ("█", "▌") or left >= half * 0.5
    has_right = row[i][0] in ("█", "▐") or right >= half * 0.5
    if has_left and has_right:
        row[i] = ("█", "agent")
    elif has_left:
        row[i] = ("▌", "agent")
    elif has_right:
        row[i] = ("▐", "agent")


def runs(cells: Sequence[Cell]) -> list[Run]:
    """Merge consecutive cells of the same style into runs of text."""
    out: list[Run] = []
    for char, style in cells:
        if out and out[-1][1] == style:
            out[-1] = (out[-1][0] + char, style)
        else:
            out.append((char, style))
    return out
