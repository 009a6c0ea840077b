"""Scenario files: what a scripted agent says, who the user is and what they want.

Scenarios are TOML files. The shipped ones live in ``sessions/scenarios/data``;
``--scenario`` takes a shipped name or a path. See ``docs/scenarios.md``.
"""

from sessions.scenarios.model import (
    AgentScript,
    AgentTurnScript,
    Scenario,
    ScenarioError,
    SuccessCriteria,
    UserScript,
    Variant,
)
from sessions.scenarios.store import (
    line_scenario_names,
    list_scenarios,
    load_scenario,
    shipped_scenario_names,
)

__all__ = [
    "AgentScript",
    "AgentTurnScript",
    "Scenario",
    "ScenarioError",
    "SuccessCriteria",
    "UserScript",
    "Variant",
    "line_scenario_names",
    "list_scenarios",
    "load_scenario",
    "shipped_scenario_names",
]
