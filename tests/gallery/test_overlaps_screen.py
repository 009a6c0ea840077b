"""Pilot tests of the gallery screen: browse, read, play live, stop, export, leave."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import OptionList, Static

from replay.gallery import load_gallery, run_entry
from sessions.log.models import EndEvent, Opportunity
from tests.gallery.tui_helpers import SIZE, gallery_app, play_to_end, select


def text_of(screen: object, selector: str) -> str:
    from textual.screen import Screen

    assert isinstance(screen, Screen)
    return str(screen.query_one(selector, Static).render())


async def test_the_list_groups_every_type_and_shows_the_first() -> None:
    app, screen = gallery_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        menu = screen.query_one("#gallery-list", OptionList)
        ids = [menu.get_option_at_index(i).id for i in range(menu.option_count)]
        headings = [i for i in ids if i and i.startswith("heading-")]
        assert headings == ["heading-overlap", "heading-typical", "heading-stuttering"]
        for entry in load_gallery().entries:
            assert entry.id in ids
        assert ids.index("heading-stuttering") < ids.index("block")
        assert "Continuer" in text_of(screen, "#entry-title")
        assert "mm-hmm" in text_of(screen, "#entry-explanation")


async def test_arrow_keys_change_the_type_and_its_drawing() -> None:
    app, screen = gallery_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(6):
            await pilot.press("down")
        await pilot.pause()
        assert "Talk-over" in text_of(screen, "#entry-title")
        rows = screen.query_one("#entry-lanes").rows_text(100)  # type: ignore[attr-defined]
        assert rows[0].startswith("agent") and rows[1].startswith("caller")
        assert "▓" in rows[0] and "▓" in rows[1], "the talk-over is drawn as both at once"
        assert "▲" in rows[2], "the caller's barge-in is marked"
        assert "INTERRUPT" in text_of(screen, "#entry-checks")


async def test_stuttering_like_types_are_labelled_and_show_the_transcript_form() -> None:
    app, screen = gallery_app()
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, screen, "block")
        assert "stuttering-like, not typical" in text_of(screen, "#entry-badges")
        assert "written example, not produced by cutin's injection" in text_of(
            screen, "#entry-badges"
        )
        assert "—(block)—" in text_of(screen, "#entry-written")


async def test_play_runs_the_example_live_through_the_call_loop() -> None:
    """Played live (at 40×), the loop reports exactly the virtual run's events."""
    app, screen = gallery_app(speed=40.0)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, screen, "interruption-successful")
        await play_to_end(pilot, screen)
        live = screen.last_play_events
        assert isinstance(live[-1], EndEvent)
        virtual = run_entry(load_gallery().get("interruption-successful")).events
        assert [(e.type, e.t) for e in live] == [(e.type, e.t) for e in virtual]
        checks = text_of(screen, "#entry-checks")
        assert "INTERRUPT (carried out)" in checks
        assert "words the agent has said this turn: 13 (needs ≥ 12)" in checks
        assert "played" in text_of(screen, "#entry-status")
        rows = screen.query_one("#entry-lanes").rows_text(100)  # type: ignore[attr-defined]
        assert "✕" in rows[0], "the agent's cut is drawn in its lane"


async def test_scripted_examples_play_their_actions_live() -> None:
    app, screen = gallery_app(speed=40.0)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, screen, "false-interruption")
        await play_to_end(pilot, screen)
        tokens = [getattr(e, "token", None) for e in screen.last_play_events]
        assert "(cough)" in tokens
        assert any(isinstance(e, Opportunity) for e in screen.last_play_events)


async def test_stop_ends_a_play_and_choosing_another_type_stops_it_too() -> None:
    app, screen = gallery_app(speed=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        await asyncio.sleep(0.4)
        await pilot.pause()
        assert screen.playing
        await pilot.press("s")
        await pilot.pause(0.2)
        assert not screen.playing
        assert "stopped" in text_of(screen, "#entry-status")
        end = screen.last_play_events[-1]
        assert isinstance(end, EndEvent) and end.reason == "hangup"
        await pilot.press("space")
        await asyncio.sleep(0.2)
        await pilot.press("down")
        await pilot.pause(0.2)
        assert not screen.playing


async def test_export_writes_the_handout(tmp_path: Path) -> None:
    target = tmp_path / "handout.html"
    app, screen = gallery_app(export_path=target)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await pilot.pause()
        html = target.read_text(encoding="utf-8")
        assert html.startswith("<!doctype html>")
        assert html.count("<svg") == len(screen.gallery.entries)


async def test_a_broken_example_file_is_reported_on_screen(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('id = "bad"\nkind = "overlap"\n', encoding="utf-8")
    app, screen = gallery_app(extra=(tmp_path,))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any("bad.toml" in n.message for n in app._notifications)
        assert len(screen.gallery.entries) == len(load_gallery().entries)


async def test_escape_leaves_the_gallery() -> None:
    app, _ = gallery_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 0


def test_every_binding_has_an_id_and_a_tooltip() -> None:
    from textual.binding import Binding

    from cutin_tui.screens.overlaps import OverlapsScreen

    for binding in OverlapsScreen.BINDINGS:
        assert isinstance(binding, Binding)
        assert binding.id and binding.tooltip
