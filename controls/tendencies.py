"""The three dials of the method: disfluency (α), interruption (β), backchannel (γ)."""

from __future__ import annotations

import math
from dataclasses import dataclass


class TendencyError(ValueError):
    """A tendency outside 0..1 (or not a number)."""


def check_tendency(name: str, value: float | str) -> float:
    """Return ``value`` as a float, or raise a one-line error naming the dial."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TendencyError(f"{name} must be a number between 0 and 1, got {value!r}") from None
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise TendencyError(f"{name} must be between 0 and 1, got {value!r}")
    return number


@dataclass(frozen=True, slots=True)
class Tendencies:
    """Configured tendencies, each in 0..1; 0 disables the behaviour."""

    alpha: float = 0.0
    beta: float = 0.0
    gamma: float = 0.0

    def __post_init__(self) -> None:
        for name in ("alpha", "beta", "gamma"):
            object.__setattr__(self, name, check_tendency(name, getattr(self, name)))

    def as_dict(self) -> dict[str, float]:
        return {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma}


DEFAULT_TENDENCIES = Tendencies(alpha=0.5, beta=0.0, gamma=0.5)
"""The dials a call starts with when none are given (``cutin call``, the TUI's home
screen, ``CallConfig``, ``cutin simulate``'s grid): typed disfluencies and
backchannels, no interruptions until β is raised. Every default reads from here."""
