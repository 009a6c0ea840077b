"""Live counters: agent turns, opportunities, interruptions and backchannels with rates."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from cutin_tui.views.live_counts import LiveCounts


def _rate(value: float | None, fmt: str) -> str:
    return "–" if value is None else format(value, fmt)


def counter_lines(c: LiveCounts) -> list[str]:
    """The three lines the panel shows (plain; the e2e test reads them off the screen)."""
    first = f"agent turns {c.agent_turns} · opportunities {c.mid_turn} mid-turn"
    if c.at_turn_end:
        first += f" (+{c.at_turn_end} at turn ends, not counted)"
    lines = [first]
    for name, total, auto, manual, taken in (
        ("interruptions", c.interruptions, c.interruptions_auto, c.interruptions_manual,
         c.taken_interrupt),
        ("backchannels", c.backchannels, c.backchannels_auto, c.backchannels_manual,
         c.taken_backchannel),
    ):  # fmt: skip
        per_turn = _rate(c.per_turn(total), ".2f")
        per_opp = _rate(c.per_opportunity(taken), ".0%")
        lines.append(
            f"{name:<14}{total:>3} (auto {auto}, manual {manual})  {per_turn} per turn"
            f"  {taken}/{c.mid_turn} opp. = {per_opp}"
        )
    return lines


class CountersPanel(Widget, can_focus=False):
    """Set :attr:`counts` via :meth:`show`."""

    COMPONENT_CLASSES = {"counters--name"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.counts = LiveCounts()

    def on_mount(self) -> None:
        self.border_title = "realized so far"

    def show(self, counts: LiveCounts) -> None:
        self.counts = counts
        self.refresh()

    def render(self) -> Text:
        return Text("\n".join(counter_lines(self.counts)))
