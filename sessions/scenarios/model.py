"""The scenario schema (validated with pydantic; errors name the field)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from sessions.hostile.safe_files import FileError

if TYPE_CHECKING:
    from sessions.scenarios.expect import Expectations

# Size limits. A scripted call plans and times every word it speaks, and the cost grows
# faster than the length of a turn (a 6,000-word turn takes about 20 s, a 30,000-word
# one minutes), so a scenario file cannot ask for more than a few seconds of work.
# Real turns are 8-20 s of speech (20-60 words); the limits are two orders above.
MAX_WORDS = 2_000
"""Words in one spoken text: a turn, a variant, an extra sentence, a caller's line."""
MAX_CHARS = 20_000
"""Characters in one such text (a text without spaces is one long word)."""
MAX_PROMPT_WORDS = 20_000
"""Words in the agent's system prompt and other texts no one speaks (sent to an LLM)."""
MAX_PROMPT_CHARS = 200_000
MAX_ITEMS = 200
"""Entries in a list: agent turns, caller turns, extras, variants, phrases."""
MAX_NAME = 100
"""Characters in a scenario's or profile's ``name``."""
MAX_FILE_BYTES = 4 * 1024 * 1024
"""Largest scenario or agent-profile file (the text limits below fit in well under it)."""
MAX_CHOICES = 20
"""Variants of one agent turn, and phrases in one variant's ``when``."""
MAX_SCRIPT_WORDS = 10_000
"""Words in all the agent's texts together (variants, extras and their ``when``
phrases included), and in all the caller's turns together."""
MAX_SCRIPT_CHARS = 100_000
"""Characters in all the agent's texts together, and in all the caller's turns."""
DTMF_KEYS = "0123456789*#ABCD"
"""The keys a keypad step may press (RFC 4733 events 0-15)."""
MAX_DTMF_KEYS = 32
"""Keys in one keypad step (what a SIP line sends at once)."""


def _limited(max_words: int, max_chars: int) -> AfterValidator:
    def check(text: str) -> str:
        if len(text) > max_chars:
            raise ValueError(f"{len(text):,} characters; the limit is {max_chars:,} per text")
        words = len(text.split())
        if words > max_words:
            raise ValueError(f"{words:,} words; the limit is {max_words:,} per text")
        return text

    return AfterValidator(check)


SpokenText = Annotated[str, _limited(MAX_WORDS, MAX_CHARS)]
"""A text that is spoken (and so planned word by word)."""
LongText = Annotated[str, _limited(MAX_PROMPT_WORDS, MAX_PROMPT_CHARS)]
"""A text nobody speaks: a system prompt, a goal, a description."""


def _total_words(texts: list[str], what: str) -> None:
    chars = sum(len(t) for t in texts)
    if chars > MAX_SCRIPT_CHARS:
        raise ValueError(
            f"{what} hold {chars:,} characters in all; the limit is {MAX_SCRIPT_CHARS:,}"
        )
    words = sum(len(t.split()) for t in texts)
    if words > MAX_SCRIPT_WORDS:
        raise ValueError(f"{what} hold {words:,} words in all; the limit is {MAX_SCRIPT_WORDS:,}")


class ScenarioError(FileError):
    """A scenario that cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Variant(_Strict):
    when: list[SpokenText] = Field(min_length=1, max_length=MAX_CHOICES)
    """Words or phrases; the variant is used when the user's last turn contains any."""
    text: SpokenText = Field(min_length=1)


class AgentTurnScript(_Strict):
    text: SpokenText = Field(min_length=1)
    """What the agent says (the default when no variant matches)."""
    variants: list[Variant] = Field(default_factory=list, max_length=MAX_CHOICES)
    extra: list[SpokenText] = Field(default_factory=list, max_length=MAX_ITEMS)
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
    name: SpokenText = "Agent"
    system_prompt: LongText = ""
    """For LLM agents: the agent under test's instructions (scripted agents ignore it)."""
    turns: list[AgentTurnScript] = Field(min_length=1, max_length=MAX_ITEMS)
    closing: SpokenText = "Is there anything else I can help you with today?"
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

    @model_validator(mode="after")
    def _script_size(self) -> AgentScript:
        texts = [self.closing]
        for turn in self.turns:
            texts += [turn.text, *turn.extra]
            texts += [t for v in turn.variants for t in (v.text, *v.when)]
        _total_words(texts, "the agent's turns, variants and extras")
        return self


