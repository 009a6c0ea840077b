"""Snapshots of the gallery at 120×40. Nothing depends on the wall clock: the
drawings come from the virtual run, and a played example is shown once it ended.
Update after a deliberate change with ``pytest tests/gallery --snapshot-update``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual.pilot import Pilot

from tests.gallery.tui_helpers import SIZE, gallery_app, play_to_end, select

SnapCompare = Callable[..., bool]


def _at(entry_id: str, *, play: bool = False) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = pilot.app.screen
        await select(pilot, screen, entry_id)  # type: ignore[arg-type]
        if play:
            await play_to_end(pilot, screen)  # type: ignore[arg-type]

    return run_before


def test_gallery_opens_on_the_continuer(snap_compare: SnapCompare) -> None:
    app, _ = gallery_app()
    assert snap_compare(app, terminal_size=SIZE, run_before=_at("continuer"))


def test_gallery_talk_over(snap_compare: SnapCompare) -> None:
    app, _ = gallery_app()
    assert snap_compare(app, terminal_size=SIZE, run_before=_at("talk-over"))


def test_gallery_block_is_labelled_stuttering_like(snap_compare: SnapCompare) -> None:
    app, _ = gallery_app()
    assert snap_compare(app, terminal_size=SIZE, run_before=_at("block"))


def test_gallery_after_playing_the_successful_interruption(snap_compare: SnapCompare) -> None:
    app, _ = gallery_app(speed=40.0)
    assert snap_compare(
        app, terminal_size=SIZE, run_before=_at("interruption-successful", play=True)
    )
