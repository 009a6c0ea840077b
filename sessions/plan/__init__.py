"""One place that turns a plan into a call: :class:`CallPlan` (what a call needs, here)
and :func:`sessions.plan.build.build_call` (the call). `cutin call`, the TUI, `cutin
simulate` and the overlap gallery all build their calls there.

Only the plan is imported here: readers of logs ask :data:`BLACK_BOX_KINDS` without
loading the call loops.
"""

from controls.tendencies import DEFAULT_TENDENCIES
from sessions.plan.model import (
    BLACK_BOX_KINDS,
    DEFAULT_SCENARIO,
    LINE_SCENARIO,
    CallPlan,
    PlanError,
    agent_kind,
    check_plan,
    default_scenario,
    on_line,
)

__all__ = [
    "BLACK_BOX_KINDS",
    "DEFAULT_SCENARIO",
    "DEFAULT_TENDENCIES",
    "LINE_SCENARIO",
    "CallPlan",
    "PlanError",
    "agent_kind",
    "check_plan",
    "default_scenario",
    "on_line",
]
