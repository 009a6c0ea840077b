"""Generic test plumbing shared by every area. Area-specific fixtures live in tests/support/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO_ROOT = Path(__file__).resolve().parents[1]
"""The repository root (holds pyproject.toml)."""

SHARED_DIR = REPO_ROOT / ".." / "shared"
"""The project's shared/ folder, beside the repository (CI lays a copy at the same place)."""

# Machines vary in speed, so no per-example deadline; CI replays a fixed set of examples
# so a red run can be reproduced, while local runs keep exploring.
settings.register_profile("default", deadline=None)
settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared/ folder beside the repository; skips the test when it is absent."""
    if not SHARED_DIR.is_dir():
        pytest.skip(f"shared/ folder not found beside the repository (looked in {SHARED_DIR})")
    return SHARED_DIR.resolve()


@pytest.fixture
def child_env() -> dict[str, str]:
    """A copy of the environment for a child interpreter, with the repository importable."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + path if path else "")
    return env


pytest_plugins = ["tests.support.fixtures"]
