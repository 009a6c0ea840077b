"""The floor of a simulated call: who speaks when (:class:`Floor`, the call's states),
and the caller's speech placed on the voice's caller track (typed or scripted text,
α-rendered, and the tester's microphone): :class:`SimulatedCaller`, a part of
:class:`~sessions.call.far_ends.simulated.SimulatedFarEnd`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from sessions.agents.base import Message
from sessions.call.commands import CallerUtterance, SubmitText
from sessions.call.near_end.caller import mic_user_turn
from sessions.callers.users import ScriptedUser
from sessions.log.models import ErrorEvent, UserTurn, WordTiming
from sessions.scenarios.model import KeypadStep

if TYPE_CHECKING:
    from sessions.call.context import CallContext
    from sessions.call.far_ends.simulated_turn import SimulatedTurn
    from sessions.call.near_end.caller import Caller
    from sessions.call.voice.voice import Voice


class CallState(StrEnum):
    AGENT_PENDING = "agent_pending"
    """Waiting for the agent's reply to start."""
    AGENT_SPEAKING = "agent_speaking"
    WAIT_USER = "wait_user"
    USER_SPEAKING = "user_speaking"
    ENDED = "ended"


@dataclass
class Floor:
    """Who holds the floor of a simulated call, and when each side may speak next: the
    one record the far end (the agent's side) and its caller part share."""

    state: CallState = CallState.AGENT_PENDING
    turn: SimulatedTurn | None = None
    """The agent turn asked for or in progress."""
    agent_due: float = 0.0
    """The agent's next turn may start then."""
    user_busy_until: float = -1.0
    """The caller's speech (a turn, a token) plays until then."""
    user_due: float | None = None
    """A headless caller says its next line then."""
    held_user_message: Message | None = None
    """The caller spoke over an agent that kept going: their words follow its turn."""
    mic_open: float | None = None
    """Onset of the tester's microphone utterance in progress (they hold the floor)."""
    mic_cut: bool = False
    """That utterance interrupted the agent."""

    def caller_busy(self, t: float) -> bool:
        return self.mic_open is not None or t < self.user_busy_until - 1e-9


