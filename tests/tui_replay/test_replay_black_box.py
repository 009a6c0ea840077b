"""Replay of a call to a black-box agent (the hand-made log in tests/support/black_box_log.py):
the cut turn shows ▌cut at the tester's onset and ■stop where the agent's audio stopped,
with the latency; a false yield and an agent that talked on are marked on their turns.
Fast: no audio.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from cutin_tui.screens.replay import ReplayApp
from cutin_tui.views.turn_layout import GUTTER_W
from cutin_tui.widgets.turn_view import TurnView
from tests.support.black_box_log import write_black_box_log
from tests.tui_replay.helpers import SIZE, loaded

Compare = Callable[..., bool]


@pytest.fixture
def black_box_log(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    return write_black_box_log(folder)


def _row(view: TurnView, row: int) -> str:
    """A row's text as one line of words, without the focus gutter."""
    return " ".join(" ".join(line[GUTTER_W:] for line in view.row_lines(row)).split())


async def _ready(pilot: Pilot[None]) -> None:
    await loaded(pilot)


def test_a_cut_black_box_turn(snap_compare: Compare, black_box_log: Path) -> None:
    assert snap_compare(
        ReplayApp([black_box_log]), terminal_size=SIZE, run_before=_ready, press=["tab", "c"]
    )


async def test_c_lands_on_the_cut_with_both_points(black_box_log: Path) -> None:
    app = ReplayApp([black_box_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.turn_view
        await pilot.press("tab", "c")
        first = _row(view, view.cursor)
        assert "we have ▌cut on ■stop+0.25s" in first
        assert "agent stopped 0.25 s after the tester began" in first
        await pilot.press("c")
        second = _row(view, view.cursor)
        assert "▌cut sent you" in second and "▶talked-on" in second
        rows = [_row(view, r) for r in range(1, len(screen.turn_view.table or ()))]
        false_yield = next(r for r in rows if "⟨mm-hmm⟩" in r)
        assert "■false-yield+0.31s" in false_yield
