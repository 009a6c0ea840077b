"""Reading and writing a positions file: JSONL, one :class:`~replay.positions.Position`
per line (``schema: "cutin.positions/1"``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from replay.errors import LoadError
from replay.positions import SCHEMA, Position


def write_positions(path: Path, positions: Iterable[Position]) -> int:
    """Write ``positions`` to ``path`` (replacing it); returns how many."""
    n = 0
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for p in positions:
            f.write(json.dumps(p.as_dict(), ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(path)
    return n


def read_positions(path: Path) -> list[Position]:
    """Every position in ``path``; a bad line is a :class:`LoadError` naming it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror or exc}") from None
    out: list[Position] = []
    seen: set[str] = set()
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise ValueError(f'not a position (expected "schema": "{SCHEMA}")')
            position = Position.from_dict(data)
        except KeyError as exc:
            raise LoadError(f"{path}:{i}: missing field {exc}") from None
        except (ValueError, TypeError) as exc:
            raise LoadError(f"{path}:{i}: {exc}") from None
        if position.id in seen:
            raise LoadError(f"{path}:{i}: duplicate position id {position.id!r}")
        seen.add(position.id)
        out.append(position)
    if not out:
        raise LoadError(f"{path}: no positions")
    return out
