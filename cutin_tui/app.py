"""The app factory and home screen."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList
from textual.widgets.option_list import Option


class HomeScreen(Screen[None]):
    """Pick a job: a live call, replaying calls, or the overlap gallery."""

    BINDINGS = [Binding("q", "app.quit", "Quit", id="home.quit", tooltip="Leave cutin")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield OptionList(
            Option("Call — type against an agent, with rule-fired interruptions", id="call"),
            id="home-menu",
        )
        yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.app.exit(message=f"selected {event.option.id}")


class CutinApp(App[None]):
    TITLE = "cutin"

    def on_mount(self) -> None:
        self.push_screen(HomeScreen())
