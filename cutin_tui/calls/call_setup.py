"""What the home screen (and the tests and benches) ask for, as a plan, and the driver of
the call it makes. No Textual.

The call itself is built by :func:`sessions.plan.build.build_call`; this module only maps the
TUI's options onto a :class:`~sessions.plan.CallPlan` and wraps the built call in a
:class:`~cutin_tui.call_driver.CallDriver` on the clock asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from controls.tendencies import Tendencies
from cutin_tui.call_driver import CallDriver, RealtimeDriver, VirtualDriver
from sessions.plan import DEFAULT_SCENARIO, DEFAULT_TENDENCIES, CallPlan
from sessions.plan.build import build_call

if TYPE_CHECKING:
    from sessions.settings import Settings

__all__ = ["DEFAULT_SCENARIO", "DEFAULT_TENDENCIES", "CallOptions", "open_call", "open_plan"]


@dataclass(frozen=True)
class CallOptions:
    """What the home screen asks for (the fields mean what :class:`CallPlan`'s do)."""

    scenario: str = DEFAULT_SCENARIO
    tendencies: Tendencies = DEFAULT_TENDENCIES
    seed: int = 0
    disfluency_style: str = "paper"
    words_per_minute: float = 165.0
    auto_interrupt: bool = True
    auto_backchannel: bool = True
    sessions_dir: Path | None = None
    """Where the log goes; None means don't record (tests of the screen alone)."""
    agent: str = "scripted"
    base_url: str | None = None
    model: str | None = None
    agent_prompt: Path | None = None
    policy: str = "rules"
    shadow: str | None = None
    simulator: bool = False
    """Offer LLM-suggested caller replies (needs an endpoint: --base-url or a key)."""
    speech: str = "text"
    input: str = "type"
    stt: str | None = None
    vad: str = "onnx"
    push_to_talk: bool = False
    input_device: int | None = None
    output_device: int | None = None
    listen: bool = False
    adapt: bool = False

    def plan(self, *, virtual: bool = False) -> CallPlan:
        """The tester's call these options ask for."""
        return CallPlan(
            scenario=self.scenario,
            tendencies=self.tendencies,
            seed=self.seed,
            disfluency_style=self.disfluency_style,
            words_per_minute=self.words_per_minute,
            auto_interrupt=self.auto_interrupt,
            auto_backchannel=self.auto_backchannel,
            adapt=self.adapt,
            agent=self.agent,
            base_url=self.base_url,
            model=self.model,
            agent_prompt=self.agent_prompt,
            policy=self.policy,
            shadow=self.shadow,
            suggest=self.simulator,
            speech=self.speech,
            input=self.input,
            push_to_talk=self.push_to_talk,
            input_device=self.input_device,
            output_device=self.output_device,
            stt=self.stt,
            vad=self.vad,
            listen=self.listen,
            virtual=virtual,
            sessions_dir=self.sessions_dir,
        )


def open_plan(plan: CallPlan, settings: Settings | None = None) -> CallDriver:
    """Build the plan's call and a driver for it, on the plan's clock; nothing runs until
    the driver is started. Raises what :func:`~sessions.plan.build.build_call` raises."""
    built = build_call(plan, settings)
    driver = VirtualDriver if plan.clock_virtual else RealtimeDriver
    return driver(built.loop, built.scenario, built.recorder, built.simulator)


def open_call(
    options: CallOptions, *, virtual: bool = False, settings: Settings | None = None
) -> CallDriver:
    """Load the scenario, create the log (when a sessions dir is given) and a driver.

    Raises ``PlanError`` for options that cannot work together, ``ScenarioError`` for a
    bad scenario, ``OSError`` when the log cannot be created, ``ValueError``/``LLMError``/
    ``AgentError`` for an unusable agent or policy setup, and ``VoiceSetupError`` when
    the speech or input asked for cannot run (its message names the fix); nothing runs
    until the driver is started. A voice call's devices are open (playing silence) when
    this returns."""
    return open_plan(options.plan(virtual=virtual), settings)
