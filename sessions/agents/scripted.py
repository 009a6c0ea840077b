"""The offline default agent: speaks a scenario's script.

It sees only the history the call loop gives it. After a truncation the last
assistant message holds just the spoken part; comparing that with its own script
tells it what the caller never heard, which it can re-offer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from sessions.agents.base import Message, ReplyStream
from sessions.scenarios.model import Scenario
from sessions.speech.speech_clock import draw_quantile

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


def after_cut(text: str, planned: str, spoken: str) -> str:
    """``text`` as said after the previous turn (``planned``) was cut after ``spoken``:
    led by the first unspoken sentence of six words or more, if any (a sentence that is
    itself a re-offer is not offered again). Shared with ``--adapt``'s script sample,
    which must foresee what a cut does to the next turn."""
    missed = [
        m
        for m in unspoken_sentences(planned, spoken)
        if len(m.split()) >= 6 and not m.startswith(_REOFFER)
    ]
    return f"{_REOFFER} {missed[0]} {text}" if missed else text


def with_extra(text: str, extra: list[str], target_words: float) -> str:
    """``text`` with the ``extra`` sentences, in order, put before its last sentence,
    as many as keep the turn within ``target_words`` words."""
    if not extra:
        return text
    sentences = [s for s in _SENTENCE.split(text.strip()) if s]
    words = len(text.split())
    added: list[str] = []
    for sentence in extra:
        n = len(sentence.split())
        if words + n > target_words:
            break
        added.append(sentence.strip())
        words += n
    if not added:
        return text
    return " ".join([*sentences[:-1], *added, sentences[-1]])


class ScriptedAgent:
    """Plays ``scenario.agent.turns`` in order, choosing variants on the user's words.

    With ``turn_words`` (an agent profile's quantiles of words per turn) each turn's
    length is drawn, seeded by ``seed`` and the turn's index, and the turn's ``extra``
    sentences fill it up to that length."""

    def __init__(
        self, scenario: Scenario, *, turn_words: Sequence[float] = (), seed: int = 0
    ) -> None:
        self.scenario = scenario
        self.name = scenario.agent.name
        self._planned: list[str] = []
        self._closed = False
        self._turn_words = tuple(turn_words)
        self._seed = seed

    def _next_text(self, history: list[Message]) -> str | None:
        script = self.scenario.agent
        index = len(self._planned)
        last_user = next((m.content for m in reversed(history) if m.role == "user"), "")
        if index < len(script.turns):
            turn = script.turns[index]
            text = turn.choose(last_user)
            if self._turn_words and turn.extra:
                rng = random.Random(f"cutin.turn-words|{self._seed}|{index}")
                text = with_extra(text, turn.extra, draw_quantile(self._turn_words, rng))
        elif not self._closed and script.closing:
            self._closed = True
            text = script.closing
        else:
            return None
        last_agent = next((m for m in reversed(history) if m.role == "assistant"), None)
        if (
            last_agent is not None
            and last_agent.truncated
            and self._planned
            and script.after_cut == "reoffer"
        ):
            text = after_cut(text, self._planned[-1], last_agent.content)
        self._planned.append(text)
        return text

    def reply(self, history: list[Message]) -> ReplyStream | None:
        text = self._next_text(history)
        return None if text is None else ReplyStream.of_text(text)

    def close(self) -> None:
        return None
