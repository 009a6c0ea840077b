"""Loading the PATH arguments of the subcommands that read calls and τ2 trials."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from cutin_tui.cli import CliError
from sessions.hostile.safe_files import terminal_line

if TYPE_CHECKING:
    from replay.model import Batch


def load_inputs(paths: Iterable[Path | str], *, skip_bad: bool = False) -> Batch:
    """Every trial of ``paths`` (logs, folders, τ2 results); a load problem is a CliError."""
    from replay.errors import LoadError
    from replay.load import load_batch

    try:
        return load_batch(paths, skip_bad=skip_bad)
    except LoadError as exc:
        raise CliError(str(exc)) from None


def print_warnings(warnings: Iterable[str]) -> None:
    """One ``cutin: warning:`` line on stderr per warning."""
    for warning in warnings:
        print(f"cutin: warning: {terminal_line(warning)}", file=sys.stderr)
