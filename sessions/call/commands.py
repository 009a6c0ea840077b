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
    """Cut the agent at the current word and say ``text`` (or a scenario line if empty)."""

    text: str = ""


@dataclass(frozen=True, slots=True)
class BackchannelNow:
    token: str | None = None


@dataclass(frozen=True, slots=True)
class SetTendencies:
    tendencies: Tendencies


@dataclass(frozen=True, slots=True)
class SetAutos:
    interrupt: bool | None = None
    backchannel: bool | None = None


@dataclass(frozen=True, slots=True)
class EndCall:
    reason: str = "hangup"


Command = SubmitText | InterruptNow | BackchannelNow | SetTendencies | SetAutos | EndCall
