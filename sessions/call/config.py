"""Everything that shapes one call, enough to rerun it."""

from __future__ import annotations

from dataclasses import dataclass, field

from controls.disfluency import DEFAULT_PROFILE, DisfluencyProfile
from controls.tendencies import DEFAULT_TENDENCIES, Tendencies
from sessions.scenarios.model import Scenario
from sessions.speech.speech_clock import SpeakingStyle

BACKCHANNEL_TOKENS: tuple[str, ...] = ("mm-hmm", "yeah", "right", "uh-huh", "okay")


@dataclass
class CallConfig:
    scenario: Scenario
    tendencies: Tendencies = DEFAULT_TENDENCIES
    seed: int = 0
    style: SpeakingStyle = field(default_factory=SpeakingStyle)
    auto_interrupt: bool = True
    auto_backchannel: bool = True
    frame_s: float = 0.032
    short_pause_s: float = 0.2
    turn_end_s: float = 0.5
    backchannel_tokens: tuple[str, ...] = BACKCHANNEL_TOKENS
    backchannel_s: float = 0.45
    """How long a backchannel token occupies the caller's channel."""
    profile: DisfluencyProfile = DEFAULT_PROFILE
    max_agent_turns: int = 40
    max_seconds: float = 3600.0
    """A virtual-clock run stops here even if the conversation has not ended."""
