"""Hostile files in the replay screen: a notification, and the rest of the folder loads;
nothing from a file acts as markup or reaches the terminal raw."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.tui_replay.helpers import SIZE, NotedApp, loaded
from tests.tui_replay.logs import write_plain_log


def _with_hostile_text(path: Path) -> Path:
    """Put markup and escape sequences into every text of a log (as escaped JSON)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        data = json.loads(line)
        for key in ("text", "spoken", "original", "rendered"):
            if isinstance(data.get(key), str):
                data[key] = "[/] [bold]x \x1b]0;pwned\x07 \x1b[2J " + data[key]
        out.append(json.dumps(data))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


async def test_a_fifo_and_hostile_text_in_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "[bold]logs"  # a folder name that reads as markup
    folder.mkdir()
    _with_hostile_text(write_plain_log(folder, "a.jsonl", "good1", cut=True))
    os.mkfifo(folder / "b.jsonl")  # would hang a reader that opened it
    (folder / "c.jsonl").write_text('{"schema": "cutin.session/1", "session_id": ' + "[" * 5000)
    app = NotedApp([folder])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert [t.id for t in screen.trials] == ["good1"]
        warnings = [n for n in app.notes if n[0] == "warning"]
        assert len(warnings) == 1, app.notes
        assert "b.jsonl: cannot read: a FIFO" in warnings[0][2]
        assert "c.jsonl" in warnings[0][2]
        turn = screen.trials[0].turns[0]
        assert "\x1b" not in turn.text and "␛]0;pwned␇" in turn.text
        await pilot.press("j", "j")  # the hostile texts are drawn (no markup error)
        await pilot.pause()
        assert "\x1b" not in app.export_screenshot()
