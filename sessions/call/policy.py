"""Turn-taking policies: who decides, at a short pause, to interrupt or backchannel.

The rule engine (``controls.decide``) is the default. Other policies (the τ-Voice
LLM classifiers) plug in through the same small protocol; a policy can act, or
run in shadow beside the acting one so both decisions are logged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from controls.tendencies import Tendencies
from controls.turn_taking import Action, Check, RuleParams, Situation, decide
from sessions.agents.base import Message


@dataclass(frozen=True)
class PolicyContext:
    t: float
    situation: Situation
    tendencies: Tendencies
    """The effective dials (a dial whose auto is off is 0 here)."""
    history: list[Message]
    turn_onset: float
    pause_index: int | None = None
    """Set when the policy is consulted at a short pause."""
    virtual: bool = True
    """On the virtual clock a policy may block (its latency goes in ``delay_s``); in real
    time it must not block the loop: start the work, return its result on a later frame."""
    user_busy: bool = False
    rule_params: RuleParams | None = None
    """Thresholds calibrated to the agent's rhythm (``--adapt``); None: the paper's."""


@dataclass(frozen=True)
class PolicyDecision:
    action: Action
    checks: tuple[Check, ...] = ()
    delay_s: float = 0.0
    """How long the decision took (an LLM call); the action happens this much later."""
    token: str | None = None
    llm: dict[str, Any] | None = field(default=None)


class TurnTakingPolicy(Protocol):
    name: str
    polls: bool
    """True if :meth:`at_frame` can return decisions (the loop skips it otherwise)."""

    def at_pause(self, ctx: PolicyContext) -> PolicyDecision | None:
        """Consulted at every short pause while the caller is silent."""
        ...

    def at_frame(self, ctx: PolicyContext) -> PolicyDecision | None:
        """Consulted every frame while the agent speaks (for polling policies)."""
        ...


class RulesPolicy:
    """The deterministic short-pause rule of the method."""

    name = "rules"
    polls = False

    def at_pause(self, ctx: PolicyContext) -> PolicyDecision | None:
        decision = decide(ctx.situation, ctx.tendencies, ctx.rule_params)
        return PolicyDecision(decision.action, decision.checks)

    def at_frame(self, ctx: PolicyContext) -> PolicyDecision | None:
        return None
