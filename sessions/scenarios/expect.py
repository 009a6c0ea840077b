"""The grammar of expectations: an ``[expect]`` table in a scenario, or a file given to
``cutin check --expect`` (docs/ci.md).

Each key is one of the audit's agent-under-test measure names (as in ``cutin audit
--json``'s ``agent_under_test`` rows) with a comparison as a string, e.g.
``yield_rate = ">= 0.9"``, or one of the content checks: ``agent_says`` (a list of
phrases) and ``judge`` (``"rules"`` or ``"llm"``). Anything else is refused with one
line naming the key. Pure: no I/O; the check itself is :mod:`replay.check`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Better = Literal["higher", "lower"]

METRICS: dict[str, Better] = {
    "yield_rate": "higher",
    "yield_latency_mean": "lower",
    "yield_latency_median": "lower",
    "yield_latency_p95": "lower",
    "false_yield_rate": "lower",
    "selectivity_backchannel": "higher",
    "selectivity_vocal_tic": "higher",
    "selectivity_non_directed": "higher",
    "response_rate": "higher",
    "response_latency_mean": "lower",
    "response_latency_median": "lower",
    "backchannel_response_latency_mean": "lower",
    "agent_interruption_rate": "lower",
    "dead_air_fraction": "lower",
    "dead_air_max_gap_s": "lower",
    "talk_over_per_turn_s": "lower",
    "pauses_per_min": "higher",
}
"""The measures an expectation may name, and which way is better (compare's direction)."""
CONTENT_KEYS = ("agent_says", "judge")
JUDGES = ("rules", "llm")
OPERATORS = (">=", "<=", ">", "<")
MAX_THRESHOLD = 1e6
"""No measure is near this (rates are 0-1, latencies seconds); a bigger one is a typo."""
MAX_PHRASES = 50
MAX_PHRASE_CHARS = 200
_COMPARISON = re.compile(r"^\s*(>=|<=|>|<)\s*([+-]?(?:\d{1,7}(?:\.\d{0,9})?|\.\d{1,9}))\s*$")


class ExpectError(ValueError):
    """An expectation that cannot be used: one line naming the key."""


@dataclass(frozen=True, slots=True)
class Threshold:
    """``measure op value``, e.g. ``yield_rate >= 0.9``."""

    measure: str
    op: str
    value: float

    @property
    def text(self) -> str:
        return f"{self.op} {self.value:g}"

    def holds(self, measured: float) -> bool:
        return {
            ">=": measured >= self.value,
            "<=": measured <= self.value,
            ">": measured > self.value,
            "<": measured < self.value,
        }[self.op]


@dataclass(frozen=True, slots=True)
class Expectations:
    thresholds: tuple[Threshold, ...] = ()
    agent_says: tuple[str, ...] = ()
    judge: str | None = None

    def __bool__(self) -> bool:
        return bool(self.thresholds or self.agent_says or self.judge)


def _key(key: object) -> str:
    """A key as an error shows it: quoted, escaped, at most 40 characters."""
    text = str(key)
    shown = ascii(text[:40])[1:-1]
    return f"'{shown}{'…' if len(text) > 40 else ''}'"


def parse_expect(table: Mapping[str, Any]) -> Expectations:
    """Validate an ``[expect]`` table; :class:`ExpectError` (naming the key) if bad."""
    if not isinstance(table, Mapping):
        raise ExpectError('[expect] must be a table of measure = "<op> <number>"')
    thresholds: list[Threshold] = []
    says: tuple[str, ...] = ()
    judge: str | None = None
    for key, raw in table.items():
        if key == "agent_says":
            says = _phrases(raw)
        elif key == "judge":
            if raw == "rule":
                raw = "rules"
            if raw not in JUDGES:
                raise ExpectError(
                    f'expect key \'judge\': must be "rules" or "llm", not {_value(raw)}'
                )
            judge = str(raw)
        elif key in METRICS:
            thresholds.append(_threshold(key, raw))
        else:
            known = ", ".join([*METRICS, *CONTENT_KEYS])
            raise ExpectError(f"unknown expect key {_key(key)}; known: {known}")
    return Expectations(tuple(thresholds), says, judge)


def _value(raw: object) -> str:
    """A value as an error shows it: escaped (no control character), at most 40 characters."""
    if isinstance(raw, str):
        return ascii(raw[:40])
    return ascii(repr(raw)[:40])[1:-1]


def _threshold(key: str, raw: object) -> Threshold:
    hint = f'write it as a comparison string, e.g. {key} = "{_example(key)}"'
    if not isinstance(raw, str):
        raise ExpectError(f"expect key {_key(key)}: {_value(raw)} is not a comparison; {hint}")
    m = _COMPARISON.match(raw)
    if m is None:
        raise ExpectError(
            f"expect key {_key(key)}: {_value(raw)} is not an operator ({', '.join(OPERATORS)}) "
            f"and a plain number; {hint}"
        )
    value = float(m.group(2))
    if not math.isfinite(value) or abs(value) > MAX_THRESHOLD:
        raise ExpectError(f"expect key {_key(key)}: {_value(raw)} is out of range")
    return Threshold(key, m.group(1), value)


def _example(key: str) -> str:
    if key.endswith(("_rate", "fraction")) or key.startswith("selectivity"):
        return ">= 0.9" if METRICS[key] == "higher" else "<= 0.1"
    return ">= 10" if METRICS[key] == "higher" else "<= 1.5"


def _phrases(raw: object) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise ExpectError("expect key 'agent_says': a list of phrases, e.g. [\"order number\"]")
    if len(raw) > MAX_PHRASES:
        raise ExpectError(
            f"expect key 'agent_says': {len(raw)} phrases; the limit is {MAX_PHRASES}"
        )
    out = []
    for phrase in raw:
        if not isinstance(phrase, str) or not re.search(r"[A-Za-z0-9]", phrase):
            raise ExpectError(f"expect key 'agent_says': {_value(phrase)} is not a phrase of words")
        if len(phrase) > MAX_PHRASE_CHARS:
            raise ExpectError(
                f"expect key 'agent_says': a phrase of {len(phrase)} characters; "
                f"the limit is {MAX_PHRASE_CHARS}"
            )
        out.append(phrase)
    return tuple(out)


__all__ = [
    "CONTENT_KEYS",
    "JUDGES",
    "METRICS",
    "OPERATORS",
    "ExpectError",
    "Expectations",
    "Threshold",
    "parse_expect",
]