class KeypadStep(_Strict):
    """A caller step that presses keys instead of speaking: ``{ dtmf = "1#" }`` among
    ``user.turns``. The scripted caller sends the keys as DTMF on a line that carries it
    (SIP, RFC 4733); a call whose agent cannot hear keys is refused before it starts
    (:mod:`sessions.scenarios.keypad`)."""

    dtmf: str
    """The keys, in order: 1 to :data:`MAX_DTMF_KEYS` of 0-9, ``*``, ``#``, A-D."""

    @field_validator("dtmf")
    @classmethod
    def _keys(cls, v: str) -> str:
        if not v:
            raise ValueError("no keys; a keypad step presses 1 to 32 of 0-9 * # A-D")
        bad = "".join(sorted({c for c in v if c not in DTMF_KEYS}))
        if bad:
            raise ValueError(
                f"{v[:40]!r} holds {bad[:20]!r}; a keypad step presses only 0-9 * # A-D"
            )
        if len(v) > MAX_DTMF_KEYS:
            raise ValueError(f"{len(v)} keys; the limit is {MAX_DTMF_KEYS} per step")
        return v


STEP_TAGS = ("spoken", "keypad")
"""How pydantic names the two kinds of caller step in an error's location; the scenario
loader leaves them out, so an error reads ``user.turns.2.dtmf``."""


def _step_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "spoken"
    if isinstance(value, dict | KeypadStep):
        return "keypad"
    return None


CallerStep = Annotated[
    Annotated[SpokenText, Tag("spoken")] | Annotated[KeypadStep, Tag("keypad")],
    Discriminator(
        _step_kind,
        custom_error_type="caller_step",
        custom_error_message='a caller turn is a text to say or { dtmf = "1#" }, keys to press',
    ),
]
"""One of ``user.turns``: a text the caller says, or keys it presses."""


class UserScript(_Strict):
    goal: LongText = Field(min_length=1)
    persona: LongText = Field(min_length=1)
    turns: list[CallerStep] = Field(default_factory=list, max_length=MAX_ITEMS)
    """What a scripted user says, in order, in headless runs (the tester types instead);
    a step ``{ dtmf = "1#" }`` presses keys instead of speaking (an IVR menu)."""
    interruptions: list[SpokenText] = Field(
        default_factory=lambda: ["Sorry, can I stop you there for a second?"],
        max_length=MAX_ITEMS,
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

    @model_validator(mode="after")
    def _script_size(self) -> UserScript:
        _total_words(
            [*self.spoken_turns, *self.interruptions], "the caller's turns and interruptions"
        )
        return self

    @property
    def spoken_turns(self) -> list[str]:
        """The caller's turns that are said (keypad steps left out)."""
        return [t for t in self.turns if isinstance(t, str)]

    @property
    def keypad_steps(self) -> list[tuple[int, KeypadStep]]:
        """The keypad steps among the caller's turns, with their places in ``turns``."""
        return [(i, t) for i, t in enumerate(self.turns) if isinstance(t, KeypadStep)]


class SuccessCriteria(_Strict):
    agent_says: list[SpokenText] = Field(default_factory=list, max_length=MAX_ITEMS)
    """Phrases that must appear in what the agent actually spoke."""


class Scenario(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=MAX_NAME)
    title: SpokenText = Field(min_length=1)
    description: LongText = ""
    agent: AgentScript
    user: UserScript
    success: SuccessCriteria = Field(default_factory=SuccessCriteria)
    expect: dict[str, Any] = Field(default_factory=dict)
    """What ``cutin check`` gates on (:mod:`sessions.scenarios.expect`, docs/ci.md)."""
    source: str = Field(default="", exclude=True)
    """Where it was loaded from (not part of the file)."""

    @field_validator("expect")
    @classmethod
    def _expectations(cls, v: dict[str, Any]) -> dict[str, Any]:
        from sessions.scenarios.expect import parse_expect

        parse_expect(v)  # ExpectError is a ValueError: pydantic names the field
        return v

    @property
    def expectations(self) -> Expectations:
        from sessions.scenarios.expect import parse_expect

        return parse_expect(self.expect)
