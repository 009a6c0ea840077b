"""Argument types shared by subcommands."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from controls.tendencies import TendencyError, check_tendency


def tendency(name: str) -> Callable[[str], float]:
    """An argparse type for a 0..1 dial: a bad value is a one-line usage error (exit 2)."""

    def parse(value: str) -> float:
        try:
            return check_tendency(name, value)
        except TendencyError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = name
    return parse


def tendency_list(name: str) -> Callable[[str], list[float]]:
    """A comma list of 0..1 values, e.g. ``0,0.3,0.7,1``."""

    def parse(value: str) -> list[float]:
        try:
            return [check_tendency(name, v.strip()) for v in value.split(",") if v.strip()]
        except TendencyError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = name
    return parse


def positive_int(value: str) -> int:
    """An argparse type for a whole number of at least 1 (a count, jobs, resamples)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def add_caller_style(p: argparse.ArgumentParser) -> None:
    """``--style`` for a command whose caller speaks (call, simulate): one wording."""
    p.add_argument(
        "--style",
        choices=("paper", "human"),
        default="paper",
        help=(
            "disfluency style of the caller: paper (the published rule, default) or "
            "human (turn-initial fillers, repairs and restarts, per-turn rate); logged"
        ),
    )
