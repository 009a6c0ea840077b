"""The call a :class:`~sessions.plan.CallPlan` asks for (from `cutin call`'s arguments, the
home screen, the tests and benches), wrapped in the driver of its clock. No Textual.

The call itself is built by :func:`sessions.plan.build.build_call`; this module only wraps
the built call in a :class:`~cutin_tui.calls.call_driver.CallDriver` on the plan's clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutin_tui.calls.call_driver import CallDriver, RealtimeDriver, VirtualDriver
from sessions.plan.build import build_call

if TYPE_CHECKING:
    from sessions.plan import CallPlan
    from sessions.settings import Settings

__all__ = ["open_call"]


def open_call(plan: CallPlan, settings: Settings | None = None) -> CallDriver:
    """Build the plan's call and a driver for it, on the plan's clock (``plan.virtual``).

    Loads the scenario and creates the log (when the plan has a sessions dir). Raises
    ``PlanError`` for a plan whose parts cannot work together, ``ScenarioError`` for a bad
    scenario, ``OSError`` when the log cannot be created, ``ValueError``/``LLMError``/
    ``AgentError`` for an unusable agent or policy setup, and ``VoiceSetupError`` when
    the speech or input asked for cannot run (its message names the fix); nothing runs
    until the driver is started. A voice call's devices are open (playing silence) when
    this returns."""
    built = build_call(plan, settings)
    driver = VirtualDriver if plan.clock_virtual else RealtimeDriver
    return driver(built.loop, built.scenario, built.recorder, built.simulator)
