"""A long log is painted from its first lines while the rest loads, then the whole call
replaces the preview (the replay budget: a two-hour log's first paint ≤ 1 s)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from bench.bench_replay import synthetic_call
from cutin_tui.screens.replay import ReplayApp, ReplayScreen
from replay.load import PREVIEW_BYTES, PREVIEW_LINES, load_log, load_log_preview
from sessions.log import read_session
from tests.support.logs import header, write_log

SIZE = (120, 40)


def long_log(folder: Path) -> Path:
    events, _words = synthetic_call(random.Random(7))
    head = header("long", started_at="2026-01-01T00:00:00+00:00", scenario=None, tendencies=None)
    path = write_log(folder / "long.jsonl", events, head)
    assert path.stat().st_size > PREVIEW_BYTES
    return path


def test_read_session_max_lines(tmp_path: Path) -> None:
    path = long_log(tmp_path)
    whole = read_session(path)
    first = read_session(path, max_lines=11)
    assert first.events == whole.events[: len(first.events)]
    assert len(first.events) == 10  # the header is line 1
    assert not first.warnings  # the lines cut off are not a torn tail
    short = read_session(path, max_lines=10**9)
    assert len(short.events) == len(whole.events)


def test_preview_is_the_start_of_the_call(tmp_path: Path) -> None:
    path = long_log(tmp_path)
    preview = load_log_preview(path)
    assert preview is not None
    whole = load_log(path)
    assert 0 < len(preview.turns) < len(whole.turns)
    assert [t.spoken for t in preview.turns[:-1]] == [
        t.spoken for t in whole.turns[: len(preview.turns) - 1]
    ]
    assert any("preview" in w and f"{PREVIEW_LINES:,}" in w for w in preview.warnings)


def test_no_preview_for_a_short_log_or_another_file(tmp_path: Path) -> None:
    path = long_log(tmp_path)
    short = tmp_path / "short.jsonl"
    short.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:50]))
    assert load_log_preview(short) is None
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"x" * (PREVIEW_BYTES + 10))
    assert load_log_preview(junk) is None
    assert load_log_preview(tmp_path / "missing.jsonl") is None


async def test_screen_paints_the_preview_then_the_whole_call(tmp_path: Path) -> None:
    path = long_log(tmp_path)
    whole_turns = len(load_log(path).turns)
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        view = screen.turn_view
        seen: list[int] = []  # turn counts of the tables shown, in order
        for _ in range(3000):
            if view.table is not None and (not seen or seen[-1] != len(view.table.trial.turns)):
                seen.append(len(view.table.trial.turns))
            if screen.trials and view.table is not None and view.table.trial is screen.trials[0]:
                break
            await asyncio.sleep(0.005)
        await pilot.pause()
        assert seen[-1] == whole_turns
        assert view.table is not None and view.table.trial is screen.trials[0]
        assert not any("preview" in w for w in view.table.trial.warnings)
    # The preview (~50 ms to load) is posted before the whole log (~10x longer) starts
    # loading in the same thread, so the screen always gets to show it first.
    assert len(seen) == 2
    assert seen[0] < whole_turns


async def test_full_collections_are_rarer_while_the_replay_is_open(tmp_path: Path) -> None:
    import gc

    before = gc.get_threshold()
    app = ReplayApp([long_log(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert gc.get_threshold() == (before[0], before[1], before[2] * 10)
    assert gc.get_threshold() == before
