"""The home screen (``cutin`` with no command): pick a job.

Other parts add their entries to :data:`HOME_ENTRIES` (or call
:func:`register_home_entry`) with a function that opens their screen; the home
screen lists whatever is registered, in order, and needs no edit for a new one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class HomeEntry:
    id: str
    title: str
    description: str
    open: Callable[[App[object]], None] | None = None
    """Opens the entry's screen on the app; None = not available yet (shown, greyed)."""


def _open_call(app: App[object]) -> None:
    from cutin_tui.screens.app import open_call_screen

    open_call_screen(app)


def _open_overlaps(app: App[object]) -> None:
    from cutin_tui.screens.overlaps import open_overlaps_screen

    open_overlaps_screen(app)


def _open_replay(app: App[object]) -> None:
    from cutin_tui.screens.replay import open_replay_screen

    open_replay_screen(app)


HOME_ENTRIES: list[HomeEntry] = [
    HomeEntry(
        "call",
        "Call",
        "type against the scripted agent; the rules interrupt and backchannel at its pauses",
        _open_call,
    ),
    HomeEntry("replay", "Replay", "step through logged calls and τ2-bench trials", _open_replay),
    HomeEntry(
        "overlaps",
        "Overlaps",
        "a gallery of overlap and disfluency types, playable; printable handout",
        _open_overlaps,
    ),
]


def register_home_entry(entry: HomeEntry) -> None:
    """Add or replace (same id) an entry on the home screen."""
    for i, existing in enumerate(HOME_ENTRIES):
        if existing.id == entry.id:
            HOME_ENTRIES[i] = entry
            return
    HOME_ENTRIES.append(entry)


class HomeScreen(Screen[None]):
    """Pick a job: a live call, replaying calls, or the overlap gallery."""

    BINDINGS = [
        Binding("q", "app.quit", "Quit", id="home.quit", tooltip="Leave cutin", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("cutin · a workbench for testing voice agents. Pick a job:", id="home-intro")
        yield OptionList(
            *(
                Option(f"{e.title:<10} {e.description}", id=e.id, disabled=e.open is None)
                for e in HOME_ENTRIES
            ),
            id="home-menu",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "home"
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        entry = next((e for e in HOME_ENTRIES if e.id == event.option.id), None)
        if entry is not None and entry.open is not None:
            entry.open(self.app)
