"""The offline default agent: speaks a scenario's script.

It sees only the history the call loop gives it. After a truncation the last
assistant message holds just the spoken part; comparing that with its own script
tells it what the caller never heard, which it can re-offer.
"""

from __future__ import annotations

import re

from sessions.agents.base import Message, ReplyStream
from sessions.scenarios.model import Scenario

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_REOFFER = "Sorry, to finish what I was saying:"


def unspoken_sentences(planned: str, spoken: str) -> list[str]:
    """Sentences of ``planned`` that were not completely spoken."""
    spoken_words = spoken.split()
    sentences = [s for s in _SENTENCE.split(planned.strip()) if s]
    out: list[str] = []
    heard = 0
    for sentence in sentences:
        n = len(sentence.split())
        if heard + n > len(spoken_words):
            out.append(sentence)
        heard += n
    return out


class ScriptedAgent:
    """Plays ``scenario.agent.turns`` in order, choosing variants on the user's words."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.name = scenario.agent.name
        self._planned: list[str] = []
        self._closed = False

    def _next_text(self, history: list[Message]) -> str | None:
        script = self.scenario.agent
        index = len(self._planned)
        last_user = next((m.content for m in reversed(history) if m.role == "user"), "")
        if index < len(script.turns):
            text = script.turns[index].choose(last_user)
        elif not self._closed and script.closing:
            self._closed = True
            text = script.closing
        else:
            return None
        last_agent = next((m for m in reversed(history) if m.role == "assistant"), None)
        if last_agent is not None and last_agent.truncated and self._planned:
            missed = [
                m
                for m in unspoken_sentences(self._planned[-1], last_agent.content)
                if len(m.split()) >= 6 and not m.startswith(_REOFFER)
            ]
            if script.after_cut == "reoffer" and missed:
                text = f"{_REOFFER} {missed[0]} {text}"
        self._planned.append(text)
        return text

    def reply(self, history: list[Message]) -> ReplyStream | None:
        text = self._next_text(history)
        return None if text is None else ReplyStream.of_text(text)

    def close(self) -> None:
        return None
