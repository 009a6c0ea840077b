"""The bridge between a running call and the screen. No Textual here.

A driver owns one call: the call loop, its recorder (the session log) and a
queue of events for the UI. The loop's listeners run on the loop's thread, so
they only write the log and append to the queue; the screen drains the queue
on its own timer and never blocks the loop. Commands go the other way through
the engine's thread-safe :meth:`~sessions.call.engine.engine.CallEngine.submit`.

A voice call speaks through an :class:`~sessions.call.voice.audio_voice.AudioVoice`, a call
to a black-box agent through its line: the driver starts it with the loop (whose clock
the voice then provides) and closes everything at the end. What a call is made of is
put together from a :class:`~sessions.plan.CallPlan` by :func:`sessions.plan.build.build_call`
(:func:`cutin_tui.calls.call_setup.open_call` wraps the built call in a driver).

:class:`RealtimeDriver` runs the loop on a thread against the real clock (the
app). :class:`VirtualDriver` steps it on the virtual clock when told to, so
screen tests and snapshots see exactly the same call every time.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sessions.agents.base import Message
from sessions.call.commands import Command, EndCall
from sessions.call.config import CallConfig
from sessions.call.engine.far_end import CallVoice, RunningCall
from sessions.call.engine.pump import Listener
from sessions.call.recorder import Recorder
from sessions.clock import Clock, RealClock
from sessions.log.models import EndEvent, Event
from sessions.policies.factory import close_policy
from sessions.scenarios import Scenario

if TYPE_CHECKING:
    from sessions.callers.simulator import UserSimulator
    from sessions.lines.base import Line


@dataclass
class CallDriver:
    """One call, its log, and the event queue the screen drains."""

    loop: RunningCall
    scenario: Scenario
    recorder: Recorder | None = None
    simulator: UserSimulator | None = None
    """Suggests the caller's next turn (None: no LLM endpoint configured)."""
    _events: collections.deque[Event] = field(default_factory=collections.deque)
    _ended: bool = False
    _stopped: bool = False
    _end_t: float | None = None

    def __post_init__(self) -> None:
        # The recorder first: an event is on disk before the screen can show it. It is a
        # listener itself, so it hears when the clock starts (the log's header, t = 0).
        listeners: list[Listener] = [self._enqueue]
        if self.recorder is not None:
            listeners.insert(0, self.recorder)
        self.loop.listeners[:0] = listeners

    # -- the loop thread side

    def _enqueue(self, event: Event) -> None:
        if isinstance(event, EndEvent):
            self._end_t = event.t
            self._ended = True
        self._events.append(event)

    # -- the screen side

    @property
    def config(self) -> CallConfig:
        return self.loop.config

    @property
    def log_path(self) -> Path | None:
        return self.recorder.path if self.recorder is not None else None

    @property
    def ended(self) -> bool:
        """True once the call's end event has been emitted."""
        return self._ended

    def drain(self) -> list[Event]:
        """Every event queued since the last drain, in order (thread-safe)."""
        out: list[Event] = []
        events = self._events
        while events:
            out.append(events.popleft())
        return out

    @property
    def voice(self) -> CallVoice:
        return self.loop.voice

    @property
    def line(self) -> Line | None:
        """The line to a black-box agent (None for a simulated agent)."""
        return self.loop.line

    @property
    def recording_path(self) -> Path | None:
        """The call's audio beside the log (voice calls that are recorded only)."""
        recording = self.loop.voice.recording
        return recording.path if recording is not None else None

    @property
    def push_to_talk(self) -> bool:
        """The tester's microphone waits for the talk key (:meth:`toggle_talk`)."""
        mic = self.loop.voice.mic
        return bool(mic is not None and mic.push_to_talk)

    def toggle_talk(self) -> bool:
        """Push-to-talk: start (or end) what the tester says into the microphone; returns
        whether they are talking now. Thread-safe. ``RuntimeError`` without push-to-talk."""
        mic = self.loop.voice.mic
        if mic is None or not mic.push_to_talk or self._ended:
            raise RuntimeError("push-to-talk needs a call with --input mic --push-to-talk")
        talking: bool = mic.toggle_talk()
        return talking

    def history(self) -> list[Message]:
        """A copy of the conversation so far (as the agent heard it)."""
        return [Message(m.role, m.content, m.truncated) for m in list(self.loop.history)]

    def suggest_reply(self) -> str:
        """Ask the LLM user simulator for the caller's next turn (blocking; call from a
        worker thread). Raises ``RuntimeError`` when no simulator is configured."""
        if self.simulator is None:
            raise RuntimeError(
                "suggestions need an LLM endpoint: start with --base-url URL (and --model), "
                "or set OPENAI_API_KEY"
            )
        return self.simulator.suggest(self.history())

    def submit(self, command: Command) -> None:
        """Queue a command for the loop's next frame (thread-safe)."""
        if not self._ended:
            self.loop.submit(command)

    def now(self) -> float:
        """Seconds since call start on the call's clock."""
        raise NotImplementedError

    def start(self) -> None:
        """Begin the call (idempotent)."""

    def stop(self, reason: str = "hangup") -> None:
        """End the call if it is still on, wait for the loop, close the log (idempotent)."""
        self._stopped = True
        self._close()

    def _close(self) -> None:
        with contextlib.suppress(Exception):  # devices going away must not hide the log
            self.loop.voice.close()
        if self.recorder is not None:
            self.recorder.close()
        for part in (self.loop.policy, self.loop.shadow, self.simulator):
            with contextlib.suppress(Exception):
                close_policy(part)


