"""A snapshot test that skips never turns a green run red, and ``--snapshot-update`` keeps
its snapshot (pyproject's addopts and the hooks in tests/conftest.py; syrupy 4.8.0 alone
fails the run and deletes the file). Checked in a child pytest on a two-test project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

PROJECT = """
import os

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension


def test_used(snapshot):
    assert b"one" == snapshot.use_extension(SingleFileSnapshotExtension)


@pytest.mark.skipif(os.environ.get("SKIP") == "1", reason="as when a file is missing")
def test_skipped(snapshot):
    assert b"two" == snapshot.use_extension(SingleFileSnapshotExtension)
"""


def _pytest(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    # The repository's pytest settings (-c) and tests/conftest.py's hooks (-p), without
    # the plugins this project does not need (they take most of a child's start-up).
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "no:textual-snapshot", "-p", "no:hypothesispytest",
         "-c", str(REPO_ROOT / "pyproject.toml"), "--rootdir", str(folder),
         "-p", "tests.conftest", "test_snap.py", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_skipped_snapshot_test_warns_and_keeps_its_snapshot(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    (tmp_path / "test_snap.py").write_text(PROJECT)
    snaps = tmp_path / "__snapshots__" / "test_snap"  # as syrupy writes them
    snaps.mkdir(parents=True)
    (snaps / "test_used.raw").write_bytes(b"one")
    (snaps / "test_skipped.raw").write_bytes(b"two")
    env = {**child_env, "SKIP": "1"}

    run = _pytest(tmp_path, env)
    assert "1 passed, 1 skipped" in run.stdout and "1 snapshot unused" in run.stdout
    assert run.returncode == 0, run.stdout + run.stderr  # a warning, not a failure

    (snaps / "test_gone.raw").write_bytes(b"the snapshot of a test that no longer exists")
    update = _pytest(tmp_path, env, "--snapshot-update")
    assert update.returncode == 0, update.stdout + update.stderr
    assert "test_skipped.raw: its test skipped" in update.stdout
    # The skipped test's snapshot stays; a truly obsolete one is still cleaned up.
    assert {p.name for p in snaps.iterdir()} == {"test_used.raw", "test_skipped.raw"}
