"""The replay screen's `r`: the HTML report goes next to the calls' logs (the cache
folder only when that folder cannot be written, and the toast says so), and its toast
shows the file name whole, on a line of its own, whatever the terminal's width."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widgets._toast import Toast

from cutin_tui.screens.replay import TOAST_COLUMNS, report_folder, shown_folder
from replay.load import load_paths
from tests.fuzz import hostile
from tests.tui_replay.helpers import NotedApp, loaded
from tests.tui_replay.logs import write_demo_log, write_plain_log


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CUTIN_CACHE_DIR", str(cache))
    return cache


def _toast_lines(app: NotedApp) -> list[str]:
    """The lines each toast shows on screen, as rendered (wrapped at its real width)."""
    lines: list[str] = []
    for toast in app.screen.query(Toast):
        width, height = toast.size
        strips = toast.render_lines(Region(0, 0, width, height))
        lines.extend(s.text.strip("▌ ") for s in strips)
    return lines


async def _press_r(app: NotedApp, size: tuple[int, int]) -> list[str]:
    async with app.run_test(size=size, notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        return _toast_lines(app)


async def test_r_writes_the_report_beside_the_log_and_shows_its_name_whole(
    tmp_path: Path, _own_cache: Path
) -> None:
    folder = tmp_path / "calls-of-a-rather-long-folder-name" / "2026-12-04-afternoon-run"
    folder.mkdir(parents=True)
    log = write_demo_log(folder)
    app = NotedApp([log])
    shown = await _press_r(app, (80, 24))  # the narrowest toast
    written = list(folder.glob("cutin-report-*.html"))
    assert len(written) == 1, list(folder.iterdir())
    assert "demo01" in written[0].read_text(encoding="utf-8")
    assert not _own_cache.exists() or not list(_own_cache.rglob("*.html"))
    in_folder = shown_folder(folder, TOAST_COLUMNS - 3)
    assert ("information", "report written", f"{written[0].name}\nin {in_folder}\n(1 call)") in (
        app.notes
    )
    assert in_folder.replace("\n", "") == str(folder)
    # On screen: the name whole on one line, and every folder name whole on one.
    assert written[0].name in shown, shown
    for part in folder.parts[1:]:
        assert any(f"{part}/" in line or line.endswith(part) for line in shown), (part, shown)


async def test_r_counts_calls_in_plain_words_and_uses_the_folder_holding_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_plain_log(tmp_path / "a", "one.jsonl", "fine")
    second = write_plain_log(tmp_path / "b", "two.jsonl", "fine")
    assert report_folder(load_paths([first, second])) == tmp_path
    app = NotedApp([first, second])
    await _press_r(app, (120, 40))
    written = list(tmp_path.glob("cutin-report-*.html"))
    assert len(written) == 1
    assert any(n[2].endswith("\n(2 calls)") for n in app.notes), app.notes


async def test_r_falls_back_to_the_cache_folder_and_says_so(
    tmp_path: Path, _own_cache: Path
) -> None:
    if not hostile.can_lock(tmp_path):
        pytest.skip("cannot make a folder unwritable to this process")
    folder = tmp_path / "read-only-calls"
    folder.mkdir()
    log = write_demo_log(folder)
    folder.chmod(0o555)
    try:
        # As root, mode 555 binds only without CAP_DAC_OVERRIDE (every thread the
        # app starts inherits the lowered set).
        with hostile._permissions_bind(True):
            assert not os.access(folder, os.W_OK) or os.geteuid() == 0
            app = NotedApp([log])
            await _press_r(app, (120, 40))
    finally:
        folder.chmod(0o755)
    assert not list(folder.glob("cutin-report-*.html"))
    written = list((_own_cache / "reports").glob("cutin-report-*.html"))
    assert len(written) == 1
    warning = [n for n in app.notes if n[1] == "report written"]
    assert len(warning) == 1 and warning[0][0] == "warning"
    assert warning[0][2] == (
        f"{written[0].name}\nin {shown_folder(written[0].parent, TOAST_COLUMNS - 3)}\n"
        f"(1 call)\n{shown_folder(folder)}\n"
        "is not writable (Permission denied): written to the cache folder"
    )
