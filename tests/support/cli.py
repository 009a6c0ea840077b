"""Running cutin code in a child interpreter, the way a user's shell would."""

from __future__ import annotations

import subprocess
import sys


def run_python(
    *argv: str, env: dict[str, str], stdin: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python ARGV`` to completion with text output captured; ``stdin`` is its whole
    input (empty by default, so a child never waits on the terminal)."""
    return subprocess.run(
        [sys.executable, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def run_cutin(
    *args: str, env: dict[str, str], stdin: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``cutin ARGS`` as a real program (``python -m cutin_tui``), see :func:`run_python`."""
    return run_python("-m", "cutin_tui", *args, env=env, stdin=stdin, timeout=timeout)
