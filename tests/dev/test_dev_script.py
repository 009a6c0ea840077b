"""``./dev`` installs each extra set once, whatever the order of its verbs.

The script runs in a copy of the repository's ``dev`` beside a stand-in
``.venv/bin/python`` that records its arguments instead of installing, so the test
counts what ``./dev`` would install without touching a registry.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO_ROOT

FAKE_PYTHON = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/../calls.log"
"""


def _workspace(tmp_path: Path) -> Path:
    shutil.copy(REPO_ROOT / "dev", tmp_path / "dev")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "cutin"):
        exe = bin_dir / name
        exe.write_text(FAKE_PYTHON)
        exe.chmod(0o755)
    return tmp_path


def _dev(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(root / "dev"), *args], cwd=root, capture_output=True, text=True, timeout=30
    )


def _installs(root: Path) -> list[str]:
    log = root / ".venv" / "calls.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if line.startswith("-m pip install") and "-e" in line]


def test_switching_verbs_installs_each_extra_set_once(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    for verb in (["cutin", "--help"], ["bench"], ["cutin", "--help"], ["bot"], ["bench"]):
        result = _dev(root, *verb)
        assert result.returncode == 0, result.stderr
    # The base install first, then [test] (which holds [bot]); nothing after that.
    assert _installs(root) == ["-m pip install -q -e .", "-m pip install -q -e .[test]"]


def test_a_changed_pyproject_installs_again(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    assert _dev(root, "bench").returncode == 0
    (root / "pyproject.toml").write_text('[project]\nname = "y"\n')
    result = _dev(root, "cutin", "--help")
    assert result.returncode == 0, result.stderr
    assert "installing cutin" in result.stderr
    assert len(_installs(root)) == 2
    stamps = sorted(p.name for p in (root / ".venv").glob(".cutin-installed-*"))
    assert len(stamps) == 1 and not stamps[0].endswith("-test")
