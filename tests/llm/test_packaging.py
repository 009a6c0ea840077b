"""The prompt templates ship inside the wheel (hatchling includes package data)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import prompts


@pytest.mark.slow
def test_templates_are_in_the_wheel(repo_root: Path, tmp_path: Path) -> None:
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(repo_root),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if built.returncode != 0 and "No module named pip" in built.stderr:
        pytest.skip("pip is not available in this interpreter")
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("cutin-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in prompts.template_names():
        assert f"prompts/templates/{name}.txt" in names
