"""The unheard rest of a cut agent turn is drawn dimmer than the heard words in every
colour system a terminal may have (truecolor, 256, 16), on dark and light themes.

The styles are the turn table's own (resolved from replay.tcss), written out by Rich
as a terminal of each kind would get them; the colour codes are read back and compared
by how far each stands from the background. The unheard style carries no attribute
that terminals draw their own way: italic turns into reverse video where terminfo has
no italics (TERM=screen-256color under tmux), and dim is ignored by some."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.color import Color
from rich.color_triplet import ColorTriplet
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult

from cutin_tui.screens.replay import ReplayApp
from cutin_tui.widgets.transcript import TranscriptView
from cutin_tui.widgets.turn_view import TurnView
from tests.tui_replay.helpers import SIZE, loaded

SYSTEMS = ("truecolor", "256", "standard")
CUTIN_STYLES = Path(__file__).resolve().parents[2] / "cutin_tui" / "styles"


def _written(style: Style, system: str) -> str:
    out = io.StringIO()
    console = Console(file=out, color_system=system, force_terminal=True, width=40)  # type: ignore[arg-type]
    console.print(Text("word", style=style), end="")
    return out.getvalue()


def _sgr_colour(codes: list[int]) -> ColorTriplet:
    """The foreground colour of one SGR sequence's parameters."""
    if 30 <= codes[0] <= 37:
        return Color.from_ansi(codes[0] - 30).get_truecolor()
    if 90 <= codes[0] <= 97:
        return Color.from_ansi(codes[0] - 90 + 8).get_truecolor()
    if codes[:2] == [38, 5]:
        return Color.from_ansi(codes[2]).get_truecolor()
    if codes[:2] == [38, 2]:
        return ColorTriplet(codes[2], codes[3], codes[4])
    raise AssertionError(f"no foreground colour in {codes}")


def _foreground(written: str) -> ColorTriplet:
    for params in re.findall(r"\x1b\[([0-9;]*)m", written):
        codes = [int(c) for c in params.split(";") if c]
        fg = [c for c in codes if 30 <= c <= 37 or 90 <= c <= 97 or c == 38]
        if fg:
            return _sgr_colour(codes[codes.index(fg[0]) :])
    raise AssertionError(f"no colour written: {written!r}")


def _luminance(c: ColorTriplet) -> float:
    return 0.2126 * c.red + 0.7152 * c.green + 0.0722 * c.blue


def _background(style: Style) -> ColorTriplet:
    assert style.bgcolor is not None
    return style.bgcolor.get_truecolor()


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_unheard_words_are_dimmer_than_heard_ones_in_every_colour_system(
    theme: str, demo_log: Path
) -> None:
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        screen = await loaded(pilot)
        view = screen.query_one(TurnView)
        view._styles.clear()  # resolved again under this theme
        heard, unheard = view._style("agent"), view._style("unspoken")
        background = _luminance(_background(heard))
        for system in SYSTEMS:
            heard_gap = abs(_luminance(_foreground(_written(heard, system))) - background)
            unheard_gap = abs(_luminance(_foreground(_written(unheard, system))) - background)
            assert unheard_gap < heard_gap, (theme, system, heard_gap, unheard_gap)
            assert heard_gap - unheard_gap > 40, (theme, system)  # visibly so


async def test_unheard_style_has_nothing_terminals_draw_their_own_way(demo_log: Path) -> None:
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        unheard = screen.query_one(TurnView)._style("unspoken")
        assert unheard.color is not None  # an explicit colour, not the terminal's default
        assert not (unheard.italic or unheard.dim or unheard.reverse or unheard.blink)
        for system in SYSTEMS:
            params = re.findall(r"\x1b\[([0-9;]*)m", _written(unheard, system))
            attributes = {int(c) for p in params for c in p.split(";")[:1] if c}
            assert not attributes & {2, 3, 5, 7}, (system, params)  # dim, italic, blink, reverse


class _TranscriptApp(App[None]):
    """The live call's transcript alone, with the call screen's styles."""

    CSS_PATH = [str(CUTIN_STYLES / "app.tcss"), str(CUTIN_STYLES / "call.tcss")]

    def compose(self) -> ComposeResult:
        yield TranscriptView(id="transcript")


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_the_live_transcript_dims_the_unheard_rest_too(theme: str) -> None:
    app = _TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await pilot.pause()
        view = app.query_one(TranscriptView)
        unheard = view._style("unspoken")
        assert not (unheard.italic or unheard.dim or unheard.reverse)
        text = view.rich_style  # the heard words: the widget's own text colour
        background = _luminance(_background(text))
        for system in SYSTEMS:
            heard_gap = abs(_luminance(_foreground(_written(text, system))) - background)
            unheard_gap = abs(_luminance(_foreground(_written(unheard, system))) - background)
            assert heard_gap - unheard_gap > 40, (theme, system, heard_gap, unheard_gap)
