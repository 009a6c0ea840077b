"""The LLM user simulator: plays the caller from a scenario's goal and persona.

History is kept from the agent's side (``user`` = the caller, ``assistant`` = the
agent, as in :class:`~sessions.agents.base.Message`). The simulator's LLM plays the
caller, so roles are flipped when it is asked: the agent's words arrive as ``user``
messages and the caller's own earlier turns as ``assistant`` ones. The agent's own
system messages are never shown to the simulator. All wording comes from ``prompts/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from prompts import interruption as interruption_prompts
from prompts import user_sim
from sessions.agents.base import Message
from sessions.llm_client import CallStats, ChatMessage, LLMClient, LLMError


class SimulatorError(RuntimeError):
    """The simulator could not produce a turn (after retries). The message is key-free."""


class _UserScenario(Protocol):
    @property
    def goal(self) -> str: ...
    @property
    def persona(self) -> str: ...


@dataclass(frozen=True)
class SimulatorTurn:
    text: str
    """What the caller says (the hang-up mark removed)."""
    ends_call: bool
    """The simulator said goodbye with the hang-up mark."""
    stats: CallStats


def simulator_view(system_prompt: str, history: list[Message]) -> list[ChatMessage]:
    """What a simulator with ``system_prompt`` is sent for ``history`` (agent-side roles):
    roles flipped, the agent's system messages dropped, a cut agent message marked, and
    an opening cue when the agent has not spoken."""
    out: list[ChatMessage] = [{"role": "system", "content": system_prompt}]
    for m in history:
        if m.role == "assistant":
            out.append({"role": "user", "content": user_sim.agent_message(m.content, m.truncated)})
        elif m.role == "user":
            out.append({"role": "assistant", "content": m.content})
    if len(out) == 1:
        out.append({"role": "user", "content": user_sim.opening_cue()})
    return out


class UserSimulator:
    """Generates the caller's turns; also satisfies the call loop's ``UserProvider``."""

    def __init__(self, llm: LLMClient, goal: str, persona: str, style_directive: str = "") -> None:
        self.llm = llm
        self.system_prompt = user_sim.system_prompt(goal, persona, style_directive)
        self.stats: list[CallStats] = []
        self._hung_up = False

    @classmethod
    def from_scenario(
        cls, llm: LLMClient, user: _UserScenario, style_directive: str = ""
    ) -> UserSimulator:
        return cls(llm, user.goal, user.persona, style_directive)

    # messages ----------------------------------------------------------------------
    def messages_for(self, history: list[Message]) -> list[ChatMessage]:
        """The simulator's view of ``history``: its system prompt, then flipped roles."""
        return simulator_view(self.system_prompt, history)

    # turns -------------------------------------------------------------------------
    def suggest_turn(self, history: list[Message]) -> SimulatorTurn:
        """The caller's next turn given the conversation so far."""
        text, stats = self._ask(self.messages_for(history))
        said, ends = user_sim.split_end_mark(text)
        return SimulatorTurn(text=said, ends_call=ends, stats=stats)

    def suggest(self, history: list[Message]) -> str:
        """The caller's next line (hang-up mark removed)."""
        return self.suggest_turn(history).text

    def next_turn(self, history: list[Message]) -> str | None:
        """``UserProvider``: the next line, or ``None`` once the simulator has hung up."""
        if self._hung_up:
            return None
        turn = self.suggest_turn(history)
        self._hung_up = turn.ends_call
        return turn.text or None

    def interruption_line(self, truncated_agent_text: str, history: list[Message]) -> str:
        """A short line that cuts the agent off, given its turn as heard up to the cut.

        ``history`` is the conversation before the agent's current turn; if its last
        message already is that turn (the loop rewrote it), it is not shown twice.
        """
        earlier = list(history)
        if (
            earlier
            and earlier[-1].role == "assistant"
            and earlier[-1].content.strip() == truncated_agent_text.strip()
        ):
            earlier.pop()
        messages = self.messages_for(earlier)
        if len(earlier) == 0:
            messages = messages[:1]  # no opening cue: the agent is already talking
        messages.append(
            {
                "role": "user",
                "content": interruption_prompts.interruption_prompt(truncated_agent_text),
            }
        )
        text, _ = self._ask(messages)
        said, _ends = user_sim.split_end_mark(text)
        return said.strip().strip('"').strip()

    def close(self) -> None:
        self.llm.close()

    def _ask(self, messages: list[ChatMessage]) -> tuple[str, CallStats]:
        try:
            completion = self.llm.complete(messages)
        except LLMError as exc:
            raise SimulatorError(str(exc)) from exc
        self.stats.append(completion.stats)
        return completion.text.strip(), completion.stats
