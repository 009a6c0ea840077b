"""Who speaks for the caller in headless runs."""

from __future__ import annotations

from typing import Protocol

from sessions.agents.base import Message
from sessions.scenarios.model import KeypadStep, Scenario

CallerReply = str | KeypadStep | None
"""What a headless caller does next: says a text, presses keys, or hangs up (None)."""


class UserProvider(Protocol):
    def next_turn(self, history: list[Message]) -> CallerReply:
        """The caller's next turn given the history (a text, or keys to press on a line
        that carries DTMF), or ``None`` to hang up."""
        ...


class ScriptedUser:
    """Says the scenario's ``user.turns`` in order (a keypad step is given as its
    :class:`KeypadStep`, for the line to press), then hangs up.

    With ``barge_in_with_next_line`` an automatic interruption carries the caller's
    next line after the scenario's opener ("Sorry, can I stop you there? It's 12 Birch
    Lane."), so the conversation moves on even when every agent turn is cut.
    """

    def __init__(self, scenario: Scenario, *, barge_in_with_next_line: bool = False) -> None:
        self._turns = list(scenario.user.turns)
        self._i = 0
        self.barge_in_with_next_line = barge_in_with_next_line

    def barge_in_content(self, history: list[Message]) -> str | None:
        """What follows the opener of an automatic interruption (None: just the opener).
        A keypad step is never said: it waits for its own turn."""
        if not self.barge_in_with_next_line or self._i >= len(self._turns):
            return None
        if isinstance(self._turns[self._i], KeypadStep):
            return None
        reply = self.next_turn(history)
        return reply if isinstance(reply, str) else None

    def next_turn(self, history: list[Message]) -> str | KeypadStep | None:
        if self._i >= len(self._turns):
            return None
        text = self._turns[self._i]
        self._i += 1
        return text
