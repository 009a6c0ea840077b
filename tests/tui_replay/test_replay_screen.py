"""Pilot tests of the replay screen: listing, filtering, jumping, columns, notices."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.app import App
from textual.worker import WorkerState

from cutin_tui.screens.replay import TOAST_COLUMNS, ReplayApp, shown_folder
from cutin_tui.views.turn_layout import TurnTable
from cutin_tui.widgets.turn_view import TurnView
from replay.load import load_batch, load_log
from sessions.settings import Settings
from tests.conftest import TAU2_FIXTURES
from tests.tui_replay.helpers import SIZE, NotedApp, loaded
from tests.tui_replay.logs import write_demo_log, write_plain_log


def judges(view: TurnView) -> tuple[str, ...]:
    """The judge columns shown (a call, so that mypy does not narrow across key presses)."""
    return view.columns.judges


def focused(app: App[None]) -> object:
    return app.focused


def _cut_rows(path: Path) -> list[int]:
    trial = load_log(path)
    table = TurnTable(trial)
    return [row for row in range(len(table)) if table.is_cut(row)]


def _failing_rows(path: Path) -> list[int]:
    table = TurnTable(load_log(path))
    return [row for row in range(len(table)) if table.fails(row)]


# ---------------------------------------------------------------- the τ2 airline file
async def test_tau2_lists_fifty_trials_and_filters_to_failures(tau2_airline: Path) -> None:
    app = ReplayApp([tau2_airline])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        listing = screen.trial_list
        assert listing.option_count == 50
        assert listing.border_title == "calls 50"
        await pilot.press("f")
        assert listing.option_count == 22
        assert listing.border_title == "failures 22"
        assert all(listing.trial_at(n).failed for n in range(22))
        await pilot.press("f")
        assert listing.option_count == 50


async def test_tau2_next_failure_moves_to_the_next_failed_trial(tau2_airline: Path) -> None:
    failed_ids = [t.id for t in load_batch([tau2_airline]).trials if t.failed]
    app = ReplayApp([tau2_airline])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        listing, view = screen.trial_list, screen.turn_view
        assert listing.current is not None and listing.current.id == failed_ids[0]
        await pilot.press("n")
        await pilot.pause()
        assert listing.current is not None and listing.current.id == failed_ids[1]
        # τ2 text trials fail as a whole: the jump lands on the call row (row 0).
        assert view.table is not None and view.table.trial.id == failed_ids[1]
        assert view.cursor == 0
        await pilot.press("n", "n")
        await pilot.pause()
        assert listing.current is not None and listing.current.id == failed_ids[3]
        await pilot.press("N")
        await pilot.pause()
        assert listing.current is not None and listing.current.id == failed_ids[2]


async def test_tau2_call_row_shows_reward_verdicts_in_the_tau2_column(tau2_airline: Path) -> None:
    app = ReplayApp([tau2_airline])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.turn_view
        assert judges(view) == ("tau2",)
        call_row = "\n".join(view.row_lines(0))
        assert "✗ reward" in call_row
        # focused (the cursor starts on the call row): the rationale is shown too
        assert "breakdown" in call_row
        await pilot.press("j")
        assert "breakdown" not in "\n".join(view.row_lines(0))
        assert view.row_lines(1)[0].lstrip("▌ ").startswith("0:00.0 agent  Hi! How can I help")


# ---------------------------------------------------------------- the crafted cutin log
async def test_c_moves_to_each_cut_and_wraps(demo_log: Path) -> None:
    cuts = _cut_rows(demo_log)
    assert len(cuts) == 2
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.turn_view
        assert view.cursor == 0
        await pilot.press("c")
        assert view.cursor == cuts[0]
        lines = "\n".join(view.row_lines(cuts[0]))
        assert "apartment ▌cut number if there is" in lines.replace("\n", " ")
        await pilot.press("c")
        assert view.cursor == cuts[1]
        await pilot.press("c")
        assert view.cursor == cuts[0]
        await pilot.press("C")
        assert view.cursor == cuts[1]


async def test_n_moves_to_failing_turns(demo_log: Path) -> None:
    failing = _failing_rows(demo_log)
    assert failing[0] == 0 and len(failing) >= 2  # the call failed, and some turns did
    app = NotedApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.turn_view
        for row in failing[1:]:
            await pilot.press("n")
            assert view.cursor == row
        await pilot.press("n")
        assert view.cursor == 0  # wrapped around to the failed call
        await pilot.press("N")
        assert view.cursor == failing[-1]


async def test_focused_row_shows_rationales_and_judge_columns_toggle(demo_log: Path) -> None:
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.turn_view
        assert judges(view) == ("rules", "llm")
        cut = _cut_rows(demo_log)[0]
        before = view.cell_text(cut, "rules")
        assert "✓ yield" in before and "stopped 0.30" not in before
        await pilot.press("c")
        assert "stopped 0.30 s after the tester cut in" in view.cell_text(cut, "rules")
        assert "Stopped promptly" in view.cell_text(cut, "llm")
        assert "✓ yield" in "\n".join(view.row_lines(cut))
        await pilot.press("v")
        assert judges(view) == ()
        assert "✓ yield" not in "\n".join(view.row_lines(cut))
        await pilot.press("2")
        assert judges(view) == ("llm",)
        await pilot.press("v")
        assert judges(view) == ()
        await pilot.press("v")
        assert judges(view) == ("rules", "llm")


async def test_tester_turns_show_the_disfluency_diff(demo_log: Path) -> None:
    trial = load_log(demo_log)
    first_user = next(t for t in trial.turns if t.speaker == "user")
    assert first_user.insertions, "the fixture's first tester turn has insertions"
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        text = screen.turn_view.cell_text(first_user.index + 1, "text")
        assert text == f"{first_user.original} heard: {first_user.rendered}"


async def test_j_and_k_step_through_turns_from_the_list(demo_log: Path) -> None:
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert focused(app) is screen.trial_list
        await pilot.press("j", "j", "j")
        assert screen.turn_view.cursor == 3
        await pilot.press("k")
        assert screen.turn_view.cursor == 2
        await pilot.press("tab", "down")
        assert focused(app) is screen.turn_view
        assert screen.turn_view.cursor == 3
        assert str(screen.turn_view.border_subtitle).startswith("turn 3 of 8")


async def test_palette_runs_replay_commands(demo_log: Path) -> None:
    cut = _cut_rows(demo_log)[0]
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"next cut")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        assert screen.turn_view.cursor == cut


async def test_space_without_a_recording_says_so(demo_log: Path) -> None:
    app = NotedApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("j", "space")
        severity, title, message = app.notes[-1]
        assert severity == "warning" and title == "no audio"
        assert "demo-call.wav" in message


@pytest.mark.audio
async def test_space_plays_the_turn_from_the_recording(
    demo_log: Path, pulse_server: object
) -> None:
    import numpy as np

    from sessions.speech import SAMPLE_RATE
    from sessions.speech.wav import write_wav

    seconds = 45
    tone = 0.1 * np.sin(np.arange(seconds * SAMPLE_RATE) * 2 * np.pi * 220 / SAMPLE_RATE)
    write_wav(demo_log.with_suffix(".wav"), tone.astype(np.float32))
    app = NotedApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        await pilot.press("j", "j", "space")  # the first tester turn, about 3 s
        assert screen.playback is not None
        await screen.playback.wait()
        await pilot.pause()
        assert screen.playback.state == WorkerState.SUCCESS
        assert [n for n in app.notes if n[0] == "error"] == []


# ---------------------------------------------------------------- loading
async def test_a_bad_file_is_named_and_the_rest_still_load(tmp_path: Path) -> None:
    good = write_demo_log(tmp_path)
    other = write_plain_log(tmp_path, "other.jsonl", "other1")
    bad = tmp_path / "broken.json"
    bad.write_text("{ this is not json", encoding="utf-8")
    app = NotedApp([good, bad, other])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert [t.id for t in screen.trials] == ["demo01", "other1"]
        errors = [n for n in app.notes if n[0] == "error"]
        assert len(errors) == 1
        assert "broken.json" in errors[0][2] and errors[0][1] == "could not load"


async def test_no_path_lists_recent_calls_of_the_sessions_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    old = write_plain_log(folder, "a-old.jsonl", "old")
    new = write_plain_log(folder, "b-new.jsonl", "new", cut=True)
    os.utime(old, (1_000_000, 1_000_000))
    os.utime(new, (2_000_000, 2_000_000))
    monkeypatch.setenv("CUTIN_SESSIONS_DIR", str(folder))
    app = ReplayApp(sessions_dir=Settings().sessions_dir)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert [t.id for t in screen.trials] == ["new", "old"]
        assert "recent calls in" in str(screen.sub_title)


async def test_an_empty_sessions_dir_says_how_to_make_a_call(tmp_path: Path) -> None:
    app = ReplayApp(sessions_dir=tmp_path / "nothing-here")
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.turn_view
        assert view.table is None
        assert view.message.startswith("No calls in")
        assert "cutin call" in view.message


async def test_a_long_call_scrolls_to_its_end(tmp_path: Path) -> None:
    from tests.tui_replay.logs import write_long_log

    path = write_long_log(tmp_path / "long.jsonl", minutes=20)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.turn_view
        rows = view.row_count
        assert rows > 150
        await pilot.press("tab", "end")
        assert view.cursor == rows - 1
        assert view.scroll_y == view.max_scroll_y
        assert view.row_region(rows - 1).bottom <= view.scroll_y + view.size.height
        await pilot.press("home")
        assert view.cursor == 0 and view.scroll_y == 0
        await pilot.press("pagedown")
        assert 0 < view.cursor < rows - 1


# ---------------------------------------------------------------- reports and judges
async def test_r_writes_an_html_report_of_the_listed_calls(demo_log: Path, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    app = NotedApp([demo_log], reports_dir=reports)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        written = list(reports.glob("cutin-report-*.html"))
        assert len(written) == 1
        page = written[0].read_text(encoding="utf-8")
        assert "demo01" in page and "▌cut" in page
        assert (
            "information",
            "report written",
            f"{written[0].name}\nin {shown_folder(reports, TOAST_COLUMNS - 3)}\n(1 call)",
        ) in app.notes


async def test_running_the_rule_judge_adds_the_rules_column(tau2_airline: Path) -> None:
    app = ReplayApp([tau2_airline])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert judges(screen.turn_view) == ("tau2",)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"rule judge")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert judges(screen.turn_view) == ("rules", "tau2")
        trial = screen.turn_view.table
        assert trial is not None
        assert any(v.judge == "rules" for v in trial.trial.verdicts)


async def test_a_failing_worker_is_one_notification(demo_log: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the reports folder should be", encoding="utf-8")
    app = NotedApp([demo_log], reports_dir=blocker / "reports")
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        errors = [n for n in app.notes if n[0] == "error"]
        assert len(errors) == 1
        assert errors[0][1] == "report failed"
        assert "not-a-folder" in errors[0][2]


async def test_filtering_keeps_the_focused_turn(demo_log: Path, tmp_path: Path) -> None:
    passing = write_plain_log(tmp_path, "passing.jsonl", "fine")
    app = ReplayApp([passing, demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        listing = screen.trial_list
        await pilot.press("n")  # the first failure: the demo call
        assert listing.current is not None and listing.current.id == "demo01"
        await pilot.press("c")
        row = screen.turn_view.cursor
        assert row > 0
        await pilot.press("f")
        assert listing.option_count == 1
        assert listing.current is not None and listing.current.id == "demo01"
        assert screen.turn_view.cursor == row


async def test_full_duplex_tick_trials_show_cuts_without_transcripts() -> None:
    app = ReplayApp([TAU2_FIXTURES / "voice_full_duplex"])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert screen.trial_list.option_count == 3
        view = screen.turn_view
        await pilot.press("c")
        assert view.table is not None and view.table.is_cut(view.cursor)
        text = view.cell_text(view.cursor, "text")
        assert text.startswith("▌cut (speech,") and "no words" in text


async def test_a_wider_terminal_widens_the_text_column(demo_log: Path) -> None:
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.turn_view
        narrow, rows = view.columns.text_w, view.virtual_size.height
        await pilot.resize_terminal(180, 40)
        await pilot.pause()
        assert view.columns.text_w > narrow
        assert view.virtual_size.height < rows  # fewer wrapped lines
        assert view.columns.width == view.scrollable_content_region.width


async def test_q_leaves(demo_log: Path) -> None:
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
