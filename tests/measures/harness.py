"""One real-time cutin line call to the known-behaviour agent, and its log beside the truth.

    with running_known_agent("--ignore-shorter-ms", "800") as agent:
        call = dial(agent, tmp_path, beta=0.0, gamma=1.0, seconds=30)
    call.of("agent_yield")          # cutin's log
    call.truth("stop")              # the agent's own record of what it did

The call is built as ``cutin call --agent twilio:ws://...`` builds it (the one engine,
a Twilio line, Silero VAD and faster-whisper on the agent's audio) and runs in real
time; the log is read back from disk, so what is compared is what a tester gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from controls.tendencies import Tendencies
from sessions.call.commands import Command
from sessions.call.config import CallConfig
from sessions.call.engine.engine import CallEngine
from sessions.call.recorder import Recorder
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.callers.users import ScriptedUser
from sessions.log.models import Event
from sessions.log.reader import read_session
from sessions.scenarios import load_scenario
from tests.remote.helpers import read_two_channels
from tests.support.known_agent import KnownAgent


@dataclass
class KnownCall:
    log: Path
    events: list[Event]
    records: list[dict[str, Any]]
    agent: KnownAgent
    recording: np.ndarray
    """The agent's channel of the call's recording (16 kHz)."""

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def truth(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["event"] == kind]

    def on_line(self, t: float, *, before: bool = True) -> float:
        """Where the agent's own truth time ``t`` played on the line (see
        :meth:`tests.support.known_agent.KnownAgent.on_line`)."""
        return self.agent.on_line(t, self.records, self.recording, before=before)


def dial(
    agent: KnownAgent,
    tmp_path: Path,
    *,
    beta: float = 0.0,
    gamma: float = 0.0,
    alpha: float = 0.0,
    seconds: float = 30.0,
    scenario: str = "retail-order-change",
    seed: int = 2,
    user_wait_s: float | None = None,
    user_turns: list[str] | None = None,
    commands: list[tuple[float, Command]] | None = None,
) -> KnownCall:
    """One real-time call to ``agent``; its log and the agent's truth for this call.

    ``user_wait_s`` is how long the scripted caller waits after the agent's turn before
    its next line; ``user_turns`` replaces the scenario's lines."""
    sc = load_scenario(scenario)
    update: dict[str, Any] = {}
    if user_wait_s is not None:
        update["response_latency_s"] = user_wait_s
    if user_turns is not None:
        update["turns"] = user_turns
    if update:
        sc = sc.model_copy(update={"user": sc.user.model_copy(update=update)})
    config = CallConfig(scenario=sc, tendencies=Tendencies(alpha, beta, gamma), seed=seed)
    spec = RemoteSpec(agent=f"twilio:{agent.url}", cache_dir=tmp_path / "cache")
    recorder = Recorder.create(
        tmp_path, config, spec.agent_info(sc.agent.name), speech=spec.speech_info()
    )
    user = ScriptedUser(sc, barge_in_with_next_line=True)
    before = {r["call"] for r in agent.truth()}
    wav = recorder.path.with_suffix(".wav")
    call = build_line_call(spec, config, recording_path=wav, user=user)
    assert isinstance(call, CallEngine)
    call.listeners.append(recorder)
    for at, command in commands or []:
        call.schedule(at, command)
    try:
        call.run_for(seconds)
    finally:
        recorder.close()
    mine = {r["call"] for r in agent.truth()} - before
    for number in mine:
        agent.wait_for("call_end", timeout=20, call=number)
    records = [r for r in agent.truth() if r["call"] in mine]
    agent.speech()  # loaded while its folder exists
    agent_channel, _caller = read_two_channels(wav)
    events = list(read_session(recorder.path).events)
    return KnownCall(recorder.path, events, records, agent, agent_channel)
