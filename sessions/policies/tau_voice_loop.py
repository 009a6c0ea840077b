"""τ-Voice's classifiers as a call-loop policy (acting or in shadow).

Acting (``--policy tau-voice``) it follows τ-Voice's own schedule: a consultation
every 2.0 s of the agent's turn while the caller is silent, both classifiers at
once, interruption wins. In shadow (``--shadow tau-voice``) it is asked at the very
opportunities the rules see, so one log holds both decisions side by side, each
with its LLM calls, latency and tokens.

On the virtual clock a consultation blocks and its measured latency delays the
action; in real time it runs in the background and its result is acted on at the
first frame after it arrives, which is when a real caller would act.
"""

from __future__ import annotations

from concurrent.futures import Future

from controls.turn_taking import Action, Check
from sessions.call.policy import PolicyContext, PolicyDecision
from sessions.policies import PolicyError
from sessions.policies.tau_voice import TauVoicePolicy, TauVoiceResult, TauVoiceSchedule


def _decision(
    result: TauVoiceResult, *, delay_s: float, error: str | None = None
) -> PolicyDecision:
    checks = (
        Check(
            "interrupt",
            "classifier",
            result.decision is Action.INTERRUPT,
            (result.interrupt_answer or "—").strip()[:40],
            "YES",
        ),
        Check(
            "backchannel",
            "classifier",
            result.decision is Action.BACKCHANNEL,
            (result.backchannel_answer or "—").strip()[:40],
            "YES",
        ),
    )
    llm: dict[str, object] = {
        "calls": result.llm_calls,
        "latency_s": round(result.latency_s, 4),
        "tokens": result.tokens,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "retries": result.retries,
    }
    if error:
        llm["error"] = error
    return PolicyDecision(result.decision, checks, delay_s=delay_s, token=result.token, llm=llm)


class TauVoiceLoopPolicy:
    """Adapts :class:`TauVoicePolicy` to the call loop's ``TurnTakingPolicy``."""

    name = "tau-voice"

    def __init__(self, classifiers: TauVoicePolicy, *, shadow: bool = False) -> None:
        self.classifiers = classifiers
        self.shadow = shadow
        self.polls = not shadow
        self.schedule = TauVoiceSchedule()
        self._future: Future[TauVoiceResult] | None = None

    def _consult_now(self, ctx: PolicyContext) -> PolicyDecision:
        try:
            result = self.classifiers.consult(ctx.situation.agent_text, ctx.history)
        except PolicyError as exc:
            if isinstance(exc.result, TauVoiceResult):
                return _decision(exc.result, delay_s=exc.result.latency_s, error=str(exc))
            raise
        return _decision(result, delay_s=result.latency_s if not self.shadow else 0.0)

    def at_pause(self, ctx: PolicyContext) -> PolicyDecision | None:
        if not self.shadow:
            return None
        # Shadow decisions are only logged; blocking here keeps them at the same moment
        # as the rule's (the real-time app runs shadow consultations off the UI thread).
        return self._consult_now(ctx)

    def at_frame(self, ctx: PolicyContext) -> PolicyDecision | None:
        if self.shadow:
            return None
        if self._future is not None:
            if not self._future.done():
                return None
            future, self._future = self._future, None
            try:
                return _decision(future.result(), delay_s=0.0)
            except PolicyError as exc:
                if isinstance(exc.result, TauVoiceResult):
                    return _decision(exc.result, delay_s=0.0, error=str(exc))
                raise
        if not self.schedule.due(ctx.t, ctx.turn_onset, user_busy=ctx.user_busy):
            return None
        if ctx.virtual:
            return self._consult_now(ctx)
        self._future = self.classifiers.start(ctx.situation.agent_text, ctx.history)
        return None

    def close(self) -> None:
        self.classifiers.close()
