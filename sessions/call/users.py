"""Who speaks for the caller in headless runs."""

from __future__ import annotations

from typing import Protocol

from sessions.agents.base import Message
from sessions.scenarios.model import Scenario


class UserProvider(Protocol):
    def next_turn(self, history: list[Message]) -> str | None:
        """The caller's next turn given the history, or ``None`` to hang up."""
        ...


class ScriptedUser:
    """Says the scenario's ``user.turns`` in order, then hangs up."""

    def __init__(self, scenario: Scenario) -> None:
        self._turns = list(scenario.user.turns)
        self._i = 0

    def next_turn(self, history: list[Message]) -> str | None:
        if self._i >= len(self._turns):
            return None
        text = self._turns[self._i]
        self._i += 1
        return text
