"""The scenario schema (validated with pydantic; errors name the field)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sessions.safe_files import FileError


class ScenarioError(FileError):
    """A scenario that cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Variant(_Strict):
    when: list[str] = Field(min_length=1)
    """Words or phrases; the variant is used when the user's last turn contains any."""
    text: str = Field(min_length=1)


class AgentTurnScript(_Strict):
    text: str = Field(min_length=1)
    """What the agent says (the default when no variant matches)."""
    variants: list[Variant] = Field(default_factory=list)
    extra: list[str] = Field(default_factory=list)
    """Sentences a real agent might add (detail, policy, a read-back): with an agent
    profile that has ``turn_words``, the scripted agent adds them, in order, before the
    turn's last sentence while the turn stays within the length drawn for it."""

    def choose(self, last_user_text: str) -> str:
        said = last_user_text.lower()
        for variant in self.variants:
            for phrase in variant.when:
                if re.search(r"\b" + re.escape(phrase.lower()) + r"\b", said):
                    return variant.text
        return self.text


class AgentScript(_Strict):
    name: str = "Agent"
    system_prompt: str = ""
    """For LLM agents: the agent under test's instructions (scripted agents ignore it)."""
    turns: list[AgentTurnScript] = Field(min_length=1)
    closing: str = "Is there anything else I can help you with today?"
    """Said once when the script runs out; after that the agent has nothing more to say."""
    response_latency_s: float = Field(default=0.7, ge=0.0, le=10.0)
    """Seconds from the end of the user's speech to the agent's first word."""
    yields_when_interrupted: bool = True
    """False demonstrates talk-over: the agent keeps speaking when barged in on."""
    treats_backchannel_as_turn: bool = False
    """True demonstrates a false interruption: the agent stops at a mere "mm-hmm"."""
    profile: str | None = None
    """An agent profile (a shipped name or a TOML path) that times this agent's turns in
    ``cutin simulate``: speaking rate, pauses and turn lengths drawn from distributions
    (``sessions/scenarios/profile.py``); ``--agent-profile`` overrides it."""
    after_cut: Literal["reoffer", "continue"] = "reoffer"
    """After a truncation: re-offer the first unspoken sentence, or carry straight on with
    the script (which may presume what the caller never heard: a finding for the judge)."""


class UserScript(_Strict):
    goal: str = Field(min_length=1)
    persona: str = Field(min_length=1)
    turns: list[str] = Field(default_factory=list)
    """What a scripted user says, in order, in headless runs (the tester types instead)."""
    interruptions: list[str] = Field(
        default_factory=lambda: ["Sorry, can I stop you there for a second?"]
    )
    """Short lines used for automatic interruptions and an empty interrupt key."""
    response_latency_s: float = Field(default=0.3, ge=0.0, le=10.0)
    """Scripted user: seconds after the agent's turn end before replying."""

    @field_validator("interruptions")
    @classmethod
    def _not_empty(cls, v: list[str]) -> list[str]:
        if not v or not all(s.strip() for s in v):
            raise ValueError("needs at least one non-empty line")
        return v


class SuccessCriteria(_Strict):
    agent_says: list[str] = Field(default_factory=list)
    """Phrases that must appear in what the agent actually spoke."""


class Scenario(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str = Field(min_length=1)
    description: str = ""
    agent: AgentScript
    user: UserScript
    success: SuccessCriteria = Field(default_factory=SuccessCriteria)
    source: str = Field(default="", exclude=True)
    """Where it was loaded from (not part of the file)."""
