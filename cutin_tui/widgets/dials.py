"""The controls panel: α, β, γ with the selected one marked, the autos, the floor."""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
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
    realized: dict[str, str] | None = None
    """Per dial, what the call has realized so far (configured vs realized, side by side)."""
    adapt: bool | None = None
    """``--adapt`` on or off (None: not offered in this call)."""
    adapted: dict[str, float] | None = None
    """The calibrated thresholds in force (None: the paper's constants)."""


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
        if state.realized and state.realized.get(name):
            out.append((f"    realized {state.realized[name]}", "note"))
    a = state.adapted if state.adapt else None
    if a is None:
        patience = f"{interruption_patience_seconds(t.beta):.2f} s (10 − 8.5β)"
        spacing = f"{backchannel_spacing_words(t.gamma):.1f} words (25 − 17γ)"
    else:
        patience = f"{a['interrupt_patience_s']:.2f} s ≥{a['interrupt_min_words']:g}w adapted"
        spacing = f"{a['backchannel_spacing_words']:.1f} words adapted"
    out.append((f"  patience {patience}", "note"))
    out.append((f"  spacing {spacing}", "note"))
    autos = [("auto-interrupt", state.auto_interrupt), ("auto-backchannel", state.auto_backchannel)]
    if state.adapt is not None:
        autos.append(("adapt", state.adapt))
    for label, on in autos:
        out.append((f" {label:<17} {'on' if on else 'off'}", "" if on else "off"))
    out.append(("", ""))
    out.append((f" {state.status}", "status"))
    return out


def dial_bar(state: DialsState) -> list[tuple[str, str]]:
    """The same state on one line, for small terminals: (text, style name) runs."""
    t = state.tendencies
    out: list[tuple[str, str]] = []
    for name in DIALS:
        selected = name == state.selected
        text = f"{'▸' if selected else ' '}{SYMBOL[name]} {dial_value(t, name):.2f} "
        out.append((text, "selected" if selected else ""))
    autos = [("auto-int", state.auto_interrupt), ("auto-bc", state.auto_backchannel)]
    if state.adapt:  # 80 columns have no room for "adapt off"
        autos.append(("adapt", True))
    for label, on in autos:
        out.append((f" {label} {'on' if on else 'off'} ", "" if on else "off"))
    out.append((f" · {state.status}", "status"))
    return out


class DialsView(Widget, can_focus=False):
    """Base of the panel and the bar: holds a :class:`DialsState`; update with :meth:`show`."""

    COMPONENT_CLASSES = {"dials--selected", "dials--off", "dials--note", "dials--status"}

    def __init__(self, state: DialsState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state

    def show(self, state: DialsState) -> None:
        if state != self.state:
            self.state = state
            self.refresh()

    def _style(self, name: str) -> str | Style:
        return self.get_component_rich_style(f"dials--{name}", partial=True) if name else ""


class DialsPanel(DialsView):
    """The controls panel beside the transcript."""

    def on_mount(self) -> None:
        self.border_title = "controls"

    def render(self) -> Text:
        out = Text()
        for n, (line, style) in enumerate(dial_lines(self.state)):
            if n:
                out.append("\n")
            out.append(line, self._style(style))
        return out


class DialsBar(DialsView):
    """The same on one line under the header, when the terminal is small."""

    def render(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        for text, style in dial_bar(self.state):
            out.append(text, self._style(style))
        return out
