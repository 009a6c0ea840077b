"""The controls panel: α, β, γ with the selected one marked, the autos, the floor."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from controls.tendencies import Tendencies
from controls.turn_taking import backchannel_spacing_words, interruption_patience_seconds

DIALS = ("alpha", "beta", "gamma")
SYMBOL = {"alpha": "α", "beta": "β", "gamma": "γ"}
MEANING = {"alpha": "disfluency", "beta": "interruption", "gamma": "backchannel"}
BAR = 10


@dataclass(frozen=True)
class DialsState:
    tendencies: Tendencies
    selected: str
    auto_interrupt: bool
    auto_backchannel: bool
    status: str


def dial_value(t: Tendencies, name: str) -> float:
    value: float = getattr(t, name)
    return value


def dial_lines(state: DialsState) -> list[tuple[str, str]]:
    """(text, style name) lines; style is "selected", "off", "status" or ""."""
    t = state.tendencies
    out: list[tuple[str, str]] = []
    for name in DIALS:
        value = dial_value(t, name)
        filled = round(value * BAR)
        mark = "▸" if name == state.selected else " "
        bar = "█" * filled + "░" * (BAR - filled)
        line = f"{mark}{SYMBOL[name]} {MEANING[name]:<12} {value:4.2f} {bar}"
        out.append((line, "selected" if name == state.selected else ""))
    out.append((f"  patience {interruption_patience_seconds(t.beta):.2f} s (10 − 8.5β)", "note"))
    out.append((f"  spacing {backchannel_spacing_words(t.gamma):.1f} words (25 − 17γ)", "note"))
    for label, on in (
        ("auto-interrupt", state.auto_interrupt),
        ("auto-backchannel", state.auto_backchannel),
    ):
        out.append((f" {label:<17} {'on' if on else 'off'}", "" if on else "off"))
    out.append(("", ""))
    out.append((f" {state.status}", "status"))
    return out


class DialsPanel(Widget, can_focus=False):
    """Shows a :class:`DialsState`; update with :meth:`show`."""

    COMPONENT_CLASSES = {"dials--selected", "dials--off", "dials--note", "dials--status"}

    def __init__(self, state: DialsState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state

    def on_mount(self) -> None:
        self.border_title = "controls"

    def show(self, state: DialsState) -> None:
        if state != self.state:
            self.state = state
            self.refresh()

    def render(self) -> Text:
        out = Text()
        for n, (line, style) in enumerate(dial_lines(self.state)):
            if n:
                out.append("\n")
            rich = self.get_component_rich_style(f"dials--{style}", partial=True) if style else None
            out.append(line, rich or "")
        return out
