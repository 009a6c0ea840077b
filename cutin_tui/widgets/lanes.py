"""Two lanes (agent / caller) of a gallery example, drawn in the terminal.

The geometry (which cell is speech, overlap or a backchannel, where the marks
and ticks go) is :mod:`replay.timeline.lanes`, shared with the handout and report SVGs;
this widget only picks glyphs and colours. During live play ``until`` is the
playhead: nothing after it is drawn yet.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from replay.timeline.lanes import (
    Cell,
    MarkKind,
    Timeline,
    column,
    lane_cells,
    mark_cells,
    ticks,
)

LABEL = 8
"""Columns for the lane labels."""
GLYPH = {
    Cell.EMPTY: "╌",
    Cell.SPEECH: "█",
    Cell.OVERLAP: "▓",
    Cell.BACKCHANNEL: "▆",
}
MARK_GLYPH = {
    MarkKind.PAUSE: "·",
    MarkKind.INTERRUPTION: "▲",
    MarkKind.BACKCHANNEL: "◆",
    MarkKind.CUT: "✕",
    MarkKind.STOP: "■",
    MarkKind.TALKED_ON: "▶",
    MarkKind.FALSE_YIELD: "■",
    MarkKind.NO_RESPONSE: "✕",
}
LANE_STYLE = {"agent": "bold #5b8fd6", "caller": "bold #3fae6a"}
CELL_STYLE = {Cell.EMPTY: "#4a4f57", Cell.OVERLAP: "bold #e8923a", Cell.BACKCHANNEL: "#a77bd4"}
MARK_STYLE = {
    MarkKind.PAUSE: "#8b929a",
    MarkKind.INTERRUPTION: "bold #e0533f",
    MarkKind.BACKCHANNEL: "bold #a77bd4",
    MarkKind.CUT: "bold #e0533f",
    MarkKind.STOP: "bold #9a6700",
    MarkKind.TALKED_ON: "bold #e0533f",
    MarkKind.FALSE_YIELD: "bold #e0533f",
    MarkKind.NO_RESPONSE: "#a77bd4",
}
ROW_MARKS = frozenset({MarkKind.PAUSE, MarkKind.INTERRUPTION, MarkKind.BACKCHANNEL})
"""Marks drawn on the marks row (the cut is drawn in the agent's lane)."""
LEGEND = "█ speech  ▓ both at once  ▆ short sound  ▲ caller comes in  ✕ agent stops  · pause"


def render_lanes(
    tl: Timeline, t0: float, t1: float, width: int, *, until: float | None = None
) -> Text:
    """Four rows: agent lane, caller lane, marks, time axis (``width`` columns in all)."""
    cols = max(8, width - LABEL)
    out = Text(no_wrap=True, overflow="crop")
    play_col = column(until, t0, t1, cols) if until is not None else None
    marks = mark_cells(tl, t0, t1, cols, until=until)
    # The agent's cut is drawn in its own lane, so the caller's "comes in" mark shows too.
    cuts = {col for col, m in marks.items() if m.kind is MarkKind.CUT}
    for m in tl.marks:
        col = column(m.t, t0, t1, cols)
        if m.kind is MarkKind.CUT and col is not None and (until is None or m.t <= until):
            cuts.add(col)
    for lane in ("agent", "caller"):
        out.append(f"{lane:<{LABEL}}", style=LANE_STYLE[lane])
        for col, cell in enumerate(lane_cells(tl, lane, t0, t1, cols, until=until)):
            if lane == "agent" and col in cuts:
                out.append(MARK_GLYPH[MarkKind.CUT], style=MARK_STYLE[MarkKind.CUT])
                continue
            if col == play_col and cell is Cell.EMPTY:
                out.append("▏", style="bold #e6e6e6")
                continue
            style = LANE_STYLE[lane] if cell is Cell.SPEECH else CELL_STYLE[cell]
            out.append(GLYPH[cell], style=style)
        out.append("\n")
    marks = mark_cells(tl, t0, t1, cols, until=until, kinds=ROW_MARKS)
    out.append(" " * LABEL)
    for col in range(cols):
        mark = marks.get(col)
        if mark is None:
            out.append(" ")
        else:
            out.append(MARK_GLYPH[mark.kind], style=MARK_STYLE[mark.kind])
    out.append("\n")
    out.append_text(_axis(t0, t1, cols))
    return out


def _axis(t0: float, t1: float, cols: int) -> Text:
    row = [" "] * cols
    for t in ticks(t0, t1, max(1, cols // 6)):
        col = column(t, t0, t1, cols)
        if col is None:
            continue
        label = f"{t:g}s"
        if col + len(label) > cols or any(
            ch != " " for ch in row[max(0, col - 1) : col + len(label)]
        ):
            continue
        row[col : col + len(label)] = list(label)
    return Text(" " * LABEL + "".join(row), style="#8b929a")


class LanesView(Widget, can_focus=False):
    """Shows a timeline over a fixed window; :meth:`show` redraws it."""

    DEFAULT_CSS = """
    LanesView { height: 4; width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._timeline = Timeline()
        self._window = (0.0, 1.0)
        self._until: float | None = None

    def show(
        self, timeline: Timeline, window: tuple[float, float], until: float | None = None
    ) -> None:
        """Draw ``timeline`` over ``window`` (seconds), up to the playhead ``until``."""
        self._timeline = timeline
        self._window = window
        self._until = until
        self.refresh()

    def render(self) -> Text:
        t0, t1 = self._window
        return render_lanes(self._timeline, t0, t1, self.size.width, until=self._until)

    def rows_text(self, width: int = 80) -> list[str]:
        """The drawing as plain text rows (for tests)."""
        t0, t1 = self._window
        return render_lanes(self._timeline, t0, t1, width, until=self._until).plain.split("\n")
