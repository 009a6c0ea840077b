"""tau-Voice's LLM turn-taking policy, the peer the rule engine is compared against.

At each consultation both classifiers (interruption, backchannel) are asked at once,
on two threads, each with the conversation so far and the agent's ongoing turn; the
interruption wins when both say YES, as in tau-Voice. Consultations happen every
2.0 s of agent speech while the user is silent (tau-Voice ticks 0.2 s of audio and
consults every 10 ticks); :class:`TauVoiceSchedule` says when one is due and the call
loop does the asking.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from controls import Action
from prompts import tau_voice as prompts
from sessions.agents.base import Message
from sessions.llm_client import Completion, LLMClient, LLMError
from sessions.policies import PolicyError

CONSULT_INTERVAL_S = 2.0
BACKCHANNEL_TOKENS: tuple[str, ...] = ("uh-huh", "mm-hmm")


@dataclass(frozen=True)
class TauVoiceResult:
    """One consultation: the decision and what it cost."""

    decision: Action
    token: str | None
    """The backchannel token when the decision is BACKCHANNEL."""
    llm_calls: int
    latency_s: float
    """Wall time of the consultation (both calls run side by side)."""
    prompt_tokens: int
    completion_tokens: int
    interrupt_answer: str | None
    """The interruption classifier's raw answer (None if it failed)."""
    backchannel_answer: str | None
    retries: int = 0
    errors: tuple[str, ...] = ()

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, object]:
        """For the session log (an opportunity's ``checks``)."""
        return {
            "decision": str(self.decision),
            "token": self.token,
            "llm_calls": self.llm_calls,
            "latency_s": round(self.latency_s, 4),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "interrupt_answer": self.interrupt_answer,
            "backchannel_answer": self.backchannel_answer,
            "retries": self.retries,
            "errors": list(self.errors),
        }


class TauVoicePolicy:
    """Consults tau-Voice's two YES/NO classifiers in parallel."""

    def __init__(
        self,
        llm: LLMClient,
        *,
        seed: int = 0,
        tokens: Sequence[str] = BACKCHANNEL_TOKENS,
        interrupt: bool = True,
        backchannel: bool = True,
    ) -> None:
        """``interrupt``/``backchannel``: which classifiers to consult (tau-Voice ties
        the interruption one to an "interrupts" persona and the other to a setting)."""
        self.llm = llm
        self.tokens = tuple(tokens)
        self.interrupt = interrupt
        self.backchannel = backchannel
        self._rng = random.Random(seed)
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tau-voice")
        self._outer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tau-voice-consult")
        self.consultations = 0
        self.llm_calls = 0

    def consult(self, agent_so_far: str, history: Sequence[Message]) -> TauVoiceResult:
        """Ask the classifiers about the agent's ongoing turn.

        ``history`` is the conversation before this agent turn (roles from the agent's
        side: ``user`` is the caller); ``agent_so_far`` is this turn as heard so far.
        Raises :class:`PolicyError` (with ``.result``: the decision NOTHING and what was
        spent) when a classifier fails after its retries.
        """
        formatted = prompts.format_history(
            [(m.role, m.content) for m in history if m.role != "system"], agent_so_far
        )
        start = time.monotonic()
        futures: dict[str, Future[Completion]] = {}
        if self.interrupt:
            futures["interrupt"] = self._ask(prompts.interruption_prompt(formatted))
        if self.backchannel:
            futures["backchannel"] = self._ask(prompts.backchannel_prompt(formatted))
        answers: dict[str, str] = {}
        errors: list[str] = []
        prompt_tokens = completion_tokens = retries = 0
        for kind, future in futures.items():
            try:
                completion = future.result()
            except LLMError as exc:
                errors.append(f"{kind}: {exc}")
                retries += max(0, exc.attempts - 1)
                continue
            answers[kind] = completion.text
            prompt_tokens += completion.stats.prompt_tokens
            completion_tokens += completion.stats.completion_tokens
            retries += completion.stats.retries
        latency = time.monotonic() - start
        self.consultations += 1
        self.llm_calls += len(futures)

        decision, token = Action.NOTHING, None
        if not errors:
            if prompts.is_yes(answers.get("interrupt", "")):
                decision = Action.INTERRUPT
            elif prompts.is_yes(answers.get("backchannel", "")):
                decision, token = Action.BACKCHANNEL, self._rng.choice(self.tokens)
        result = TauVoiceResult(
            decision=decision,
            token=token,
            llm_calls=len(futures),
            latency_s=latency,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            interrupt_answer=answers.get("interrupt"),
            backchannel_answer=answers.get("backchannel"),
            retries=retries,
            errors=tuple(errors),
        )
        if errors:
            raise PolicyError("tau-Voice classifier failed: " + "; ".join(errors), result)
        return result

    def start(self, agent_so_far: str, history: Sequence[Message]) -> Future[TauVoiceResult]:
        """:meth:`consult` in the background, for a real-time loop that must not block.
        Start the next one only when this one is done (tau-Voice waits too)."""
        return self._outer.submit(self.consult, agent_so_far, list(history))

    def close(self) -> None:
        self._outer.shutdown(wait=False, cancel_futures=True)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.llm.close()

    def _ask(self, prompt: str) -> Future[Completion]:
        return self._pool.submit(self.llm.complete, [{"role": "user", "content": prompt}])


@dataclass
class TauVoiceSchedule:
    """When a consultation is due: at every ``interval`` s of the agent's turn, counted
    from the turn's onset, skipping moments when the user is producing audio.

    Call :meth:`due` every frame with the current time and the turn's onset; it says
    yes once per grid point reached (a new onset restarts the grid). A caller that fell
    behind gets one consultation, not a backlog, as tau-Voice never queues ticks.
    """

    interval: float = CONSULT_INTERVAL_S
    _onset: float | None = field(default=None, repr=False)
    _next: float = field(default=0.0, repr=False)
    consulted_at: list[float] = field(default_factory=list, repr=False)

    def due(self, now: float, turn_onset: float, *, user_busy: bool = False) -> bool:
        """True when a consultation should happen now (it is then counted as made)."""
        if turn_onset != self._onset:
            self._onset = turn_onset
            self._next = turn_onset + self.interval
        if user_busy or now < self._next - 1e-9:
            return False
        self._next = next_due_time(turn_onset, now, self.interval)
        self.consulted_at.append(now)
        return True


def next_due_time(turn_start: float, now: float, interval: float = CONSULT_INTERVAL_S) -> float:
    """The first consultation time on the turn's ``interval`` grid strictly after ``now``."""
    if interval <= 0:
        raise ValueError("interval must be positive")
    elapsed = max(0.0, now - turn_start)
    return turn_start + (int(elapsed // interval) + 1) * interval


def due_times(
    turn_start: float,
    now: float,
    last_consult: float | None,
    interval: float = CONSULT_INTERVAL_S,
) -> list[float]:
    """Grid points (``turn_start + k·interval``, k ≥ 1) passed after ``last_consult`` up to
    ``now``; empty means no consultation is due. A caller that fell behind gets several
    and should consult once (tau-Voice never queues missed ticks)."""
    if interval <= 0:
        raise ValueError("interval must be positive")
    after = turn_start if last_consult is None else max(last_consult, turn_start)
    first = int((after - turn_start) // interval) + 1
    out: list[float] = []
    k = first
    while turn_start + k * interval <= now + 1e-9:
        t = turn_start + k * interval
        if t > after + 1e-9:  # float slack: a consult at a grid point covers it
            out.append(t)
        k += 1
    return out
