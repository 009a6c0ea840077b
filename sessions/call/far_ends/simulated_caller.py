"""The floor of a simulated call: who speaks when (the call's states), and the caller's
speech placed on the voice's caller track (typed or scripted text, α-rendered, and the
tester's microphone)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from sessions.agents.base import Message
from sessions.call.commands import CallerUtterance, SubmitText
from sessions.call.near_end.caller import Caller, mic_user_turn
from sessions.call.users import ScriptedUser
from sessions.log.models import ErrorEvent, UserTurn, WordTiming
from sessions.scenarios.model import KeypadStep

if TYPE_CHECKING:
    from sessions.call.context import CallContext
    from sessions.call.far_ends.simulated_turn import SimulatedTurn
    from sessions.call.voice.voice import Voice


class CallState(StrEnum):
    AGENT_PENDING = "agent_pending"
    """Waiting for the agent's reply to start."""
    AGENT_SPEAKING = "agent_speaking"
    WAIT_USER = "wait_user"
    USER_SPEAKING = "user_speaking"
    ENDED = "ended"


class SimulatedCaller:
    """The caller's side of :class:`~sessions.call.far_ends.simulated.SimulatedFarEnd`."""

    ctx: CallContext
    caller: Caller
    _voice: Voice
    _agent_done: bool

    def __init__(self) -> None:
        self.state = CallState.AGENT_PENDING
        self._turn: SimulatedTurn | None = None
        self._agent_due = 0.0
        self._user_busy_until = -1.0
        self._user_due: float | None = None
        self._held_user_message: Message | None = None
        self._mic_open: float | None = None
        """Onset of the tester's microphone utterance in progress (they hold the floor)."""
        self._mic_cut = False
        """That utterance interrupted the agent."""

    def _agent_latency(self) -> float:
        return self.ctx.config.scenario.agent.response_latency_s

    def caller_busy(self, t: float) -> bool:
        return self._mic_open is not None or t < self._user_busy_until - 1e-9

    def _submit_text(self, command: SubmitText, t: float) -> None:
        text = command.text.strip()
        if not text:
            return
        if self.state is CallState.WAIT_USER and t >= self._user_busy_until:
            self._start_user_turn(text, t, source=command.source)
        else:
            self.caller.queued.append((text, command.source))

    def _after_agent_turn(self, t: float) -> None:
        e = self.ctx
        if self._held_user_message is not None:
            # The caller spoke over an agent that kept going: their words follow its turn.
            e.history.append(self._held_user_message)
            self._held_user_message = None
            self.state = CallState.AGENT_PENDING
            self._agent_due = max(t, self._user_busy_until) + self._agent_latency()
            return
        self.state = CallState.WAIT_USER
        self._user_due = max(t, self._user_busy_until) + e.config.scenario.user.response_latency_s
        if self.caller.queued:
            text, source = self.caller.queued.pop(0)
            self._start_user_turn(text, max(t, self._user_busy_until), source=source)

    def _start_user_turn(self, text: str, t: float, *, source: str, hold: bool = False) -> None:
        e = self.ctx
        rendered, insertions, alpha = self.caller.render(text)
        index = self.caller.next_index()
        track = self._voice.track("caller", index, seed=e.config.seed * 7919 + index)
        track.add_text(rendered, t, final=True)
        end = track.end if track.words else t
        self._user_busy_until = max(self._user_busy_until, end)
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
            self._held_user_message = message
            return
        e.history.append(message)
        self.state = CallState.USER_SPEAKING

    def caller_frame(self, t: float, t1: float) -> None:
        e = self.ctx
        queued = self.caller.queued
        if self.state is CallState.USER_SPEAKING and not self.caller_busy(t):
            if queued:
                # The caller typed while the agent spoke; they keep the floor and say it.
                text, source = queued.pop(0)
                self._start_user_turn(text, t, source=source)
                return
            self.state = CallState.AGENT_PENDING
            self._turn = None
            self._agent_due = t + self._agent_latency()
            return
        if self.state is CallState.WAIT_USER and not self.caller_busy(t):
            if queued:
                text, source = queued.pop(0)
                self._start_user_turn(text, t, source=source)
                return
            if self.caller.user is not None and self._user_due is not None and t >= self._user_due:
                self._user_due = None
                reply = self.caller.next_line()
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
                    reply = self.caller.next_line()
                if reply is None:
                    e.end("user_hangup")
                    return
                # A scripted caller says the scenario's lines; an LLM caller its own.
                source = "scenario" if isinstance(self.caller.user, ScriptedUser) else "simulator"
                self._start_user_turn(reply, t, source=source)
            elif self.caller.user is None and self._agent_done and e.virtual:
                e.end("script_complete")

    # ---- the tester's microphone ------------------------------------------------------

    def _caller_speech_start(self, at: float, t: float) -> None:
        if self._mic_open is not None:
            return
        at = min(at, t)
        self._mic_open = at
        self._mic_cut = False
        if self.state is CallState.AGENT_SPEAKING and self._turn is not None:
            self._mic_cut = True
            # A tester's own action, counted like a key press (the user turn says "mic").
            self.ctx.interrupt(t, at)
        elif self.state is CallState.WAIT_USER:
            self.state = CallState.USER_SPEAKING

    def _caller_utterance(self, command: CallerUtterance, t: float) -> None:
        if self._mic_open is None:
            self._caller_speech_start(command.start, t)
        start = self._mic_open if self._mic_open is not None else min(command.start, t)
        interrupted, self._mic_cut = self._mic_cut, False
        self._mic_open = None
        text = " ".join(command.text.split())
        if not text:
            # Noise, or nothing STT could make out. After a cut the agent takes the floor
            # back (as after any caller turn); otherwise nothing happened.
            if self.state is CallState.USER_SPEAKING and not interrupted:
                self.state = CallState.WAIT_USER
            return
        end = max(start, min(command.end, t))
        e = self.ctx
        index = self.caller.next_index()
        self._user_busy_until = max(self._user_busy_until, end)
        e.emit(mic_user_turn(command, index, text, start, end))
        message = Message("user", text)
        if self.state is CallState.AGENT_SPEAKING and self._turn is not None:
            # An agent that does not yield is still talking: the words follow its turn.
            self._held_user_message = message
            return
        e.history.append(message)
        self.state = CallState.USER_SPEAKING
