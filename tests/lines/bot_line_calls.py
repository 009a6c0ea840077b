"""A real-time cutin call to the real Pipecat bot over any line, and what it must show.

The Twilio line's bot tests (tests/remote/test_pipecat_call.py) check the same three
things for Twilio; the provider lines (Exotel, Vonage, raw PCM) run them here, each
with the bot speaking that provider through Pipecat's own serializer
(``running_bot(protocol=...)``):

- the greeting is heard and transcribed (keywords only: ``tiny.en`` is inaccurate):
  :func:`greet` plays the call loop's part as the Twilio bot tests do (their
  ``LiveCall``), silent until the greeting has ended, so a bot slow to greet on a
  loaded machine is still heard whole;
- a barge-in (β = 1 on the bot's long answer) makes the bot yield, and the line saw
  its clear-equivalent (Exotel ``clear``, Vonage ``{"action": "clear"}``, raw PCM's
  ``{"type": "clear"}``) at the yield;
- the two-channel recording and the log agree to one 20 ms frame on the caller's
  onset, the agent's stop and the yield latency.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard, cast

import numpy as np

from controls.tendencies import Tendencies
from sessions.call.commands import EndCall
from sessions.call.config import CallConfig
from sessions.call.engine.engine import CallEngine
from sessions.call.recorder import Recorder
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.callers.users import ScriptedUser
from sessions.lines.base import Line, NoticeKind
from sessions.log.models import AgentTurnEnd, AgentYield, LineEvent
from sessions.log.reader import read_session
from sessions.scenarios import load_scenario
from tests.remote.helpers import first_sound, read_two_channels, stop_after
from tests.support.pipecat_bot import Bot

FRAME = 0.02
"""The tolerance between the log and the recording: one 20 ms frame."""
GREETING_WORDS = ("hello", "through", "test", "line", "listening")
"""Words of the bot's greeting ("Hello, you are through to the cutin test line. — I am
listening."); tiny.en gets some of them wrong, so two are enough."""


def greet(bot: Bot, line: Line) -> str:
    """Dial, stay silent until the bot's greeting has been said and has ended, hang up;
    the greeting as faster-whisper (``tiny.en``) hears what the line played."""
    from sessions.speech.stt import Transcriber
    from tests.lines.test_twilio_pipecat_bot import LiveCall

    bot.wait_idle()
    line.open(timeout_s=10)
    call = LiveCall(cast(Any, line))  # it uses the Line protocol only
    try:
        done = call.run(30.0, until=lambda c: bool(c.speech_runs()) and c.agent_silent_for(25))
        assert done, f"no greeting, or it never ended: {call.speech_runs()}; bot: {bot.said('')}"
    finally:
        line.close()
    errors = [n.detail for n in call.notices if n.kind is NoticeKind.ERROR]
    assert errors == [], errors
    first, last = call.speech_runs()[0]
    audio = np.concatenate(call.agent_audio[first : last + 1])
    text = Transcriber().transcribe(audio).text.lower()
    heard = [w for w in GREETING_WORDS if w in text]
    assert len(heard) >= 2, f"the greeting was transcribed as {text!r}"
    return text


def dial(bot: Bot, tmp_path: Path, agent: str, *, max_seconds: float = 90.0) -> Path:
    """One real-time call to the bot over ``agent`` (β = 1: it barges in on the bot's
    long answer), hung up 4 s after the first yield to a cut into its speech is logged
    (a loaded machine makes the bot slow to answer, so no fixed length); returns the
    log (the recording is beside it)."""
    bot.wait_idle()  # its last call has ended on its side
    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 1.0, 0.0), seed=2)
    spec = RemoteSpec(agent=agent, cache_dir=tmp_path / "cache")
    recorder = Recorder.create(
        tmp_path, config, spec.agent_info(scenario.agent.name), speech=spec.speech_info()
    )
    wav = recorder.path.with_suffix(".wav")
    user = ScriptedUser(scenario, barge_in_with_next_line=True)
    loop = build_line_call(spec, config, recording_path=wav, user=user)
    assert isinstance(loop, CallEngine)  # the one engine, whatever the line
    assert loop.line is not None and loop.line.name == spec.line.kind
    loop.listeners.append(recorder)

    def hang_up_after_a_yield(event: object) -> None:
        if _a_cut_into_speech(event):
            threading.Timer(4.0, loop.submit, args=(EndCall("hangup"),)).start()

    loop.listeners.append(hang_up_after_a_yield)
    try:
        loop.run_for(max_seconds)
    finally:
        recorder.close()
    return recorder.path


def _a_cut_into_speech(event: object) -> TypeGuard[AgentYield]:
    """A yield after an interruption that cut into the bot's speech (on a loaded machine
    the caller may also barge into a silence the bot left, which says nothing)."""
    return (
        isinstance(event, AgentYield) and event.after == "interruption" and not event.already_silent
    )


@dataclass
class Checked:
    latency_s: float
    clear_t: float
    format: dict[str, object]


def check_call(log: Path, bot: Bot, kind: str) -> Checked:
    """The yield and the recording checks of the module docstring, on one call's log."""
    session = read_session(log)
    assert session.header.agent.kind == kind
    events = session.events
    lines = [e for e in events if isinstance(e, LineEvent)]
    errors = [e.detail for e in lines if e.kind == "error"]
    assert errors == [], errors
    (fmt,) = [e.data for e in lines if e.kind == "format"]

    turns = [e for e in events if isinstance(e, AgentTurnEnd)]
    assert turns and any(t.spoken for t in turns), "cutin transcribed nothing the bot said"

    said = [s for _, s in bot.said("")]
    assert bot.said("interrupted"), f"the bot never reported being interrupted: {said}"
    yields = [e for e in events if _a_cut_into_speech(e)]
    assert yields and yields[0].yielded, f"{yields}; the bot said {said}"
    y = yields[0]
    assert y.clear_t is not None, "the bot's clear-equivalent never reached the line"
    assert y.onset_t <= y.clear_t <= y.onset_t + y.window_s
    clears = [e for e in lines if e.kind == "clear"]
    assert any(abs(e.t - y.clear_t) < 1e-6 for e in clears)

    agent, caller = read_two_channels(log.with_suffix(".wav"))
    onset = first_sound(caller, y.onset_t - 0.1)
    stop = stop_after(agent, y.onset_t)
    assert y.stop_t is not None and y.latency_s is not None
    assert abs(onset - y.onset_t) <= FRAME, (onset, y.onset_t)
    assert abs(stop - y.stop_t) <= FRAME, (stop, y.stop_t)
    assert abs(max(0.0, stop - onset) - y.latency_s) <= FRAME
    return Checked(y.latency_s, y.clear_t - y.onset_t, fmt)
