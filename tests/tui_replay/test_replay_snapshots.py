"""Snapshot tests of the replay screen at 120 × 40 (pytest-textual-snapshot).

Update after an intended change with ``pytest tests/tui_replay --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from cutin_tui.screens.replay import ReplayApp
from tests.tui_replay.helpers import SIZE, loaded

Compare = Callable[..., bool]


async def _ready(pilot: Pilot[None]) -> None:
    await loaded(pilot)


def test_demo_call_opens_on_the_call_row(snap_compare: Compare, demo_log: Path) -> None:
    assert snap_compare(ReplayApp([demo_log]), terminal_size=SIZE, run_before=_ready)


def test_demo_call_focused_on_the_first_cut(snap_compare: Compare, demo_log: Path) -> None:
    assert snap_compare(
        ReplayApp([demo_log]), terminal_size=SIZE, run_before=_ready, press=["tab", "c"]
    )


def test_demo_call_without_judge_columns(snap_compare: Compare, demo_log: Path) -> None:
    assert snap_compare(
        ReplayApp([demo_log]), terminal_size=SIZE, run_before=_ready, press=["v", "j", "j"]
    )


def test_tau2_failures_only(snap_compare: Compare, tau2_airline: Path) -> None:
    assert snap_compare(
        ReplayApp([tau2_airline]), terminal_size=SIZE, run_before=_ready, press=["f", "n"]
    )
