"""A simulated call put together: the one :class:`~sessions.call.engine.engine.CallEngine`
with a :class:`~sessions.call.far_ends.simulated.SimulatedFarEnd` (a line call:
:func:`sessions.call.setup.line_call.line_call`)."""

from __future__ import annotations

from collections.abc import Iterable

from sessions.agents.base import Agent
from sessions.call.adapt import RuleAdapter
from sessions.call.config import CallConfig
from sessions.call.engine.engine import CallEngine
from sessions.call.engine.pump import Listener
from sessions.call.far_ends.simulated import SimulatedFarEnd
from sessions.call.near_end.caller import InterruptionText
from sessions.call.policy import TurnTakingPolicy
from sessions.call.voice.voice import TextVoice, Voice
from sessions.callers.users import UserProvider

SimulatedCall = CallEngine[SimulatedFarEnd]


def simulated_call(
    config: CallConfig,
    agent: Agent,
    *,
    user: UserProvider | None = None,
    listeners: Iterable[Listener] = (),
    policy: TurnTakingPolicy | None = None,
    shadow: TurnTakingPolicy | None = None,
    interruption_text: InterruptionText | None = None,
    virtual: bool = True,
    voice: Voice | None = None,
    adapter: RuleAdapter | None = None,
) -> SimulatedCall:
    """A call to an agent whose speech cutin makes (``voice``: the text clock by default)."""
    far = SimulatedFarEnd(agent, voice if voice is not None else TextVoice(config.style))
    return CallEngine(
        config,
        far,
        user=user,
        listeners=listeners,
        policy=policy,
        shadow=shadow,
        interruption_text=interruption_text,
        virtual=virtual,
        adapter=adapter,
    )
