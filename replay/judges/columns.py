"""Which column each judge's verdicts go in, in replay and reports.

Four kinds of judge stand side by side: cutin's **rules**, an **LLM** judge, τ2's
**reward** (``reward_info``: the reward and its checks) and τ2's own **review** (the
LLM review of agent and user errors, the user-only review, the hallucination check,
the authentication classification).
Any other judge gets a column of its own after these, in name order.
"""

from __future__ import annotations

from collections.abc import Iterable

from replay.model import Trial

JUDGE_ORDER = ("rules", "llm", "tau2", "review")
JUDGE_TITLES = {"rules": "rules", "llm": "LLM", "tau2": "τ2 reward", "review": "τ2 review"}
REVIEW_JUDGES = frozenset({"tau2-review", "tau2-user-review", "tau2-hallucination", "tau2-auth"})


def judge_group(judge: str) -> str:
    """The column of ``judge``: τ2's reviews share *review*, every other τ2 judge *tau2*."""
    if judge in REVIEW_JUDGES:
        return "review"
    return "tau2" if judge.startswith("tau2") else judge


def judge_groups(trials: Iterable[Trial]) -> tuple[str, ...]:
    """The judge columns a batch needs: rules · LLM · τ2 reward · τ2 review first
    (those that have verdicts), others after in name order."""
    found = {judge_group(v.judge) for t in trials for v in t.verdicts}
    known = [g for g in JUDGE_ORDER if g in found]
    return (*known, *sorted(found - set(JUDGE_ORDER)))


def judge_title(group: str) -> str:
    return JUDGE_TITLES.get(group, group)


__all__ = [
    "JUDGE_ORDER",
    "JUDGE_TITLES",
    "REVIEW_JUDGES",
    "judge_group",
    "judge_groups",
    "judge_title",
]
