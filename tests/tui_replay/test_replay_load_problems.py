"""Paths `cutin replay` cannot load: none loads → one line each on stderr and exit 2,
before any screen; some load → the screen opens and names each failing file, with its
reason, in a panel under the list that stays (not only a notification)."""

from __future__ import annotations

from pathlib import Path

from textual.geometry import Region

from cutin_tui.screens.replay import LoadProblems, ReplayApp
from replay.load import load_path, preflight
from tests.support.cli import run_cutin
from tests.tui_replay.helpers import SIZE, NotedApp, loaded
from tests.tui_replay.logs import write_demo_log, write_plain_log


def _not_a_log(folder: Path, name: str = "passwd") -> Path:
    path = folder / name
    path.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n")
    return path


def test_a_file_that_is_no_log_is_one_line_and_exit_2(
    child_env: dict[str, str], tmp_path: Path
) -> None:
    bad = _not_a_log(tmp_path)
    proc = run_cutin("replay", str(bad), env=child_env, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"cutin: {bad}:")
    assert "expected a cutin session log" in lines[0]
    assert proc.stdout == ""  # no screen was drawn


def test_every_failing_path_gets_its_own_line(child_env: dict[str, str], tmp_path: Path) -> None:
    bad = _not_a_log(tmp_path)
    missing = tmp_path / "nope.jsonl"
    empty = tmp_path / "empty.json"
    empty.write_text("")
    proc = run_cutin("replay", str(bad), str(missing), str(empty), env=child_env, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert [line.split(": ")[1].rstrip(":1") for line in lines] == [
        str(bad),
        str(missing),
        str(empty),
    ]
    assert "no such file or directory" in lines[1] and "empty file" in lines[2]


def test_a_folder_of_bad_logs_is_refused_too(child_env: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    _not_a_log(folder, "a.jsonl")
    _not_a_log(folder, "b.jsonl")
    proc = run_cutin("replay", str(folder), env=child_env, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and "a.jsonl" in lines[0] and "b.jsonl" in lines[1], proc.stderr


def test_preflight_stops_at_the_first_path_that_loads(tmp_path: Path) -> None:
    bad = _not_a_log(tmp_path)
    good = write_demo_log(tmp_path)
    later = tmp_path / "never-read.json"  # would be a problem if it were read
    done, problems = preflight([bad, good, later])
    assert len(done) == 2 and isinstance(done[0], str) and not isinstance(done[1], str)
    assert problems == [done[0]] and str(bad) in problems[0]


async def test_some_load_and_the_failing_file_is_named_under_the_list(tmp_path: Path) -> None:
    good = write_demo_log(tmp_path)
    bad = _not_a_log(tmp_path)
    other = write_plain_log(tmp_path, "other.jsonl", "other1")
    app = NotedApp([good, bad, other])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert [t.id for t in screen.trials] == ["demo01", "other1"]
        panel = screen.query_one(LoadProblems)
        assert panel.display and panel.region.height > 0  # on screen, not a toast
        assert len(panel.problems) == 1
        assert str(bad) in panel.problems[0] and "not valid JSON" in panel.problems[0]
        assert panel.border_title == "could not load 1"
        whole = Region(0, 0, *panel.outer_size)
        shown = "".join(strip.text for strip in panel.render_lines(whole))
        assert "could not load 1" in shown and "✗" in shown and "passwd" in shown


async def test_a_skipped_log_of_a_folder_is_named_under_the_list(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    write_plain_log(folder, "a.jsonl", "fine")
    _not_a_log(folder, "b.jsonl")
    app = ReplayApp([folder])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert [t.id for t in screen.trials] == ["fine"]
        panel = screen.query_one(LoadProblems)
        assert panel.display and len(panel.problems) == 1 and "b.jsonl" in panel.problems[0]


async def test_no_problem_no_panel(tmp_path: Path) -> None:
    app = ReplayApp([write_demo_log(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert not screen.query_one(LoadProblems).display


async def test_what_the_preflight_loaded_is_not_loaded_again(tmp_path: Path) -> None:
    log = write_demo_log(tmp_path)
    batch = load_path(log)
    log.unlink()  # loading it again would fail
    app = ReplayApp([log], preloaded=[batch])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert [t.id for t in screen.trials] == ["demo01"]
        assert not screen.query_one(LoadProblems).display


def test_a_hostile_name_stays_on_its_one_line(child_env: dict[str, str], tmp_path: Path) -> None:
    bad = _not_a_log(tmp_path, "two\nlines\x1b[31m.json")
    proc = run_cutin("replay", str(bad), env=child_env, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "\x1b" not in proc.stderr, proc.stderr
    assert "two␤lines" in lines[0]


async def test_a_hostile_name_reaches_the_header_cleaned(tmp_path: Path) -> None:
    named = tmp_path / "evil\x1b]0;owned\x07.jsonl"
    write_demo_log(tmp_path).rename(named)
    app = ReplayApp([named])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert "\x1b" not in screen.sub_title and "\x07" not in screen.sub_title
        assert "evil␛]0;owned␇.jsonl" in screen.sub_title
