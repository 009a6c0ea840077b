"""Conversations grouped by condition: the values of the ``--by`` fields in each
conversation's header (0 and 0.0 one condition), in sorted order of their values."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replay.audit.sessions import Conversation, condition_of

Row = dict[str, Any]
Key = tuple[tuple[str, str], ...]


def _norm(v: Any) -> Any:
    # 0 and 0.0 are one condition.
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


def condition_key(condition: dict[str, Any]) -> Key:
    return tuple((k, json.dumps(_norm(v), sort_keys=True)) for k, v in condition.items())


def _sort_value(v: Any) -> tuple[int, float, str]:
    if v is None:
        return (2, 0.0, "")
    if isinstance(v, bool):
        return (1, 0.0, str(v))
    if isinstance(v, int | float):
        return (0, float(v), "")
    return (1, 0.0, str(v))


@dataclass(slots=True)
class Group:
    condition: dict[str, Any]
    conversations: list[Conversation] = field(default_factory=list)


def group(conversations: Iterable[Conversation], by: Sequence[str]) -> list[Group]:
    """Conversations by condition, conditions in sorted order of their values."""
    groups: dict[Key, Group] = {}
    for conv in conversations:
        cond = condition_of(conv, by)
        groups.setdefault(condition_key(cond), Group(cond)).conversations.append(conv)
    return sorted(groups.values(), key=lambda g: [_sort_value(g.condition[f]) for f in by])


def interval(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


__all__ = ["Key", "Row", "group"]
