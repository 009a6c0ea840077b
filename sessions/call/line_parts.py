"""The pieces of a line call that both ends share (so they live below both): its
settings and its agent turn."""

from __future__ import annotations

from dataclasses import dataclass, field

from sessions.call.context import AgentTurn
from sessions.lines.base import DEFAULT_DEPTH_S

INTERRUPTION_WINDOW_S = 2.0
"""After a barge-in the agent *yields* if it falls silent within this (τ-Voice)."""
BACKCHANNEL_WINDOW_S = 1.0
"""After a backchannel, stopping within this is a *false yield*."""


@dataclass
class RemoteConfig:
    """What shapes a call to a black-box agent beyond :class:`CallConfig`."""

    interruption_window_s: float = INTERRUPTION_WINDOW_S
    backchannel_window_s: float = BACKCHANNEL_WINDOW_S
    silent_agent_s: float = 15.0
    """Say so (once) when the agent has sent no audio for this long since the call began."""
    caller_first_s: float = 4.0
    """A headless caller speaks first if the agent has not spoken by then."""
    user_hangup_s: float = 3.0
    """A headless caller with nothing left to say hangs up this long after the agent's turn."""
    caller_patience_s: float = 10.0
    """A headless caller whose turn the agent has not answered by then goes on."""
    response_window_s: float = 5.0
    """No agent turn this long after the caller's sound ended (with the agent silent) is a
    ``line`` event of kind ``no_response`` (τ-Voice's R_R), logged as it happens; so is
    the caller speaking again first."""
    playout_depth_s: float = DEFAULT_DEPTH_S
    """The line's jitter depth: after the agent's audio ran dry, its next audio plays this
    long after it arrived (a provider's buffer; 0 to 2 s). Stated in the log (a ``line``
    event of kind ``playout``); see :data:`sessions.lines.base.DEFAULT_DEPTH_S`."""


@dataclass
class LineTurn(AgentTurn):
    response_latency_s: float | None = None
    stop_t: float | None = None
    talk_over_s: float = 0.0
    pauses: list[tuple[float, float]] = field(default_factory=list)
    """Each short pause the VAD reported: (when it was reported, when its silence began)."""
