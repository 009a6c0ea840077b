"""Driving the replay app in tests."""

from __future__ import annotations

from typing import Any

from textual.notifications import SeverityLevel
from textual.pilot import Pilot

from cutin_tui.screens.replay import ReplayApp, ReplayScreen

SIZE = (120, 40)


class NotedApp(ReplayApp):
    """The replay app, keeping every notification it showed (severity, title, message)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.notes: list[tuple[str, str, str]] = []

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        self.notes.append((severity, title, str(message)))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)


async def loaded(pilot: Pilot[Any]) -> ReplayScreen:
    """Wait until the loader finished and its messages were handled."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ReplayScreen)
    for _ in range(50):
        if screen.loading_done:
            break
        await pilot.pause(0.02)
    await pilot.pause()
    return screen
