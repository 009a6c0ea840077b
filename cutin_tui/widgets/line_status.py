"""One line about the line to a black-box agent: open, connecting, closed by agent, failed.

Shown only on calls to an agent on a line (``--agent twilio:...|realtime``). The screen
hands it a :class:`~cutin_tui.views.line_view.LineView` folded from the call's ``line``
events (attributes down); it only draws.
"""

from __future__ import annotations

import statistics

from rich.text import Text
from textual.widget import Widget

from cutin_tui.views.line_view import LineView

_DOT = {"open": "●", "connecting": "◌", "closed": "○", "failed": "✕"}


def line_status_parts(line: LineView) -> list[tuple[str, str]]:
    """(text, style name) runs: ``line ● open · twilio ws://127.0.0.1:8765/ · μ-law 8 kHz``,
    then how the agent has answered so far: clears, yields to cuts (median latency), false
    yields to backchannels, caller turns left unanswered, line errors."""
    state = line.state
    if state == "closed":
        words = "closed by agent" if line.closed_by == "agent" else "closed"
    elif state == "failed":
        words = f"failed: {line.failure}" if line.failure else "failed"
    else:
        words = state
    out: list[tuple[str, str]] = [("line ", "detail"), (f"{_DOT.get(state, '?')} {words}", state)]
    where = " ".join(part for part in (line.name, line.target) if part)
    for part in (where, line.audio):
        if part:
            out.append((f" · {part}", "detail"))
    if line.clears:
        out.append((f" · {line.clears} clear{'s' if line.clears != 1 else ''}", "detail"))
    if line.cuts_answered:
        median = (
            f", {statistics.median(line.yield_latencies):.2f} s" if line.yield_latencies else ""
        )
        out.append((f" · yielded {line.yields}/{line.cuts_answered}{median}", "detail"))
    if line.backchannels_answered:
        out.append((f" · false yields {line.false_yields}/{line.backchannels_answered}", "detail"))
    if line.no_responses:
        out.append((f" · no response ×{line.no_responses}", "failed"))
    if line.errors:
        out.append((f" · {line.errors} error{'s' if line.errors != 1 else ''}", "failed"))
    return out


def line_status_text(line: LineView) -> str:
    return "".join(text for text, _ in line_status_parts(line))


class LineStatus(Widget, can_focus=False):
    """The status of the line; update with :meth:`show` (hidden until it has a line)."""

    COMPONENT_CLASSES = {
        "line-status--open",
        "line-status--connecting",
        "line-status--closed",
        "line-status--failed",
        "line-status--detail",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.line: LineView | None = None
        self._shown = ""

    def show(self, line: LineView | None) -> None:
        self.line = line
        self.set_class(line is not None, "-shown")
        text = line_status_text(line) if line is not None else ""
        if text != self._shown:
            self._shown = text
            self.refresh()

    @property
    def plain(self) -> str:
        return self._shown

    def render(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        if self.line is None:
            return out
        for text, style in line_status_parts(self.line):
            out.append(text, self.get_component_rich_style(f"line-status--{style}", partial=True))
        return out
