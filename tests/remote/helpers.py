"""Run a remote-loop call against the simulated far end, and read its recording."""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from controls.tendencies import Tendencies
from sessions.call.adapt import line_adapter
from sessions.call.config import CallConfig
from sessions.call.policy import TurnTakingPolicy
from sessions.call.setup.line_call import LineCall, RemoteSpec, build_line_call
from sessions.callers.users import ScriptedUser
from sessions.log.models import Event
from sessions.scenarios import load_scenario
from sessions.speech import SAMPLE_RATE
from tests.support.sim_agent import LEVEL, SimAgent, SimAgentLine


@dataclass
class SimCall:
    events: list[Event]
    agent: np.ndarray
    caller: np.ndarray
    line: SimAgentLine
    loop: LineCall

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == kind]


def run_sim_call(
    tmp_path: Path,
    agent: SimAgent,
    *,
    beta: float,
    gamma: float,
    seconds: float = 30.0,
    adapt: bool = False,
    shadow: TurnTakingPolicy | None = None,
    policy: TurnTakingPolicy | None = None,
) -> SimCall:
    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, beta, gamma), seed=3)
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:9/", cache_dir=tmp_path / "cache")
    line = SimAgentLine(agent)
    line.open()
    wav = tmp_path / "call.wav"
    loop = build_line_call(
        spec,
        config,
        recording_path=wav,
        user=ScriptedUser(scenario),
        line=line,
        virtual=True,
        shadow=shadow,
        policy=policy,
    )
    if adapt:
        loop.adapter = line_adapter(config)
    events: list[Event] = []
    loop.listeners.append(events.append)
    loop.run_virtual(seconds)
    loop.voice.close()
    agent_ch, caller_ch = read_two_channels(wav)
    return SimCall(events, agent_ch, caller_ch, line, loop)


def read_two_channels(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The call recording's (agent, caller) channels as float32."""
    with wave.open(str(path), "rb") as w:
        assert w.getnchannels() == 2 and w.getframerate() == SAMPLE_RATE
        raw = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    both = raw.reshape(-1, 2).astype(np.float32) / 32768.0
    return both[:, 0].copy(), both[:, 1].copy()


def first_sound(x: np.ndarray, start_s: float) -> float:
    i0 = int(start_s * SAMPLE_RATE)
    loud = np.flatnonzero(np.abs(x[i0:]) >= LEVEL)
    return (i0 + int(loud[0])) / SAMPLE_RATE


def stop_after(x: np.ndarray, from_s: float, quiet_s: float = 0.5) -> float:
    """End of the last sound before the first ``quiet_s`` silence that ends after ``from_s``."""
    loud = np.abs(x) >= LEVEL
    need = int(quiet_s * SAMPLE_RATE)
    idx = np.flatnonzero(loud)
    # gaps between consecutive loud samples
    gaps = np.diff(idx)
    for k in np.flatnonzero(gaps > need):
        gap_end = idx[k + 1]
        if gap_end / SAMPLE_RATE > from_s:
            return (int(idx[k]) + 1) / SAMPLE_RATE
    return (int(idx[-1]) + 1) / SAMPLE_RATE
