"""Did the agent answer the caller, and how fast? The response clock of a line call.

The caller's sound ends (a turn, a barge-in, a backchannel: the last sound as it left
on the line); the agent's next turn onset answers it, and the response latency is the
time between (docs/agent-measures.md). No agent turn within the response window, with
the agent silent, is τ-Voice's R_R: a ``line`` event of kind ``no_response``, logged as
it happens; so is the caller speaking again while an answer is owed. τ-Voice scores
responses to turns only: an answer after a backchannel is timed from it, but none is
owed.

Pure bookkeeping over call times, fed by the line far end (the agent's turns) and the
caller's mouth (the caller's ends), so it lives below both.
"""

from __future__ import annotations

from collections.abc import Callable

from sessions.log.models import Event, LineEvent

_EPS = 1e-6


class ResponseClock:
    """The caller's last end, what the agent answered, and the no-response watch."""

    def __init__(self, window_s: float, emit: Callable[[Event], None]) -> None:
        self.window_s = window_s
        self._emit = emit
        self.caller_end: float | None = None
        """End of the caller's last sound on the line (a turn, a barge-in, a backchannel)."""
        self.caller_end_kind = "turn"
        self.responded_to: float | None = None
        """The caller end the agent answered, or whose missing answer was logged."""
        self.agent_last_end = 0.0
        """End of the agent's last sound in its last closed turn."""

    def caller_ended(self, end: float, kind: str) -> None:
        """The caller's sound of this kind ended at ``end`` (call time)."""
        self.caller_end, self.caller_end_kind = end, kind

    def agent_turn_ended(self, end_t: float) -> None:
        """An agent turn closed; its last sound ended at ``end_t``."""
        self.agent_last_end = max(self.agent_last_end, end_t)

    def owes_nothing(self) -> bool:
        return self.caller_end_kind == "backchannel"

    def _open(self) -> float | None:
        """The caller end still waiting for its answer (none: answered, or logged)."""
        end = self.caller_end
        return None if end is None or self.responded_to == end else end

    def owed(self) -> bool:
        """The agent owes an answer to the caller's last sound (a scripted caller waits
        for it within the response window, as a person who just spoke would)."""
        end = self._open()
        if end is None or self.owes_nothing():
            return False
        return end >= self.agent_last_end - _EPS

    def answer(self, onset: float, *, blocked: bool) -> tuple[float | None, str | None]:
        """An agent turn starts at ``onset``: (its response latency, what it answers).
        ``blocked``: it starts over the caller (an agent interruption) or while the
        caller still sounds, so it answers nothing."""
        end = self._open()
        if blocked or end is None:
            return None, None
        if end < self.agent_last_end - _EPS or onset < end:
            return None, None  # the agent talked past the caller's end
        self.responded_to = end
        return round(onset - end, 4), self.caller_end_kind

    def watch(self, t: float, *, quiet: bool) -> None:
        """Each frame: no agent turn within the window of the caller's end (``quiet``:
        no agent turn is open and the caller makes no sound) is a no_response."""
        end = self._open()
        if end is None or not quiet:
            return
        if end < self.agent_last_end - _EPS or self.owes_nothing():
            return
        if t - end >= self.window_s:
            self._no_response(t, f"the agent has not answered within {self.window_s:g} s")

    def spoke_again(self, t: float, *, agent_turn_open: bool) -> None:
        """The caller starts a new turn while an answer is still owed: a no_response."""
        end = self._open()
        if end is None or agent_turn_open:
            return
        if end >= self.agent_last_end - _EPS and not self.owes_nothing():
            self._no_response(t, "the caller spoke again before the agent answered")

    def _no_response(self, t: float, detail: str) -> None:
        end = self.caller_end
        assert end is not None
        self.responded_to = end
        self._emit(
            LineEvent(
                t=round(t, 6),
                kind="no_response",
                detail=detail,
                data={
                    "caller_end_t": end,
                    "after": self.caller_end_kind,
                    "window_s": self.window_s,
                    "waited_s": round(t - end, 4),
                },
            )
        )
