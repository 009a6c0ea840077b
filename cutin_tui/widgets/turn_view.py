"""The replay turn table: a Line-API scroll view over one trial's rows.

Only row heights are computed for the whole call (a cheap wrap of each row);
the styled lines of a row are built when it scrolls into view and kept in a
small cache, so a two-hour call opens and scrolls without building every line.
The focused row (the cursor) also shows each verdict's rationale. Looks come
from the component classes, styled in styles/replay.tcss.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from itertools import accumulate

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from cutin_tui.views.turn_layout import (
    GAP,
    GUTTER_W,
    SPEAKER_W,
    TIME_W,
    Columns,
    Line,
    RowCells,
    TurnTable,
    format_time,
)
from replay.plural import plural

ROLES = (
    "header",
    "rule",
    "time",
    "agent-label",
    "user-label",
    "call",
    "agent",
    "user",
    "cut",
    "cut-note",
    "stop",
    "talk-over",
    "unsure",
    "false-yield",
    "unspoken",
    "dim",
    "backchannel",
    "pause-mark",
    "opportunity",
    "tool",
    "event",
    "error",
    "filler",
    "repetition",
    "pause",
    "repair",
    "restart",
    "inserted",
    "pass",
    "fail",
    "warn",
    "info",
    "rationale",
    "title",
    "meta",
    "cursor",
    "cursor-mark",
    "message",
)


class TurnView(ScrollView, can_focus=True):
    """Shows one :class:`~cutin_tui.views.turn_layout.TurnTable`; ``cursor`` is the focused row."""

    COMPONENT_CLASSES = {f"turn-view--{role}" for role in ROLES}

    BINDINGS = [
        Binding("down", "cursor(1)", "Next turn", show=False, id="replay.turn.down"),
        Binding("up", "cursor(-1)", "Previous turn", show=False, id="replay.turn.up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="replay.turn.pagedown"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="replay.turn.pageup"),
        Binding("home", "edge(0)", "First row", show=False, id="replay.turn.home"),
        Binding("end", "edge(1)", "Last row", show=False, id="replay.turn.end"),
    ]

    cursor: reactive[int] = reactive(0, init=False)

    class CursorMoved(Message):
        """The focused row changed."""

        def __init__(self, view: TurnView, row: int) -> None:
            super().__init__()
            self.view = view
            self.row = row

        @property
        def control(self) -> TurnView:
            return self.view

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.table: TurnTable | None = None
        self.judges: tuple[str, ...] = ()
        self.hidden: set[str] = set()
        self.message = ""
        self.header: TurnHeader | None = None
        """The column titles drawn above this view, if any (set by :class:`TurnHeader`)."""
        self.painted_at: float | None = None
        """perf_counter() of the first line drawn for the current table (the bench reads it)."""
        self._columns = Columns(80, ())
        self._heights: list[int] = []
        self._offsets: list[int] = [0]
        self._cells: LRUCache[tuple[int, bool], RowCells] = LRUCache(1024)
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(4096)
        self._styles: dict[str, Style] = {}

    # ------------------------------------------------------------ data in
    def show(self, table: TurnTable | None, judges: tuple[str, ...], row: int = 0) -> None:
        """Show ``table`` (None: nothing, see :meth:`show_message`) with the cursor on ``row``."""
        self.table = table
        self.judges = judges
        self.painted_at = None
        self.message = ""
        self._relayout()
        self.set_reactive(TurnView.cursor, self._clamp(row))
        self._scroll_to_cursor(top=True)
        self.post_message(self.CursorMoved(self, self.cursor))

    def show_message(self, text: str) -> None:
        """Show a note instead of a table (no calls, still loading, ...)."""
        self.table = None
        self.message = text
        self._relayout()

    def set_hidden(self, hidden: set[str]) -> None:
        """Hide these judge columns."""
        self.hidden = set(hidden)
        self._relayout()
        self._scroll_to_cursor()

    @property
    def columns(self) -> Columns:
        return self._columns

    @property
    def row_count(self) -> int:
        return len(self.table) if self.table is not None else 0

    def row_at_line(self, line: int) -> int:
        """The row drawn on content line ``line``."""
        return max(0, min(self.row_count - 1, bisect_right(self._offsets, line) - 1))

    def row_region(self, row: int) -> Region:
        """Where ``row`` sits in the virtual (scrollable) area."""
        return Region(0, self._offsets[row], self._columns.width, self._heights[row])

    def row_lines(self, row: int) -> list[str]:
        """The plain text of ``row`` as drawn (tests and copying)."""
        if self.table is None:
            return []
        return [
            self._line_strip(row, i, row == self.cursor).text.rstrip()
            for i in range(self._heights[row])
        ]

    def cell_text(self, row: int, column: str) -> str:
        """The words of one cell of ``row`` ("text" or a judge group), unwrapped."""
        if self.table is None:
            return ""
        cells = self._row(row, row == self.cursor)
        columns = self._columns.judges
        lines = cells.text if column == "text" else cells.judges[columns.index(column)]
        return " ".join("".join(t for t, _ in line).strip() for line in lines)

    def drop_caches(self) -> None:
        """Forget every built row and line (heights stay); the bench uses it to draw cold."""
        self._cells.clear()
        self._strips.clear()

    # ------------------------------------------------------------ layout
    def _visible_judges(self) -> tuple[str, ...]:
        return tuple(g for g in self.judges if g not in self.hidden)

    def _relayout(self) -> None:
        width = max(TIME_W + SPEAKER_W + 16, self.scrollable_content_region.width or 80)
        self._columns = Columns(width, self._visible_judges())
        self._cells.clear()
        self._strips.clear()
        if self.table is None:
            self._heights = []
            self._offsets = [0]
            lines = len(self.message.splitlines()) if self.message else 0
            self.virtual_size = Size(width, lines)
        else:
            self._heights = [
                self._row(row, row == self.cursor).height for row in range(len(self.table))
            ]
            self._offsets = [0, *accumulate(self._heights)]
            self.virtual_size = Size(width, self._offsets[-1])
        self.refresh()
        if self.header is not None:
            self.header.refresh()

    def _row(self, row: int, focused: bool) -> RowCells:
        key = (row, focused)
        cells = self._cells.get(key)
        if cells is None:
            assert self.table is not None
            cells = self.table.cells(row, self._columns, focused)
            self._cells[key] = cells
        return cells

    def _set_height(self, row: int) -> None:
        height = self._row(row, row == self.cursor).height
        if height == self._heights[row]:
            return
        self._heights[row] = height
        self._offsets = [0, *accumulate(self._heights)]
        self.virtual_size = Size(self._columns.width, self._offsets[-1])

    def on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.width != self._columns.width:
            self._relayout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._strips.clear()

    # ------------------------------------------------------------ cursor
    def _clamp(self, row: int) -> int:
        return max(0, min(row, self.row_count - 1)) if self.row_count else 0

    def move_to(self, row: int, *, top: bool = False) -> None:
        """Put the cursor on ``row`` and scroll it into view."""
        row = self._clamp(row)
        if row == self.cursor:
            self._scroll_to_cursor(top=top)
            return
        self.cursor = row
        self._scroll_to_cursor(top=top)

    def watch_cursor(self, old: int, new: int) -> None:
        if self.table is None:
            return
        for row in (old, new):
            if 0 <= row < len(self._heights):
                self._set_height(row)
        self.refresh()  # built lines stay valid: they are keyed by (row, line, focused)
        self._update_subtitle()
        self.post_message(self.CursorMoved(self, new))

    def _update_subtitle(self) -> None:
        if self.table is None:
            self.border_subtitle = ""
            return
        row = self.cursor
        n = len(self.table) - 1
        if row == 0:
            self.border_subtitle = f"call · {plural(n, 'turn')}"
        else:
            at = format_time(self.table.start(row))
            self.border_subtitle = f"turn {row} of {n} · {at}"

    def _scroll_to_cursor(self, *, top: bool = False) -> None:
        if self.table is None or not self._heights:
            return
        region = self.row_region(self.cursor)
        tall = region.height >= self.scrollable_content_region.height
        self.scroll_to_region(region, animate=False, immediate=True, top=top or tall)

    def action_cursor(self, step: int) -> None:
        self.move_to(self.cursor + step)

    def action_page(self, direction: int) -> None:
        if self.table is None:
            return
        line = self._offsets[self.cursor] + direction * max(1, self.size.height - 1)
        self.move_to(self.row_at_line(max(0, line)))

    def action_edge(self, end: int) -> None:
        self.move_to(self.row_count - 1 if end else 0)

    def on_click(self, event: events.Click) -> None:
        if self.table is None:
            return
        self.focus()
        self.move_to(self.row_at_line(int(self.scroll_y) + event.y))

    # ------------------------------------------------------------ drawing
    def _style(self, role: str) -> Style:
        style = self._styles.get(role)
        if style is None:
            # Full (not partial) styles: colours given with alpha are blended only then.
            style = self.get_component_rich_style(f"turn-view--{role}") if role else self.rich_style
            self._styles[role] = style
        return style

    def _cell(self, line: Line, width: int, out: list[Segment]) -> int:
        """Append ``line``'s segments, padded to ``width``, to ``out``; the cells used.

        A frame at a new place builds every visible line, so this is the hot loop of
        scrolling: styles come from the dict, and the width is counted here once,
        so that the strip need not measure its segments again."""
        styles = self._styles
        used = 0
        for text, role in line:
            style = styles.get(role)
            if style is None:
                style = self._style(role)
            out.append(Segment(text, style))
            used += cell_len(text)
        if used < width:
            out.append(Segment(" " * (width - used), self._style("")))
            return width
        return used

    def _line_strip(self, row: int, index: int, focused: bool) -> Strip:
        key = (row, index, focused)
        strip = self._strips.get(key)
        if strip is not None:
            return strip
        cells = self._row(row, focused)
        cols = self._columns
        first = index == 0
        segments: list[Segment] = []
        cell = self._cell
        length = cell([("▌" if focused else "", "cursor-mark")], GUTTER_W, segments)
        length += cell([(cells.time if first else "", "time")], TIME_W, segments)
        length += cell([(cells.speaker if first else "", cells.speaker_role)], SPEAKER_W, segments)
        text = cells.text[index] if index < len(cells.text) else []
        length += cell(text, cols.text_w, segments)
        gap = Segment(GAP, self._style("rule"))
        for judge_lines in cells.judges:
            segments.append(gap)
            length += cell_len(GAP)
            line = judge_lines[index] if index < len(judge_lines) else []
            length += cell(line, cols.judge_w, segments)
        if focused:
            # The row's own styles carry the widget background; lay the cursor's over them.
            under = Style(bgcolor=self._style("cursor").bgcolor)
            segments = [Segment(seg.text, (seg.style or Style()) + under) for seg in segments]
        strip = Strip(segments, length).extend_cell_length(cols.width, self._style(""))
        self._strips[key] = strip
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        width = self.scrollable_content_region.width
        if self.table is None:
            notes = self.message.splitlines()
            text = notes[line] if 0 <= line < len(notes) else ""
            return Strip([Segment(text, self._style("message"))]).extend_cell_length(
                width, self._style("")
            )
        if self.painted_at is None:
            self.painted_at = time.perf_counter()
        if line >= self._offsets[-1]:
            return Strip.blank(width, self._style(""))
        row = self.row_at_line(line)
        strip = self._line_strip(row, line - self._offsets[row], row == self.cursor)
        return strip.crop_extend(scroll_x, scroll_x + width, self._style(""))


class TurnHeader(Widget):
    """The column titles of the :class:`TurnView` beside it."""

    DEFAULT_CSS = "TurnHeader { height: 1; }"

    def __init__(self, view: TurnView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = view
        view.header = self

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="crop")
        for part, role in self.view.columns.header():
            text.append(part, "" if role == "header" else "dim")
        return text


__all__ = ["ROLES", "TurnHeader", "TurnView"]
