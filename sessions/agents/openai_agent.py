"""The agent under test behind any OpenAI-compatible chat endpoint.

The agent is its system prompt (a scenario's ``agent.system_prompt`` or a file given
with ``--agent-prompt``) plus a model. Each :meth:`OpenAIAgent.reply` streams one
completion in a background thread, so the call loop can speak chunks as they arrive.
What is sent is the agent's system prompt followed by exactly the history given:
after an interruption the call loop has already cut the last assistant message to
its spoken part, and the connector does not second-guess it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sessions.agents.base import AgentError, Message, ReplyStream
from sessions.llm_client import CallStats, ChatMessage, LLMClient, LLMConfig, LLMError

if TYPE_CHECKING:
    from sessions.settings import Settings


class _AgentScenario(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def system_prompt(self) -> str: ...


class OpenAIAgent:
    """An :class:`~sessions.agents.base.Agent` that streams replies from a chat endpoint."""

    def __init__(self, system_prompt: str, llm: LLMClient, *, name: str = "") -> None:
        self.system_prompt = system_prompt
        self.llm = llm
        self.name = name or llm.config.model
        self.stats: list[CallStats] = []
        """One entry per finished reply (ok or failed), in order: attempts, latency, tokens."""

    @classmethod
    def from_config(
        cls, config: LLMConfig, *, system_prompt: str = "", name: str = ""
    ) -> OpenAIAgent:
        return cls(system_prompt, LLMClient(config), name=name)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        system_prompt: str = "",
        agent_prompt_file: Path | None = None,
        scenario_agent: _AgentScenario | None = None,
        model: str | None = None,
        base_url: str | None = None,
    ) -> OpenAIAgent:
        """Build from settings and CLI flags; ``--agent-prompt FILE`` beats the scenario's."""
        name = ""
        if scenario_agent is not None:
            system_prompt = system_prompt or scenario_agent.system_prompt
            name = scenario_agent.name
        if agent_prompt_file is not None:
            from sessions.hostile.safe_files import FileError, read_text

            try:
                system_prompt = read_text(agent_prompt_file).strip()
            except FileError as exc:
                raise AgentError(f"cannot read agent prompt: {exc}") from None
        config = LLMConfig.from_settings(settings, model=model, base_url=base_url)
        return cls.from_config(config, system_prompt=system_prompt, name=name)

    def messages_for(self, history: list[Message]) -> list[ChatMessage]:
        """The chat messages sent for ``history``: system prompt, then the history as is."""
        head = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return head + [{"role": m.role, "content": m.content} for m in history]

    def reply(self, history: list[Message]) -> ReplyStream:
        """Start streaming the next agent turn (never ``None``: an LLM agent always answers)."""
        messages = self.messages_for(history)

        def produce() -> Iterator[str]:
            streamed = self.llm.stream(messages)
            try:
                yield from streamed
            except LLMError as exc:
                raise AgentError(str(exc)) from exc
            finally:
                self.stats.append(streamed.stats)

        return ReplyStream.in_thread(produce, name=f"agent-reply-{self.name}")

    def close(self) -> None:
        self.llm.close()
