"""What a call needs, as one typed value: :class:`CallPlan`, and the checks it must pass.

It is the one plan type: `cutin call` builds it once from its arguments, the TUI's home
screen holds one, `cutin simulate` builds the plan every call of a batch shares (each
call's scenario, dials, seed and log are filled in by :func:`sessions.batch.filing.call_plan`)
and the overlap gallery one per example; :func:`sessions.plan.build.build_call` turns a
plan into a call. A pydantic model: a path given as a string is a :class:`~pathlib.Path`,
a misspelt field name is refused, and ``plan.model_copy(update=...)`` makes a variant.
This module is the one place that asks which kind of agent an ``--agent`` value names
(the registry of lines is :mod:`sessions.lines.factory`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from controls.tendencies import DEFAULT_TENDENCIES, Tendencies
from sessions.lines.factory import LINE_KINDS, is_line_agent, parse_line_agent
from sessions.scenarios.model import Scenario

DEFAULT_SCENARIO = "retail-order-change"
LINE_SCENARIO = "line-check"
"""A black-box agent's default: the caller's open questions, nothing assumed of the agent
(a retail scenario would lend it a shop's name and the caller an order number)."""

BLACK_BOX_KINDS: frozenset[str] = LINE_KINDS
"""The header's ``agent.kind`` of a call on a line to a black-box agent."""

USERS = ("tester", "scripted", "llm")
TRANSCRIBE = ("live", "end", "off")
"""``--transcribe``: what of a line's agent audio is transcribed (agent_ears.TRANSCRIBE_MODES)."""


class PlanError(ValueError):
    """A plan that cannot make a call; the message is one line that names the fix."""


def on_line(agent: str) -> bool:
    """True for an ``--agent`` value that dials a black-box agent."""
    return is_line_agent(agent)


def default_scenario(agent: str) -> str:
    """The scenario a call to ``agent`` uses when none is asked for."""
    return LINE_SCENARIO if on_line(agent) else DEFAULT_SCENARIO


def agent_kind(agent: str) -> str:
    """The header's ``agent.kind`` for an ``--agent`` value (a line's URL is not a kind)."""
    return parse_line_agent(agent).kind if is_line_agent(agent) else agent


class CallPlan(BaseModel):
    """Everything one call needs. Settings (endpoint, key, cache folder) are not in it:
    they are passed to the builder beside it."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    scenario: str = DEFAULT_SCENARIO
    """A shipped scenario name or a TOML file path."""
    tendencies: Tendencies = DEFAULT_TENDENCIES
    """The dials α (disfluency), β (interruption), γ (backchannel) the call starts with."""
    seed: int = 0
    """Timings, token choices and the scripted agent's turn lengths."""
    disfluency_style: str = "paper"
    """The caller's disfluency style (controls.disfluency.STYLES): paper or human."""
    words_per_minute: float = 165.0
    """The text clock's speaking rate (and espeak-ng's)."""
    auto_interrupt: bool = True
    """The rule's interruptions are executed (F4 switches them in the TUI)."""
    auto_backchannel: bool = True
    """The rule's backchannels are executed (F5)."""
    adapt: bool = False
    """--adapt: the rule's thresholds follow the agent's rhythm."""
    agent: str = "scripted"
    """scripted | openai | twilio:ws://... | realtime (a line to a black-box agent)."""
    base_url: str | None = None
    """The endpoint of whatever runs on an LLM (default: the settings')."""
    model: str | None = None
    """The chat (or Realtime) model (default: the settings')."""
    agent_prompt: Path | None = None
    """The agent under test's system prompt file (default: the scenario's)."""
    agent_profile: str | None = None
    """An agent profile (name or TOML path) timing the agent's turns; None: none."""
    policy: str = "rules"
    """Who decides at a pause: rules | tau-voice (τ-Voice's LLM classifiers)."""
    shadow: str | None = None
    """A second policy asked at the same pauses and only logged."""
    user: str = "tester"
    """Who calls: tester (typed or spoken live) | scripted (the scenario's lines) | llm
    (the user simulator)."""
    suggest: bool = False
    """The tester is offered LLM-suggested replies (F9); on with an LLM agent."""
    scripted_barge_in: bool = True
    """A scripted caller's automatic interruption carries its next line (simulate); the
    gallery's examples keep the bare opener."""
    speech: str = "text"
    """text (the text clock, no audio) | espeak | openai: how both sides are spoken."""
    input: str = "type"
    """The tester's input: type | mic."""
    push_to_talk: bool = False
    """--input mic: utterances between two presses of the talk key, not VAD-segmented."""
    input_device: int | None = None
    """The microphone's device index (None: the system default)."""
    output_device: int | None = None
    """The speaker's device index (None: the system default)."""
    stt: str | None = None
    """faster-whisper model for the microphone and a line's agent audio (None: tiny.en)."""
    vad: str = "onnx"
    """Silero VAD backend: onnx | silero-torch."""
    transcribe: str = "live"
    """A line's agent audio: live (each piece at its pause) | end (each turn when it ends;
    decisions count estimated words) | off (no words: load runs that need yield timing)."""
    listen: bool = False
    """A line: play it on the output device."""
    virtual: bool | None = False
    """The virtual clock (True) or real time (False); None: the fastest the agent allows
    (virtual, but real time on a line)."""
    max_seconds: float | None = None
    """The call ends here (``time_limit``; on a line when run headless)."""
    llm_seed: int | None = None
    """Sent to the LLM endpoint, so a seeded server repeats itself (simulate)."""
    sessions_dir: Path | None = None
    """The log goes into a new file here."""
    log_path: Path | None = None
    """The log goes to exactly this file (simulate); with neither, nothing is recorded."""
    audio_path: Path | None = None
    """Where a voice call's audio goes (default: beside its log)."""
    batch: Mapping[str, object] | None = None
    """The header's ``batch`` block (simulate)."""
    scenario_model: Scenario | None = Field(default=None, repr=False, exclude=True)
    """The scenario already loaded (simulate, the gallery); else loaded from ``scenario``.
    Not part of what the plan is: two plans that differ only here are equal."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CallPlan):
            return NotImplemented
        return _compared(self) == _compared(other)

    __hash__ = None  # type: ignore[assignment]  # a plan holds a dict (batch)

    @property
    def on_line(self) -> bool:
        return on_line(self.agent)

    @property
    def clock_virtual(self) -> bool:
        if self.virtual is None:
            return not self.on_line
        return self.virtual

    @property
    def uses_llm(self) -> bool:
        return (
            self.agent == "openai"
            or self.user == "llm"
            or self.suggest
            or "tau-voice" in (self.policy, self.shadow)
        )


def _compared(plan: CallPlan) -> dict[str, object]:
    return {k: v for k, v in plan.__dict__.items() if k != "scenario_model"}


def check_plan(plan: CallPlan) -> None:
    """Raise :class:`PlanError` for a combination that cannot make a call, before
    anything is opened or written."""
    if plan.user not in USERS:
        raise PlanError(f"unknown caller {plan.user!r}: {', '.join(USERS)}")
    if plan.shadow is not None and plan.shadow == plan.policy:
        raise PlanError(f"--shadow {plan.shadow} is already the acting --policy")
    if plan.agent_prompt is not None and plan.agent not in ("openai", "realtime"):
        raise PlanError("--agent-prompt needs --agent openai or realtime")
    if plan.push_to_talk and plan.input != "mic":
        raise PlanError("--push-to-talk needs --input mic")
    if plan.user != "tester" and plan.input != "type":
        raise PlanError(f"--input {plan.input}: a simulated caller ({plan.user}) types")
    if plan.transcribe not in TRANSCRIBE:
        raise PlanError(f"unknown --transcribe {plan.transcribe!r}: {', '.join(TRANSCRIBE)}")
    if plan.on_line:
        _check_line(plan)
        return
    if plan.transcribe != "live":
        raise PlanError(
            f"--transcribe {plan.transcribe} needs a line to an agent (--agent twilio:ws://... "
            "or realtime): a simulated agent's words are known, not transcribed"
        )
    if plan.agent not in ("scripted", "openai"):
        raise PlanError(f"unknown agent {plan.agent!r}; choose scripted or openai")
    if plan.input == "mic" and plan.speech == "text":
        raise PlanError("--input mic needs audio out: add --speech espeak (or openai)")
    if plan.listen:
        raise PlanError("--listen needs --agent twilio:ws://... or realtime (a line to listen to)")


def _check_line(plan: CallPlan) -> None:
    if plan.speech != "espeak":
        raise PlanError(
            f"--agent {plan.agent}: the caller is spoken by espeak-ng on a line (--speech espeak)"
        )
