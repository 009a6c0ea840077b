"""What the tester (or a test) can ask of a running call. Applied at the next frame."""

from __future__ import annotations

from dataclasses import dataclass

from controls.tendencies import Tendencies


@dataclass(frozen=True, slots=True)
class SubmitText:
    """A typed turn. Sent at once when the floor is free, else when the agent's turn ends."""

    text: str
    source: str = "typed"


@dataclass(frozen=True, slots=True)
class InterruptNow:
    """Cut the agent at the current word and say ``text`` (or a scenario line if empty).

    ``at``: when the tester started (call clock, at most now): words that ended by then
    count as spoken; the agent's audio between ``at`` and the cut is its talk-over.
    """

    text: str = ""
    at: float | None = None


@dataclass(frozen=True, slots=True)
class BackchannelNow:
    token: str | None = None


@dataclass(frozen=True, slots=True)
class CallerSoundNow:
    """A sound of the caller's that is not a turn, now: ``vocal_tic`` (a short
    non-lexical sound, a cough) or ``non_directed`` (side talk at a lower level, not meant
    for the agent). A line measures whether the agent yields or answers to it."""

    kind: str = "vocal_tic"


@dataclass(frozen=True, slots=True)
class SetTendencies:
    tendencies: Tendencies


@dataclass(frozen=True, slots=True)
class SetAutos:
    interrupt: bool | None = None
    backchannel: bool | None = None
    adapt: bool | None = None
    """``--adapt`` on or off (:mod:`sessions.call.adapt`): on, the rule is recalibrated at
    once on the agent turns heard so far; off, the paper's constants apply again."""


@dataclass(frozen=True, slots=True)
class EndCall:
    reason: str = "hangup"


@dataclass(frozen=True, slots=True)
class CallerSpeechStart:
    """The tester's microphone: speech began at ``at`` (call clock).

    While the agent speaks this is an interruption cut at ``at``; in any case the tester
    holds the floor until the matching :class:`CallerUtterance` arrives.
    """

    at: float


@dataclass(frozen=True, slots=True)
class CallerUtterance:
    """What the tester said into the microphone (STT), from ``start`` to ``end``."""

    text: str
    start: float
    end: float
    words: tuple[tuple[str, float, float], ...] = ()
    """(word, start, end) on the call clock, as STT heard them."""


Command = (
    SubmitText
    | InterruptNow
    | BackchannelNow
    | CallerSoundNow
    | SetTendencies
    | SetAutos
    | EndCall
    | CallerSpeechStart
    | CallerUtterance
)
