"""The home screen's Replay entry opens the replay of recent calls; q comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutin_tui.screens.app import CutinApp
from cutin_tui.screens.home import HOME_ENTRIES, HomeScreen
from cutin_tui.screens.replay import ReplayScreen
from tests.tui_replay.helpers import SIZE, loaded
from tests.tui_replay.logs import write_plain_log


async def test_home_replay_entry_lists_recent_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_plain_log(folder, "one.jsonl", "call1", cut=True)
    monkeypatch.setenv("CUTIN_SESSIONS_DIR", str(folder))
    app = CutinApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        position = [e.id for e in HOME_ENTRIES].index("replay")
        await pilot.press(*["down"] * position, "enter")
        await pilot.pause()
        assert isinstance(app.screen, ReplayScreen)
        screen = await loaded(pilot)
        assert [t.id for t in screen.trials] == ["call1"]
        await pilot.press("c")
        assert screen.turn_view.cursor == 1
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
