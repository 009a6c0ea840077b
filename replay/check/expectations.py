"""Expectations from a file (``cutin check --expect FILE``) or from scenarios.

A file is TOML: either a scenario (its ``[expect]`` table), a file whose ``[expect]``
table holds them, or the keys at the top level. The grammar and its one-line errors
are :mod:`sessions.scenarios.expect`'s, so a scenario and a file are held to the same
rules. Parsing only: the caller reads the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sessions.hostile.safe_files import FileError, parse_toml, shown_name
from sessions.scenarios.expect import Expectations, ExpectError, Threshold, parse_expect


class ExpectationsError(FileError):
    """An expectations file cannot be used (one line, exit 2)."""


def parse_expectations_text(text: str, where: str) -> Expectations:
    """The expectations of a TOML text; :class:`ExpectationsError` naming the key."""
    data = parse_toml(text, where)  # FileError: malformed TOML, NaN, huge numbers
    table: Mapping[str, Any] = data
    if "expect" in data:
        if not isinstance(data["expect"], Mapping):
            raise ExpectationsError(f"{shown_name(where)}: 'expect' must be a table")
        table = data["expect"]
    try:
        out = parse_expect(table)
    except ExpectError as exc:
        raise ExpectationsError(f"{shown_name(where)}: {exc}") from None
    if not out:
        raise ExpectationsError(f"{shown_name(where)}: no expectations (an [expect] table)")
    return out


def merge(sets: Iterable[Expectations]) -> Expectations:
    """Several scenarios' expectations as one: every threshold and phrase (a threshold
    named twice with the same comparison once)."""
    thresholds: list[Threshold] = []
    says: list[str] = []
    judge: str | None = None
    for e in sets:
        thresholds += [t for t in e.thresholds if t not in thresholds]
        says += [p for p in e.agent_says if p not in says]
        judge = judge if e.judge is None or judge == "llm" else e.judge
    return Expectations(tuple(thresholds), tuple(says), judge)


__all__ = ["Expectations", "ExpectationsError", "merge", "parse_expectations_text"]
