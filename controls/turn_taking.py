"""The short-pause turn-taking rule (DESIGN.md, "Turn-taking decision").

Evaluated once per short pause while the agent is mid-turn. Every check of both
rules is computed and returned, so a UI or a log can say why an opportunity was or
was not taken; the interruption rule is decided first and wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from controls.questions import question_or_request
from controls.tendencies import Tendencies

INTERRUPT_MIN_WORDS = 12
BACKCHANNEL_FIRST_WORDS = 6
INTERRUPT_PATIENCE_MAX = 10.0
INTERRUPT_PATIENCE_SLOPE = 8.5
BACKCHANNEL_SPACING_MAX = 25.0
BACKCHANNEL_SPACING_SLOPE = 17.0


class Action(StrEnum):
    INTERRUPT = "INTERRUPT"
    BACKCHANNEL = "BACKCHANNEL"
    NOTHING = "NOTHING"


def interruption_patience_seconds(beta: float) -> float:
    """Seconds of agent speech this turn before an interruption may fire: 10 − 8.5β."""
    # Rounded so that thresholds such as 7.45 s (β = 0.3) compare exactly.
    return round(INTERRUPT_PATIENCE_MAX - INTERRUPT_PATIENCE_SLOPE * beta, 9)


def backchannel_spacing_words(gamma: float) -> float:
    """Words between two backchannels in one turn: 25 − 17γ."""
    return round(BACKCHANNEL_SPACING_MAX - BACKCHANNEL_SPACING_SLOPE * gamma, 9)


@dataclass(frozen=True, slots=True)
class RuleParams:
    """Thresholds that replace the paper's for one dial setting (``--adapt``).

    :func:`decide` without them uses the paper's constants (the default, unchanged);
    :mod:`controls.adapt` picks them so that a dial means the same on any agent."""

    interrupt_patience_s: float
    interrupt_min_words: int
    backchannel_first_words: int
    backchannel_spacing_words: float


@dataclass(frozen=True, slots=True)
class Situation:
    """What the rule may look at, at the moment of a short pause."""

    agent_speaking_seconds: float
    """Seconds since this agent turn's onset."""
    agent_words: int
    """Words of this agent turn heard so far."""
    agent_text: str
    """The agent's text of this turn heard so far."""
    agent_turn_index: int
    """0 for the agent's first turn of the call."""
    interrupted_this_turn: bool = False
    backchannels_this_turn: int = 0
    words_at_last_backchannel: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "agent_speaking_seconds": self.agent_speaking_seconds,
            "agent_words": self.agent_words,
            "agent_turn_index": self.agent_turn_index,
            "interrupted_this_turn": self.interrupted_this_turn,
            "backchannels_this_turn": self.backchannels_this_turn,
            "words_at_last_backchannel": self.words_at_last_backchannel,
        }


@dataclass(frozen=True, slots=True)
class Check:
    """One condition of one rule, with the value it saw and what it needed."""

    rule: str  # "interrupt" | "backchannel"
    name: str
    passed: bool
    value: float | int | bool | str
    needed: str

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "name": self.name,
            "passed": self.passed,
            "value": self.value,
            "needed": self.needed,
        }

    def describe(self) -> str:
        mark = "✓" if self.passed else "✗"
        return f"{self.name} {self.value} {self.needed} {mark}"


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    checks: tuple[Check, ...]

    def failed(self, rule: str) -> list[Check]:
        return [c for c in self.checks if c.rule == rule and not c.passed]

    def as_dict(self) -> dict[str, object]:
        return {"action": str(self.action), "checks": [c.as_dict() for c in self.checks]}

    def explain(self) -> str:
        """One line: the action and, per rule, what passed and what did not."""
        parts = [str(self.action)]
        for rule in ("interrupt", "backchannel"):
            checks = [c for c in self.checks if c.rule == rule]
            parts.append(rule + ": " + ", ".join(c.describe() for c in checks))
        return " | ".join(parts)


# The checks repeat from pause to pause (same word counts, same answers), and a frozen
# dataclass costs about a microsecond to build, so equal checks are shared. typed=True
# keeps 1 and 1.0 (and True and 1) apart, as they log differently; the dials' own
# checks are built each time, since -0.0 == 0.0 would share one and log the other.
_check = lru_cache(maxsize=4096, typed=True)(Check)


@lru_cache(maxsize=1024, typed=True)
def _at_least(threshold: float) -> str:
    return f"≥ {threshold:g}"


def decide(
    situation: Situation, tendencies: Tendencies, params: RuleParams | None = None
) -> Decision:
    """Apply the short-pause rule. Pure: same inputs, same decision. ``params``
    (calibrated thresholds) replace the paper's constants; the dials still gate."""
    beta, gamma = tendencies.beta, tendencies.gamma
    s = situation
    asking = question_or_request(s.agent_text)
    if params is None:
        patience = interruption_patience_seconds(beta)
        min_words = INTERRUPT_MIN_WORDS
        first_words: float = BACKCHANNEL_FIRST_WORDS
        spacing = backchannel_spacing_words(gamma)
    else:
        patience = params.interrupt_patience_s
        min_words = params.interrupt_min_words
        first_words = params.backchannel_first_words
        spacing = params.backchannel_spacing_words
    i_checks = (
        Check("interrupt", "enabled", beta > 0, beta, "β > 0"),
        _check(
            "interrupt",
            "first_in_turn",
            not s.interrupted_this_turn,
            s.interrupted_this_turn,
            "no interruption yet this turn",
        ),
        Check(
            "interrupt",
            "speaking_s",
            s.agent_speaking_seconds >= patience,
            round(s.agent_speaking_seconds, 3),
            _at_least(patience),
        ),
        _check(
            "interrupt",
            "words",
            s.agent_words >= min_words,
            s.agent_words,
            f"≥ {min_words}",
        ),
        _check("interrupt", "not_question", not asking, asking, "no question/request"),
    )
    if s.backchannels_this_turn == 0:
        needed_words = first_words
    else:
        needed_words = s.words_at_last_backchannel + spacing
    b_checks = (
        Check("backchannel", "enabled", gamma > 0, gamma, "γ > 0"),
        _check(
            "backchannel",
            "not_first_turn",
            s.agent_turn_index > 0,
            s.agent_turn_index,
            "agent turn ≥ 2nd",
        ),
        _check("backchannel", "not_question", not asking, asking, "no question/request"),
        _check(
            "backchannel",
            "words",
            s.agent_words >= needed_words,
            s.agent_words,
            _at_least(needed_words),
        ),
    )
    if all(c.passed for c in i_checks):
        action = Action.INTERRUPT
    elif all(c.passed for c in b_checks):
        action = Action.BACKCHANNEL
    else:
        action = Action.NOTHING
    return Decision(action, i_checks + b_checks)
