"""A path the user names for output is shown like any other file name: one line, and
nothing a terminal would act on (ESC, BEL, CR, LF shown as Control Pictures)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_cutin
from tests.tui_replay.logs import write_demo_log

HOSTILE = "out\x1b]0;owned\x07\nforged.md"


def test_report_names_its_output_cleaned(child_env: dict[str, str], tmp_path: Path) -> None:
    log = write_demo_log(tmp_path)
    out = tmp_path / HOSTILE
    proc = run_cutin("report", str(log), "-o", str(out), env=child_env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "out␛]0;owned␇␤forged.md" in proc.stderr


def test_report_cannot_write_names_it_cleaned(child_env: dict[str, str], tmp_path: Path) -> None:
    log = write_demo_log(tmp_path)
    out = tmp_path / "no\x1bsuch" / "dir\rx.md"
    proc = run_cutin("report", str(log), "-o", str(out), env=child_env, timeout=60)
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr and "\r" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
