"""The timeline strip: agent speech and silence, pauses, opportunities, actions.

Drawn with the Line API from :func:`cutin_tui.views.timeline_layout.layout`; one row
per lane, the window ending at the call's "now" so it scrolls as the call runs.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

from cutin_tui.views.call_view import TimelineData
from cutin_tui.views.timeline_layout import CELL_S, LEGEND, ROWS, Cell, layout, runs

LABEL_WIDTH = 7


class TimelineStrip(Widget, can_focus=False):
    """Call :meth:`show` with the timeline data and the current call time."""

    COMPONENT_CLASSES = {
        "timeline--label",
        "timeline--tick",
        "timeline--agent",
        "timeline--cut",
        "timeline--stop",
        "timeline--user",
        "timeline--user-interrupt",
        "timeline--backchannel",
        "timeline--interrupt",
        "timeline--pause",
        "timeline--opportunity",
        "timeline--opportunity-end",
        "timeline--turn-end",
    }

    def __init__(self, *, id: str | None = None, cell_s: float = CELL_S) -> None:
        super().__init__(id=id)
        self.cell_s = cell_s
        self._data = TimelineData()
        self._now = 0.0
        self._rows: dict[str, list[Cell]] | None = None
        self._rows_key: tuple[float, int] | None = None

    def on_mount(self) -> None:
        self.border_title = "timeline"
        self.border_subtitle = LEGEND

    def show(self, data: TimelineData, now: float, *, changed: bool = True) -> None:
        """Redraw when the data changed or the window moved by a cell."""
        moved = int(now / self.cell_s) != int(self._now / self.cell_s)
        self._data = data
        self._now = now
        if changed or moved:
            self._rows_key = None
            self.refresh()

    def rows_text(self) -> list[str]:
        """Each lane as plain text, label first (for tests)."""
        return [self._line(y).text for y in range(len(ROWS))]

    def _cells(self) -> dict[str, list[Cell]]:
        width = max(0, self.content_region.width - LABEL_WIDTH) or 80
        key = (self._now, width)
        if self._rows is None or self._rows_key != key:
            self._rows = layout(self._data, self._now, width, self.cell_s)
            self._rows_key = key
        return self._rows

    def _line(self, y: int) -> Strip:
        if y >= len(ROWS):
            return Strip.blank(self.content_region.width, self.rich_style)
        name = ROWS[y]
        label = self.get_component_rich_style("timeline--label", partial=True)
        segments = [Segment(name.ljust(LABEL_WIDTH), label)]
        for text, style in runs(self._cells()[name]):
            rich = (
                self.get_component_rich_style(f"timeline--{style}", partial=True) if style else None
            )
            segments.append(Segment(text, rich))
        return Strip(segments)

    def render_line(self, y: int) -> Strip:
        width = self.content_region.width
        return self._line(y).crop_extend(0, width, self.rich_style).apply_style(self.rich_style)
