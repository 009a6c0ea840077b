"""The call transcript: agent words as they are spoken, cut markers, caller turns.

A Line-API widget: each transcript entry is wrapped once per width and cached,
and only entries that changed are wrapped again, so a long call stays cheap to
draw. Colours come from the component classes (see styles/call.tcss).
"""

from __future__ import annotations

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from cutin_tui.views.call_view import AgentEntry, Entry, NoteEntry, UserEntry
from replay.report.black_box import TALKED_ON, false_yield_mark, split_cut, stop_mark
from replay.report.confidence import is_unsure, marked

LABEL_WIDTH = 7
_KINDS = ("filler", "repetition", "pause", "repair", "restart")


class TranscriptView(ScrollView, can_focus=False):
    """Draws :class:`~cutin_tui.views.call_view.CallView` entries; call :meth:`update_entries`."""

    COMPONENT_CLASSES = {
        "transcript--agent-label",
        "transcript--user-label",
        "transcript--backchannel",
        "transcript--cut",
        "transcript--stop",
        "transcript--talk-over",
        "transcript--unsure",
        "transcript--false-yield",
        "transcript--unspoken",
        "transcript--rendered",
        "transcript--filler",
        "transcript--repetition",
        "transcript--pause",
        "transcript--repair",
        "transcript--restart",
        "transcript--interrupt",
        "transcript--note",
        "transcript--error",
        "transcript--end",
        "transcript--yield",
        "transcript--warn",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._entries: list[Entry] = []
        self._cache: dict[int, tuple[int, int, list[Strip]]] = {}
        self._starts: list[int] = []
        self._lines: list[Strip] = []
        self._width = 0
        self._follow = True
        """Keep the newest line in view; off while the tester has scrolled up."""

    # -- data in

    def update_entries(self, entries: list[Entry], changed: set[int]) -> None:
        """Show ``entries``; those in ``changed`` (or new) are wrapped again."""
        self._entries = entries
        if not changed and len(self._starts) == len(entries):
            return
        first = min(changed) if changed else len(self._starts)
        first = min(first, len(self._starts))
        for index in changed:
            self._cache.pop(index, None)
        self._relayout(first)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def plain_lines(self) -> list[str]:
        """The transcript as plain text lines (for tests and copying)."""
        return [strip.text.rstrip() for strip in self._lines]

    # -- layout

    def _relayout(self, first: int) -> None:
        width = max(LABEL_WIDTH + 10, self.scrollable_content_region.width or 80)
        if width != self._width:
            self._width = width
            self._cache.clear()
            first = 0
        follow = self._follow
        keep = self._starts[first] if first < len(self._starts) else len(self._lines)
        del self._lines[keep:]
        del self._starts[first:]
        for index in range(first, len(self._entries)):
            self._starts.append(len(self._lines))
            self._lines.extend(self._entry_lines(index, width))
        self.virtual_size = Size(width, len(self._lines))
        if follow:
            # After the refresh, so the new virtual size counts.
            self.call_after_refresh(self.scroll_end, animate=False, x_axis=False)
        self.refresh()

    def _entry_lines(self, index: int, width: int) -> list[Strip]:
        entry = self._entries[index]
        cached = self._cache.get(index)
        if cached is not None and cached[0] == entry.revision and cached[1] == width:
            return cached[2]
        lines = self._wrap(self._label(entry), self._body(entry), width)
        self._cache[index] = (entry.revision, width, lines)
        return lines

    def _wrap(self, label: Text, body: Text, width: int) -> list[Strip]:
        if not body.plain:
            return []
        console: Console = self.app.console
        wrapped = body.wrap(console, width - LABEL_WIDTH)
        out: list[Strip] = []
        for n, line in enumerate(wrapped):
            head = label if n == 0 else Text(" " * LABEL_WIDTH)
            full = Text.assemble(head, line)
            out.append(Strip(list(full.render(console))))
        return out

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._follow = new_value >= self.max_scroll_y - 1

    def on_resize(self) -> None:
        self._relayout(0)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()
        if self._entries:
            self._relayout(0)

    # -- drawing

    def _style(self, name: str) -> Style:
        style = self.get_component_rich_style(f"transcript--{name}", partial=True)
        if style.color is None:
            return style
        # A colour given with alpha ($text-disabled, $text-muted) is blended with the
        # background only in the full style; the partial one keeps it unblended, which
        # drew the dimmed unheard rest of a cut turn white, brighter than the heard words.
        full = self.get_component_rich_style(f"transcript--{name}")
        return style + Style(color=full.color)

    def _label(self, entry: Entry) -> Text:
        if isinstance(entry, AgentEntry):
            return Text("AGENT".ljust(LABEL_WIDTH), self._style("agent-label"))
        if isinstance(entry, UserEntry):
            return Text("YOU".ljust(LABEL_WIDTH), self._style("user-label"))
        return Text(" " * LABEL_WIDTH)

    def _body(self, entry: Entry) -> Text:
        if isinstance(entry, AgentEntry):
            return self._agent_body(entry)
        if isinstance(entry, UserEntry):
            return self._user_body(entry)
        return self._note_body(entry)

    def _agent_body(self, entry: AgentEntry) -> Text:
        text = Text()
        marks: dict[int, list[Text]] = {}
        for heard, token in entry.backchannels:
            marks.setdefault(heard, []).append(Text(f"⟨{token}⟩", self._style("backchannel")))
        talked_over = entry.interrupted and entry.cut_word is None and not entry.black_box
        if talked_over and entry.barge_in_word is not None:
            marks.setdefault(entry.barge_in_word, []).append(Text("▲you", self._style("interrupt")))
        over = self._black_box_marks(entry, marks) if entry.black_box else range(0)
        talk_over = self._style("talk-over")
        unsure = self._style("unsure")
        probs = entry.probs
        for i, word in enumerate(entry.words):
            for mark in marks.get(i, ()):
                text.append_text(mark)
                text.append(" ")
            if i < len(probs) and is_unsure(probs[i]):  # the ears were not sure of it
                text.append(marked(word), unsure)
            else:
                text.append(word, talk_over if i in over else "")
            text.append(" ")
        for mark in marks.get(len(entry.words), ()):
            text.append_text(mark)
            text.append(" ")
        if entry.black_box:
            if not entry.done:
                text.append("…", self._style("unspoken"))
        elif entry.cut_word is not None:
            text.append("▌cut", self._style("cut"))
            if entry.unspoken:
                text.append(" ")
                text.append(entry.unspoken, self._style("unspoken"))
        elif talked_over and entry.talk_over_s is not None:
            text.append(f"(kept talking {entry.talk_over_s:.1f} s over you)", self._style("cut"))
        elif not entry.done:
            text.append("…", self._style("unspoken"))
        text.rstrip()
        return text

    def _black_box_marks(self, entry: AgentEntry, marks: dict[int, list[Text]]) -> range:
        """Marks of an agent on a line: ``▌cut`` at the caller's onset, ``■stop`` where its
        audio stopped (or ``▶talked on``), a false yield where a backchannel stopped it.
        Returns the indices of the words it said over the caller."""
        n = len(entry.words)
        starts = entry.starts[:n]
        for stop_t, latency in entry.false_yields:
            at = sum(1 for s in starts if s < stop_t - 1e-9)
            marks.setdefault(at, []).append(
                Text(false_yield_mark(latency), self._style("false-yield"))
            )
        cut_word = entry.cut_word if entry.cut_word is not None else entry.barge_in_word
        if cut_word is None:
            return range(0)
        if len(starts) < n:  # no timings: the words after the cut are all we know
            starts = [*starts, *([float("inf")] * (n - len(starts)))]
        talked_on = entry.yielded is False or (entry.yielded is None and not entry.done)
        split = split_cut(starts, cut_word, entry.stop_t, talked_on=talked_on)
        cut_mark = [Text("▌cut", self._style("cut"))]
        if cut_word > n:  # the words heard so far are not transcribed yet
            cut_mark.insert(0, Text("…", self._style("unspoken")))
        marks.setdefault(split.cut, [])[:0] = cut_mark
        if split.stopped:
            marks.setdefault(split.stop, []).append(
                Text(stop_mark(entry.stop_latency_s), self._style("stop"))
            )
        elif entry.yielded is False:
            marks.setdefault(n, []).append(Text(TALKED_ON, self._style("cut")))
        return range(split.cut, split.stop)

    def _user_body(self, entry: UserEntry) -> Text:
        text = Text()
        if entry.source == "interruption":
            text.append("▲ ", self._style("interrupt"))
        text.append(f"“{entry.original}”")
        if entry.source not in ("typed", "interruption"):
            text.append(f"  ({entry.source})", self._style("note"))
        if entry.rendered != entry.original:
            text.append("  said: ", self._style("rendered"))
            text.append_text(self._rendered(entry))
        return text

    def _rendered(self, entry: UserEntry) -> Text:
        # The k-th insertion sits at rendered token index + k.
        kinds = {index + k: kind for k, (index, kind, _) in enumerate(entry.insertions)}
        out = Text(style=self._style("rendered"))
        for i, token in enumerate(entry.rendered.split()):
            if i:
                out.append(" ")
            kind = kinds.get(i)
            out.append(token, self._style(kind) if kind in _KINDS else Style())
        return out

    def _note_body(self, entry: NoteEntry) -> Text:
        style = {"error": "error", "end": "end", "yield": "yield", "warn": "warn"}
        return Text(entry.text, self._style(style.get(entry.kind, "note")))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        line = self._lines[index].crop_extend(scroll_x, scroll_x + width, self.rich_style)
        return line.apply_style(self.rich_style)
