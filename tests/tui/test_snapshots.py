"""Snapshots of the screens at 120×40, on the virtual clock with fixed seeds.

Nothing in them depends on the wall clock: the call runs virtually to a fixed
time, no log is written (so no path is shown), and the cursor does not blink.
Update after a deliberate change with ``pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from cutin_tui.screens.app import CutinApp
from cutin_tui.screens.home import HOME_ENTRIES, HomeEntry
from tests.tui.helpers import SIZE, advance, type_text, virtual_call

SnapCompare = Callable[..., bool]


def _steady(pilot: Pilot[Any]) -> None:
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False


def _run_to(driver: Any, until: float) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        _steady(pilot)
        await advance(pilot, driver, until)

    return run_before


def test_call_screen_at_an_automatic_interruption(snap_compare: SnapCompare) -> None:
    """β = 1: the agent is cut at its first short pause with 12 words; the cut marker,
    the dimmed unspoken rest, ▲ on the timeline and every check of the decision."""
    app, driver = virtual_call(alpha=0.5, beta=1.0, gamma=0.5, seed=1)
    assert snap_compare(app, terminal_size=SIZE, run_before=_run_to(driver, 12.0))


def test_call_screen_with_backchannels_and_a_disfluent_turn(snap_compare: SnapCompare) -> None:
    """β = 0, γ = 0.7: a typed turn with its rendered (disfluent) form, then the agent's
    second turn with automatic backchannels inline and on the timeline."""
    app, driver = virtual_call(alpha=1.0, beta=0.0, gamma=0.7, seed=3)

    async def run_before(pilot: Pilot[Any]) -> None:
        _steady(pilot)
        await advance(pilot, driver, 20.0)
        await type_text(pilot, "it is 48213, thanks so much")
        await pilot.press("enter")
        await advance(pilot, driver, 40.0)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_home_screen(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout, with a fixed list (other parts register their own entries)."""
    call = next(e for e in HOME_ENTRIES if e.id == "call")
    fixed = [call, HomeEntry("later", "Later", "an entry not wired up yet")]
    monkeypatch.setattr("cutin_tui.screens.home.HOME_ENTRIES", fixed)
    assert snap_compare(CutinApp(), terminal_size=SIZE)


def test_call_screen_on_a_small_terminal(snap_compare: SnapCompare) -> None:
    """80×24: the dials move to one line under the header, panels lose their boxes."""
    app, driver = virtual_call(alpha=0.5, beta=1.0, gamma=0.5, seed=1)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_run_to(driver, 12.0))
