"""Fixtures for the replay screen's pilot and snapshot tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TAU2_FIXTURES
from tests.support.pulse import pulse_server
from tests.tui_replay.logs import write_demo_log

__all__ = ["pulse_server"]  # the session fixture, registered for this folder

TAU2_AIRLINE = TAU2_FIXTURES / "text_airline_results.json"


@pytest.fixture
def demo_log(tmp_path: Path) -> Path:
    """The crafted demo call (see logs.py) in a fresh folder."""
    folder = tmp_path / "logs"
    folder.mkdir()
    return write_demo_log(folder)


@pytest.fixture
def tau2_airline() -> Path:
    """The τ2-bench airline results in tests/fixtures/tau2 (50 trials, 22 failed)."""
    return TAU2_AIRLINE
