"""The caller's side of a call, whatever the far end: the *near end*.

What the caller says and when it is said, shared by a simulated call and a line call:
typed text waiting for the floor, a headless caller (scripted or LLM) asked for its
next line, the α-rendering of what is said (disfluencies), the line an interruption
opens with, and the tester's microphone turns. How the words become sound differs
(a voice track on the call clock, or synthesized audio on the line) and stays with
the far end.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from controls.disfluency import inject_disfluency
from sessions.agents.base import Message
from sessions.call.commands import CallerUtterance
from sessions.callers.users import CallerReply, UserProvider
from sessions.log.models import ErrorEvent, InsertionRecord, UserTurn, WordTiming

if TYPE_CHECKING:
    from sessions.call.context import CallContext

InterruptionText = Callable[[str, list[Message]], str]
"""An LLM caller's barge-in: (what it heard of the agent's turn, history) -> its line."""


class Caller:
    """The near end of one call."""

    def __init__(
        self,
        ctx: CallContext,
        user: UserProvider | None,
        interruption_text: InterruptionText | None,
    ) -> None:
        self.ctx = ctx
        self.user = user
        self.interruption_text = interruption_text
        self.queued: list[tuple[str, str]] = []
        """Typed (or submitted) text waiting for the caller to have the floor: (text, source)."""
        self.turns = 0
        """Caller turns so far (the next one's index)."""
        self._pool: ThreadPoolExecutor | None = None

    def next_index(self) -> int:
        index = self.turns
        self.turns += 1
        return index

    def render(self, text: str) -> tuple[str, list[InsertionRecord], float]:
        """``text`` as the caller says it at the α dial: (rendered, insertions, α)."""
        e = self.ctx
        result = inject_disfluency(text, e.dials.alpha, e.config.profile)
        insertions = [
            InsertionRecord(index=i.index, kind=i.kind.value, token=i.token)
            for i in result.insertions
        ]
        return result.rendered, insertions, result.alpha

    def interruption_openers(self) -> list[str]:
        """The scenario's barge-in openers as they will be said (α-rendered), to prepare."""
        return [self.render(o)[0] for o in self.ctx.config.scenario.user.interruptions]

    def interruption_line(self, heard: str, t: float) -> str:
        """What the caller says when they cut in: an LLM caller's own line when there is
        one, else the scenario's opener (and, for a headless caller, its next line)."""
        e = self.ctx
        if self.interruption_text is not None:
            try:
                line = self.interruption_text(heard, list(e.history)).strip()
                if line:
                    return line
            except Exception as exc:
                e.emit(ErrorEvent(t=t, where="interruption_text", message=str(exc)))
        opener = e.rng.choice(e.config.scenario.user.interruptions)
        # A headless caller may say what they came to say after the opener (so a call
        # at β = 1 still moves forward); see ScriptedUser(barge_in_with_next_line=...).
        more = getattr(self.user, "barge_in_content", None)
        content = more(list(e.history)) if callable(more) else None
        return f"{opener} {content}" if content else opener

    def next_line(self) -> CallerReply:
        """The headless caller's next turn, asked now (keys to press, or None: hang up)."""
        assert self.user is not None
        return self.user.next_turn(list(self.ctx.history))

    def ask(self) -> Future[CallerReply]:
        """The caller's next line: inline on the virtual clock, else on a worker (an LLM
        simulator takes a second; the frame clock must not wait for it)."""
        assert self.user is not None
        user, history = self.user, list(self.ctx.history)
        if self.ctx.virtual:
            done: Future[CallerReply] = Future()
            try:
                done.set_result(user.next_turn(history))
            except Exception as exc:
                done.set_exception(exc)
            return done
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="cutin-caller")
        return self._pool.submit(user.next_turn, history)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def mic_user_turn(
    command: CallerUtterance, index: int, text: str, start: float, end: float
) -> UserTurn:
    """The log's caller turn for what the tester said into the microphone (no α: their
    own words are what they said)."""
    return UserTurn(
        t=round(start, 6),
        turn=index,
        source="mic",
        original=text,
        rendered=text,
        alpha=0.0,
        end_t=round(end, 4),
        words=[WordTiming(word=w, start=round(a, 4), end=round(b, 4)) for w, a, b in command.words],
    )