class RealtimeDriver(CallDriver):
    """Runs the loop on its own daemon thread against the monotonic clock."""

    def __init__(
        self,
        loop: RunningCall,
        scenario: Scenario,
        recorder: Recorder | None,
        simulator: UserSimulator | None = None,
    ) -> None:
        super().__init__(loop, scenario, recorder, simulator)
        self._clock: Clock = RealClock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        """What ended the loop's thread, if it crashed (also logged as an error event)."""

    def now(self) -> float:
        if self._end_t is not None:
            return self._end_t
        return self._clock.now() if self._thread is not None else 0.0

    def start(self) -> None:
        if self._thread is not None or self._stopped:
            return
        # A voice call follows the clock its audio device keeps (see sessions.call.voice.audio_out).
        self._clock = self.loop.voice.start(self.loop.submit)
        self._thread = threading.Thread(target=self._run, name="cutin-call-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.loop.run_realtime(self._clock, self._stop)
        except BaseException as exc:  # already logged by the loop; keep it off the terminal
            self.error = exc

    def stop(self, reason: str = "hangup", timeout: float = 3.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        thread = self._thread
        if thread is not None and thread.is_alive():
            self.loop.submit(EndCall(reason))
            thread.join(timeout / 3)
            if thread.is_alive():
                # Most likely the ears are seconds behind (a backlog of the agent's audio
                # to transcribe, on a loaded machine): give that up, so the call still
                # ends and its log gets its last turn (the words heard so far) and end.
                from sessions.call.far_ends.agent_ears import give_up_transcripts

                give_up_transcripts(self.loop)
                thread.join(timeout / 3)
            if thread.is_alive():
                self._stop.set()
                thread.join(timeout / 3)
        self._close()


class VirtualDriver(CallDriver):
    """Steps the loop on its virtual clock only when :meth:`advance` is called."""

    def now(self) -> float:
        return self.loop.t

    def advance(self, until: float) -> None:
        """Run the call up to ``until`` seconds (or its end)."""
        while not self.loop.ended and self.loop.t < until - 1e-9:
            self.loop.step()

    def stop(self, reason: str = "hangup") -> None:
        if self._stopped:
            return
        self._stopped = True
        if not self.loop.ended:
            self.loop.submit(EndCall(reason))
            self.loop.step()
        self._close()
