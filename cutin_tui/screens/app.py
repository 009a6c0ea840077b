"""The app factory: the home screen, or straight into a call."""

from __future__ import annotations

import asyncio
import signal
from functools import partial
from pathlib import Path

from textual.app import App
from textual.binding import Binding

from cutin_tui.calls.call_driver import CallDriver
from cutin_tui.calls.call_setup import open_call
from cutin_tui.screens.home import HomeScreen
from sessions.plan import CallPlan


class CutinApp(App[int]):
    """cutin's Textual app. With ``call`` it opens that call; otherwise the home screen."""

    TITLE = "cutin"
    CSS_PATH = ["../styles/app.tcss", "../styles/call.tcss", "../styles/home.tcss"]
    BINDINGS = [
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            id="app.quit",
            tooltip="Hang up any call (its log is kept) and leave cutin",
            priority=True,
        ),
    ]

    def __init__(
        self, *, call: CallDriver | None = None, call_plan: CallPlan | None = None
    ) -> None:
        super().__init__()
        self.call_plan = call_plan
        """The call the home screen opens (None: the defaults and the user's settings)."""
        self.drivers: list[CallDriver] = []
        """Every call this app ran, in order; the CLI stops them and prints their logs."""
        self._initial_call = call

    @property
    def call_logs(self) -> list[Path]:
        return [d.log_path for d in self.drivers if d.log_path is not None]

    def on_mount(self) -> None:
        self._exit_on_signals()
        if self._initial_call is not None:
            self.start_call(self._initial_call, leave_exits=True)
        else:
            self.push_screen(HomeScreen())

    def _exit_on_signals(self) -> None:
        """SIGTERM or a closed terminal (SIGHUP) exits like ctrl+q, so the log gets its end."""
        try:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(sig, partial(self.exit, return_code=128 + sig))
        except (NotImplementedError, AttributeError, RuntimeError):  # Windows, or no loop
            pass

    def start_call(self, driver: CallDriver, *, leave_exits: bool) -> None:
        """Show the call screen for ``driver`` (started when the screen mounts)."""
        from cutin_tui.screens.call import CallScreen

        self.drivers.append(driver)
        self.push_screen(CallScreen(driver, leave_exits=leave_exits))

    def stop_calls(self) -> None:
        """Hang up every call still running (their logs get an end event and close)."""
        for driver in self.drivers:
            driver.stop()


def default_call_plan() -> CallPlan:
    """The home screen's call: the tester types to the scripted agent in real time, logged
    to the user's sessions dir at their speaking rate (CUTIN_* environment variables)."""
    from sessions.settings import Settings

    settings = Settings()
    return CallPlan(sessions_dir=settings.sessions_dir, words_per_minute=settings.words_per_minute)


def open_call_screen(app: App[object]) -> None:
    """Open a call from the home screen; a problem is a notification, not a crash."""
    assert isinstance(app, CutinApp)
    plan = app.call_plan or default_call_plan()
    try:
        driver = open_call(plan)
    except (OSError, ValueError, RuntimeError) as exc:
        app.notify(str(exc), title="cannot start the call", severity="error")
        return
    app.start_call(driver, leave_exits=False)
