"""Generic test plumbing shared by every area. Area-specific fixtures live in tests/support/."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

REPO_ROOT = Path(__file__).resolve().parents[1]
"""The repository root (holds pyproject.toml)."""

FIXTURES_DIR = REPO_ROOT / "tests" / "fixtures"
"""Data files the tests read, all in the repository (see its README.md)."""
TAU2_FIXTURES = FIXTURES_DIR / "tau2"
"""Unmodified τ2-bench result files (sierra-research/tau2-bench, MIT)."""
TAU2_EXCERPTS = FIXTURES_DIR / "tau2_excerpts"
"""Excerpts of τ2-bench result files written in other public repositories."""
PAPER_APPENDICES = FIXTURES_DIR / "paper" / "appendix_a_b.txt"
"""The method paper's Appendix A and B, verbatim (the prompts the tests compare with)."""

# Machines vary in speed, so no per-example deadline; CI replays a fixed set of examples
# so a red run can be reproduced, while local runs keep exploring.
settings.register_profile("default", deadline=None)
settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "default")

# ---- parallel workers --------------------------------------------------------------------
# ./dev test runs the suite on pytest-xdist workers. execnet starts each worker with
# COLUMNS=80 and LINES=24, which a serial run has not: Rich and Textual would then lay out
# for an 80×24 terminal, and every child cutin inherits it. A worker's tests see the
# environment a serial run's tests see.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("COLUMNS", "LINES"):
        os.environ.pop(_name, None)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root."""
    return REPO_ROOT


@pytest.fixture
def child_env() -> dict[str, str]:
    """A copy of the environment for a child interpreter, with the repository importable."""
    # A child pytest that saw PYTEST_XDIST_* would take itself for a worker of this run.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")}
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + path if path else "")
    return env


# ---- snapshots ------------------------------------------------------------------------
# pytest-textual-snapshot pins syrupy 4.8.0, which counts the one-file snapshot (.svg) of a
# skipped test as "unused": that turned a green run red, and the advice it printed,
# --snapshot-update, deleted the file (fixed upstream after 4.8.0, syrupy PR #1161).
# pyproject's addopts has --snapshot-warn-unused, so an unused snapshot is a warning,
# and the hooks below make --snapshot-update keep the snapshots of tests that skipped.
# tests/test_snapshot_settings.py runs both cases in a child pytest.

_skipped: set[str] = set()
"""Node ids of the tests that skipped (or xfailed) in this run."""
_kept: list[str] = []
"""Snapshot files --snapshot-update would have deleted but kept: their tests skipped."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.add(report.nodeid)


def _of_a_skipped_test(location: str, skipped: Iterable[pytest.Item]) -> bool:
    """A one-file snapshot lives at ``__snapshots__/<test module>/<test name>.<ext>``."""
    path = Path(location)
    return any(
        path.parent.name == item.path.stem
        and path.stem.startswith(getattr(item, "originalname", item.name))
        for item in skipped
    )


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    syrupy = getattr(session.config, "_syrupy", None)
    if syrupy is not None and getattr(session.config.option, "update_snapshots", False):
        skipped = [item for item in session.items if item.nodeid in _skipped]
        remove = syrupy.remove_unused_snapshots

        def remove_all_but_skipped(
            *, unused_snapshot_collections: Iterable[Any], used_snapshot_collections: Any
        ) -> None:
            gone = []
            for collection in unused_snapshot_collections:
                if _of_a_skipped_test(collection.location, skipped):
                    _kept.append(collection.location)
                else:
                    gone.append(collection)
            remove(
                unused_snapshot_collections=gone,
                used_snapshot_collections=used_snapshot_collections,
            )

        syrupy.remove_unused_snapshots = remove_all_but_skipped
    return (yield)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for location in _kept:
        terminalreporter.write_line(
            f"kept {location}: its test skipped (syrupy's count above includes it)"
        )


pytest_plugins = ["tests.support.fixtures"]
