"""Jumping through a batch: the next failure, the next cut, across calls.

A position is (trial position in the shown list, row in that trial's table). A
search walks forward (or back) from just after the position, through the rest
of that trial, then the following trials, wrapping around once, so `n` keeps
working when the current call has no more failures. Pure: no Textual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from cutin_tui.views.turn_layout import TurnTable

Position = tuple[int, int]
Predicate = Callable[[TurnTable, int], bool]


def _order(count: int, start: int, forward: bool) -> Iterator[int]:
    step = 1 if forward else -1
    for k in range(count + 1):
        yield (start + step * k) % count


def find(
    count: int,
    table: Callable[[int], TurnTable],
    start: Position,
    matches: Predicate,
    *,
    forward: bool = True,
) -> Position | None:
    """The first position after ``start`` (before it, with ``forward=False``) whose
    row ``matches``; None when no row of any trial does."""
    if count <= 0:
        return None
    first_trial, first_row = start
    for lap, pos in enumerate(_order(count, first_trial, forward)):
        t = table(pos)
        n = len(t)
        if lap == 0:
            rows = range(first_row + 1, n) if forward else range(first_row - 1, -1, -1)
        elif lap == count:  # back where we began: the rows before (after) the start
            rows = range(0, first_row + 1) if forward else range(n - 1, first_row - 1, -1)
        else:
            rows = range(n) if forward else range(n - 1, -1, -1)
        for row in rows:
            if matches(t, row):
                return (pos, row)
    return None


def is_failure(table: TurnTable, row: int) -> bool:
    return table.fails(row)


def is_cut(table: TurnTable, row: int) -> bool:
    return table.is_cut(row)


__all__ = ["Position", "find", "is_cut", "is_failure"]
