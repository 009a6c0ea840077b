"""Build turn-taking policies by name (``--policy`` / ``--shadow``)."""

from __future__ import annotations

from sessions.call.policy import RulesPolicy, TurnTakingPolicy
from sessions.llm_client import LLMConfig

POLICY_NAMES = ("rules", "tau-voice")


def build_policy(
    name: str | None, *, llm: LLMConfig | None, seed: int = 0, shadow: bool = False
) -> TurnTakingPolicy | None:
    """``None`` for no policy; ``llm`` is needed for ``tau-voice``."""
    if name is None:
        return None
    if name == "rules":
        return RulesPolicy()
    if name == "tau-voice":
        if llm is None:
            raise ValueError("the tau-voice policy needs an LLM endpoint (--base-url/--model)")
        from sessions.llm_client import LLMClient
        from sessions.policies.tau_voice import TauVoicePolicy
        from sessions.policies.tau_voice_loop import TauVoiceLoopPolicy

        return TauVoiceLoopPolicy(TauVoicePolicy(LLMClient(llm), seed=seed), shadow=shadow)
    raise ValueError(f"unknown policy {name!r}; choose from {', '.join(POLICY_NAMES)}")


def close_policy(policy: object) -> None:
    close = getattr(policy, "close", None)
    if callable(close):
        close()
