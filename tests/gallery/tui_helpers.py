"""Shared set-up for the gallery's pilot and snapshot tests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList

from cutin_tui.screens.overlaps import OverlapsApp, OverlapsScreen
from replay.gallery import load_gallery

SIZE = (120, 40)


def gallery_app(
    *, speed: float = 1.0, export_path: Path | None = None, extra: tuple[Path, ...] = ()
) -> tuple[OverlapsApp, OverlapsScreen]:
    screen = OverlapsScreen(load_gallery(extra), speed=speed, export_path=export_path)
    return OverlapsApp(screen), screen


async def select(pilot: Pilot[Any], screen: OverlapsScreen, entry_id: str) -> None:
    """Highlight ``entry_id`` in the list, as the arrow keys would."""
    menu = screen.query_one("#gallery-list", OptionList)
    menu.highlighted = menu.get_option_index(entry_id)
    await pilot.pause()


async def play_to_end(pilot: Pilot[Any], screen: OverlapsScreen, timeout: float = 20.0) -> None:
    await pilot.press("space")
    await pilot.pause()
    waited = 0.0
    while screen.playing and waited < timeout:
        await asyncio.sleep(0.05)
        waited += 0.05
    await pilot.pause(0.2)
    assert not screen.playing, "the example did not finish playing"
