"""The home screen: its registry of entries, and opening a real call from it."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.widgets import OptionList

from cutin_tui.screens.app import CutinApp
from cutin_tui.screens.call import CallScreen
from cutin_tui.screens.home import HOME_ENTRIES, HomeEntry, HomeScreen, register_home_entry
from sessions.log import AgentTurnStart, EndEvent, read_session
from sessions.plan import CallPlan
from tests.tui.helpers import SIZE


async def test_call_entry_opens_a_live_call_that_is_logged(tmp_path: Path) -> None:
    app = CutinApp(call_plan=CallPlan(sessions_dir=tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("enter")  # "Call" is the first entry
        await pilot.pause()
        assert isinstance(app.screen, CallScreen)
        await pilot.pause(0.5)  # real time: the agent starts speaking
        await pilot.press("f10")
        await pilot.pause()
        await pilot.press("escape")  # back home
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
    (path,) = app.call_logs
    log = read_session(path)
    assert log.of(AgentTurnStart)
    (end,) = log.of(EndEvent)
    assert end.reason == "hangup"


async def test_an_entry_registered_by_another_part_is_listed_and_opens() -> None:
    opened: list[str] = []

    def open_it(app: App[object]) -> None:
        opened.append(app.title)

    saved = list(HOME_ENTRIES)
    try:
        register_home_entry(HomeEntry("probe", "Probe", "a test entry", open_it))
        app = CutinApp()
        async with app.run_test(size=SIZE) as pilot:
            menu = app.screen.query_one(OptionList)
            index = next(i for i, e in enumerate(HOME_ENTRIES) if e.id == "probe")
            assert menu.get_option_at_index(index).id == "probe"
            menu.highlighted = index
            await pilot.press("enter")
            await pilot.pause()
        assert opened == ["cutin"]
    finally:
        HOME_ENTRIES[:] = saved
