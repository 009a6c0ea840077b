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
    """Says the scenario's ``user.turns`` in order, then hangs up.

    With ``barge_in_with_next_line`` an automatic interruption carries the caller's
    next line after the scenario's opener ("Sorry, can I stop you there? It's 12 Birch
    Lane."), so the conversation moves on even when every agent turn is cut.
    """

    def __init__(self, scenario: Scenario, *, barge_in_with_next_line: bool = False) -> None:
        self._turns = list(scenario.user.turns)
        self._i = 0
        self.barge_in_with_next_line = barge_in_with_next_line

    def barge_in_content(self, history: list[Message]) -> str | None:
        """What follows the opener of an automatic interruption (None: just the opener)."""
        return self.next_turn(history) if self.barge_in_with_next_line else None

    def next_turn(self, history: list[Message]) -> str | None:
        if self._i >= len(self._turns):
            return None
        text = self._turns[self._i]
        self._i += 1
        return text
