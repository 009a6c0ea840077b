"""Plain words for a logged decision: which checks of which rule passed or failed.

Works on the ``checks`` dicts of an ``opportunity`` event ({rule, name, passed,
value, needed}), so it explains a live decision and a logged one the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RULES = ("interrupt", "backchannel")
_DIAL = {"interrupt": "β", "backchannel": "γ"}


@dataclass(frozen=True, slots=True)
class CheckWords:
    passed: bool
    text: str


def _num(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.0f}"
    return str(value)


def check_words(check: Mapping[str, Any], *, estimated: int = 0) -> CheckWords:
    """One check as a short phrase, e.g. ``speaking 4.2 s ≥ 1.5``; the word count says how
    many of its words were ``estimated`` from speech time (``words 14 ≥ 12, 9 est.``)."""
    rule = str(check.get("rule", ""))
    name = str(check.get("name", ""))
    passed = bool(check.get("passed"))
    value = check.get("value")
    needed = str(check.get("needed", ""))
    if name == "enabled":
        text = f"{_DIAL.get(rule, '?')} {_num(value)} > 0"
    elif name == "first_in_turn":
        text = "1st cut this turn" if passed else "already cut this turn"
    elif name == "speaking_s":
        seconds = float(value) if isinstance(value, int | float) else 0.0
        text = f"speaking {seconds:.1f} s {needed}"
    elif name == "words":
        text = f"words {_num(value)} {needed}".strip()
        if estimated:
            text += f", {estimated} est."
    elif name == "not_question":
        text = "no question" if passed else "question/request"
    elif name == "not_first_turn":
        text = "not 1st turn" if passed else "1st agent turn"
    else:
        text = f"{name} {_num(value)} {needed}".strip()
    return CheckWords(passed, text)


def rule_checks(
    checks: Sequence[Mapping[str, Any]], rule: str, *, estimated: int = 0
) -> list[CheckWords]:
    """The checks of one rule, in the order the engine evaluated them (``estimated``: how
    many of the counted words were estimated, not heard)."""
    return [check_words(c, estimated=estimated) for c in checks if c.get("rule") == rule]


def outcome_words(
    decision: str,
    *,
    executed: bool,
    autos: Mapping[str, bool] | None,
    at_turn_end: bool,
) -> str:
    """What became of a decision, e.g. ``INTERRUPT, taken`` or ``NOTHING``."""
    parts = [decision]
    if decision != "NOTHING":
        parts.append("taken" if executed else "not taken (an action was already pending)")
    off = [name for name in RULES if autos is not None and autos.get(name) is False]
    if off:
        parts.append("auto-" + " and auto-".join(off) + " off, so its dial counts as 0")
    if at_turn_end:
        parts.append("the pause grew into a turn end: not counted as an opportunity")
    return " · ".join(parts)
