"""How one call's agent-side events are read for :mod:`replay.audit.agent_measures`:
who holds the floor when (and so the dead air between), and whether an act found the
agent already silent. Pure functions over the loaded :class:`~replay.model.Trial`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replay.model import Trial

LONG_GAP_S = 3.0
"""A dead-air gap longer than this is a long gap (τ2's long-silence threshold)."""


def number(v: object) -> float | None:
    """A finite number as float; None for anything else (a missing or broken field)."""
    if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    return None


def already_silent(data: Mapping[str, Any]) -> bool:
    """The agent had stopped before the caller's onset: no act of its to score."""
    if data.get("already_silent") is True:
        return True
    stop, onset = number(data.get("stop_t")), number(data.get("onset_t"))
    return (
        data.get("yielded") is True
        and stop is not None
        and onset is not None
        and (stop < onset - 1e-6)
    )


def floor_spans(trial: Trial) -> list[tuple[float, float]]:
    """Who holds the floor when: each agent turn from its onset to the end of its last
    sound (``end_t``; ``stop_t`` or the turn's end in an older log), each caller turn
    from its onset to the end of its sound."""
    spans: list[tuple[float, float]] = []
    for turn in trial.turns:
        start = number(turn.start)
        if start is None:
            continue
        end: float | None
        if turn.speaker == "agent":
            end = number(turn.meta.get("end_t"))
            if end is None:
                end = number(turn.meta.get("stop_t"))
            if end is None:
                end = number(turn.end)
        else:
            end = number(turn.end)
        if end is not None and end > start:
            spans.append((start, end))
    return sorted(spans)


def dead_air(trial: Trial) -> tuple[float, list[float]]:
    """(the call's length, the gaps in it that no turn holds) in seconds."""
    spans = floor_spans(trial)
    length = number(trial.duration) or (max((e for _, e in spans), default=0.0))
    gaps: list[float] = []
    at = 0.0
    for start, end in spans:
        if start > at:
            gaps.append(round(min(start, length) - at, 6))
        at = max(at, end)
    if length > at:
        gaps.append(round(length - at, 6))
    return round(length, 6), [g for g in gaps if g > 0]


__all__ = ["LONG_GAP_S", "already_silent", "dead_air", "floor_spans", "number"]
