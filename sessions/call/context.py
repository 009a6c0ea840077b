"""What the engine hands to the parts of a call: a narrow :class:`CallContext`, and the
agent turn and what was heard of it, which the engine's decisions read of any far end.

The far ends (:mod:`sessions.call.far_ends`) and the near end
(:mod:`sessions.call.near_end`) are parts the engine drives; they see the call only
through this context — log an event, read the clock, the config, the dials, the history,
draw from the call's one random stream, schedule a command, end the call — and never
the engine itself (``tests/call/test_call_layers.py`` reads their imports).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from controls.adapt import TurnSeen
    from controls.tendencies import Tendencies
    from sessions.agents.base import Message
    from sessions.call.adapt import RuleAdapter
    from sessions.call.commands import Command
    from sessions.call.config import CallConfig
    from sessions.log.models import Event


@dataclass
class AgentTurn:
    """What the policies see of the agent turn in progress, whatever the far end."""

    index: int
    onset: float | None
    """Its first sound (None until the first word is placed)."""
    interrupted: bool = False
    cut_t: float | None = None
    backchannels: int = 0
    words_at_last_backchannel: int = 0
    words_reported: int = 0


@dataclass(frozen=True)
class Heard:
    """What the caller has heard of the turn by some time."""

    words: int
    text: str
    detail: dict[str, object] = field(default_factory=dict)
    """Logged beside the situation (a line: how many words are transcribed, estimated)."""


class PauseView(Protocol):
    """What a part may read of the pause detector over the agent's speech (and reset,
    when cutin itself cut the agent's audio)."""

    @property
    def in_speech(self) -> bool: ...

    @property
    def in_turn(self) -> bool: ...

    @property
    def silence_start(self) -> float | None: ...

    def reset(self) -> None: ...


@dataclass(frozen=True)
class CallClock:
    """The call's clock as a part sees it."""

    now: Callable[[], float]
    """Call time at the frame in progress (seconds from t = 0)."""
    ended: Callable[[], bool]
    """The call has ended (a part stops starting things)."""
    monotonic_at: Callable[[float], float]
    """``time.monotonic()`` at a call time (real time only)."""
    virtual: bool
    """The virtual clock (tests, batches): no devices, no workers, no waiting."""


@dataclass(frozen=True)
class Dials:
    """The tester's dials in force, and ``--adapt``'s recalibration after a turn."""

    read: Callable[[], Tendencies]
    """The dials as set (α, β, γ)."""
    effective: Callable[[], Tendencies]
    """The dials the policy sees: a dial whose auto is off is 0."""
    adapter: Callable[[], RuleAdapter | None]
    emit: Callable[[Event], None]

    @property
    def alpha(self) -> float:
        return self.read().alpha

    def observe_turn(self, seen: TurnSeen, t: float) -> None:
        """An ended agent turn's rhythm for ``--adapt`` (recalibrates, logged, when it
        moved the thresholds); nothing without it."""
        adapter = self.adapter()
        if adapter is not None and adapter.observe(seen):
            self.emit(adapter.recalibrate(self.effective(), t, "turn"))

    @property
    def adapting(self) -> bool:
        return self.adapter() is not None


@dataclass(frozen=True)
class CallContext:
    """Everything a part of a call may use of it (see the module)."""

    config: CallConfig
    clock: CallClock
    dials: Dials
    history: list[Message]
    """The conversation so far, as the agent and the caller's LLM see it."""
    rng: random.Random
    """One stream of choices (openers, tokens) per call, so a seed repeats a call."""
    pauses: PauseView
    emit: Callable[[Event], None]
    """Log an event (the listeners get it)."""
    schedule: Callable[[float, Command], None]
    """Apply a command at the first frame at or after a call time."""
    end: Callable[[str], None]
    """End the call now, for a reason (``agent_done``, ``line_failed``, …)."""
    interrupt: Callable[[float, float | None], None]
    """The tester cut in with their own voice at a call time (``at``: their onset):
    the engine's manual interruption, decided like a key press."""

    @property
    def virtual(self) -> bool:
        return self.clock.virtual
