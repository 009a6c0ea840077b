"""Reading and writing a positions file: JSONL, one :class:`~replay.prompted.positions.Position`
per line (``schema: "cutin.positions/1"``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from replay.errors import LoadError
from replay.prompted.positions import SCHEMA, Position
from sessions.hostile.safe_files import FileError, iter_lines, parse_json, read_text


class _Line(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class _HistoryLine(_Line):
    role: Literal["user", "assistant"]
    content: str
    truncated: bool = False


class _PositionLine(_Line):
    """The types of one positions line (checked before :meth:`Position.from_dict`)."""

    schema_: Literal["cutin.positions/1"] = Field(alias="schema")
    id: str
    conversation: str
    source: str = ""
    scenario: str | None = None
    turn: int = Field(ge=0, le=10**6)
    system: str
    history: list[_HistoryLine]
    reply: str
    extra: dict[str, Any] | None = None


def _why(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    if first.get("type") == "missing":
        return f"missing field {loc!r}"
    return f"field {loc!r}: {first.get('msg', 'invalid')}" if loc else str(first.get("msg"))


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
        text = read_text(path)
    except FileError as exc:
        raise LoadError(str(exc)) from None
    out: list[Position] = []
    seen: set[str] = set()
    for i, line in iter_lines(text):
        if not line.strip():
            continue
        try:
            data = parse_json(line, str(path), line=i)
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise ValueError(f'not a position (expected "schema": "{SCHEMA}")')
            _PositionLine.model_validate(data)
            position = Position.from_dict(data)
        except FileError as exc:
            raise LoadError(str(exc)) from None
        except ValidationError as exc:
            raise LoadError(f"{path}:{i}: {_why(exc)}") from None
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