class SimulatedCaller:
    """The caller's side of :class:`~sessions.call.far_ends.simulated.SimulatedFarEnd`:
    handed the call's context, the near end's caller, the voice (the caller's track),
    the shared :class:`Floor` and whether the agent is done; it knows nothing else of
    the far end."""

    def __init__(
        self,
        ctx: CallContext,
        near: Caller,
        voice: Voice,
        floor: Floor,
        *,
        agent_done: Callable[[], bool],
    ) -> None:
        self.ctx = ctx
        self.near = near
        """The near end's caller (typed text, the headless caller's lines)."""
        self._voice = voice
        self.floor = floor
        self._agent_done = agent_done

    def _agent_latency(self) -> float:
        return self.ctx.config.scenario.agent.response_latency_s

    def caller_busy(self, t: float) -> bool:
        return self.floor.caller_busy(t)

    def submit_text(self, command: SubmitText, t: float) -> None:
        text = command.text.strip()
        if not text:
            return
        if self.floor.state is CallState.WAIT_USER and t >= self.floor.user_busy_until:
            self.start_user_turn(text, t, source=command.source)
        else:
            self.near.queued.append((text, command.source))

    def after_agent_turn(self, t: float) -> None:
        e = self.ctx
        if self.floor.held_user_message is not None:
            # The caller spoke over an agent that kept going: their words follow its turn.
            e.history.append(self.floor.held_user_message)
            self.floor.held_user_message = None
            self.floor.state = CallState.AGENT_PENDING
            self.floor.agent_due = max(t, self.floor.user_busy_until) + self._agent_latency()
            return
        self.floor.state = CallState.WAIT_USER
        self.floor.user_due = (
            max(t, self.floor.user_busy_until) + e.config.scenario.user.response_latency_s
        )
        if self.near.queued:
            text, source = self.near.queued.pop(0)
            self.start_user_turn(text, max(t, self.floor.user_busy_until), source=source)

    def start_user_turn(self, text: str, t: float, *, source: str, hold: bool = False) -> None:
        e = self.ctx
        rendered, insertions, alpha = self.near.render(text)
        index = self.near.next_index()
        track = self._voice.track("caller", index, seed=e.config.seed * 7919 + index)
        track.add_text(rendered, t, final=True)
        end = track.end if track.words else t
        self.floor.user_busy_until = max(self.floor.user_busy_until, end)
        e.emit(
            UserTurn(
                t=t,
                turn=index,
                source=source,
                original=text,
                rendered=rendered,
                insertions=insertions,
                alpha=alpha,
                end_t=round(end, 4),
                words=[
                    WordTiming(word=w.word, start=round(w.start, 4), end=round(w.end, 4))
                    for w in track.words
                ],
            )
        )
        message = Message("user", text)
        if hold:
            self.floor.held_user_message = message
            return
        e.history.append(message)
        self.floor.state = CallState.USER_SPEAKING

    def frame(self, t: float) -> None:
        e = self.ctx
        queued = self.near.queued
        if self.floor.state is CallState.USER_SPEAKING and not self.caller_busy(t):
            if queued:
                # The caller typed while the agent spoke; they keep the floor and say it.
                text, source = queued.pop(0)
                self.start_user_turn(text, t, source=source)
                return
            self.floor.state = CallState.AGENT_PENDING
            self.floor.turn = None
            self.floor.agent_due = t + self._agent_latency()
            return
        if self.floor.state is CallState.WAIT_USER and not self.caller_busy(t):
            if queued:
                text, source = queued.pop(0)
                self.start_user_turn(text, t, source=source)
                return
            if (
                self.near.user is not None
                and self.floor.user_due is not None
                and t >= self.floor.user_due
            ):
                self.floor.user_due = None
                reply = self.near.next_line()
                while isinstance(reply, KeypadStep):
                    # A simulated agent hears no keys; the call builder refuses such a
                    # scenario before it starts, so only a call built by hand gets here.
                    e.emit(
                        ErrorEvent(
                            t=round(t, 6),
                            where="dtmf",
                            message=f"keys {reply.dtmf} not pressed: a simulated agent "
                            "hears no keys; the scenario's keypad step is skipped",
                        )
                    )
                    reply = self.near.next_line()
                if reply is None:
                    e.end("user_hangup")
                    return
                # A scripted caller says the scenario's lines; an LLM caller its own.
                source = "scenario" if isinstance(self.near.user, ScriptedUser) else "simulator"
                self.start_user_turn(reply, t, source=source)
            elif self.near.user is None and self._agent_done() and e.virtual:
                e.end("script_complete")

    # ---- the tester's microphone ------------------------------------------------------

    def speech_start(self, at: float, t: float) -> None:
        if self.floor.mic_open is not None:
            return
        at = min(at, t)
        self.floor.mic_open = at
        self.floor.mic_cut = False
        if self.floor.state is CallState.AGENT_SPEAKING and self.floor.turn is not None:
            self.floor.mic_cut = True
            # A tester's own action, counted like a key press (the user turn says "mic").
            self.ctx.interrupt(t, at)
        elif self.floor.state is CallState.WAIT_USER:
            self.floor.state = CallState.USER_SPEAKING

    def utterance(self, command: CallerUtterance, t: float) -> None:
        if self.floor.mic_open is None:
            self.speech_start(command.start, t)
        start = self.floor.mic_open if self.floor.mic_open is not None else min(command.start, t)
        interrupted, self.floor.mic_cut = self.floor.mic_cut, False
        self.floor.mic_open = None
        text = " ".join(command.text.split())
        if not text:
            # Noise, or nothing STT could make out. After a cut the agent takes the floor
            # back (as after any caller turn); otherwise nothing happened.
            if self.floor.state is CallState.USER_SPEAKING and not interrupted:
                self.floor.state = CallState.WAIT_USER
            return
        end = max(start, min(command.end, t))
        e = self.ctx
        index = self.near.next_index()
        self.floor.user_busy_until = max(self.floor.user_busy_until, end)
        e.emit(mic_user_turn(command, index, text, start, end))
        message = Message("user", text)
        if self.floor.state is CallState.AGENT_SPEAKING and self.floor.turn is not None:
            # An agent that does not yield is still talking: the words follow its turn.
            self.floor.held_user_message = message
            return
        e.history.append(message)
        self.floor.state = CallState.USER_SPEAKING
