"""Turn-taking policies other than the rule engine (which lives in ``controls``).

``sessions.policies.tau_voice`` holds tau-Voice's LLM classifiers, run as the peer
method (``--policy tau-voice``) or in shadow beside the rules.
"""

from __future__ import annotations

from typing import Any


class PolicyError(RuntimeError):
    """A policy could not decide (after retries). ``result`` holds what was spent, with
    the decision NOTHING, so the call can log it and go on."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


__all__ = ["PolicyError"]
