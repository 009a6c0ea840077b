"""Running voice calls on the virtual clock and reading their recordings."""

from __future__ import annotations

import time
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from controls import Tendencies
from sessions.agents.scripted import ScriptedAgent
from sessions.call.config import CallConfig
from sessions.call.setup.simulated_call import SimulatedCall, simulated_call
from sessions.call.setup.voice import VoiceSpec, build_audio_voice
from sessions.call.voice.audio_voice import AudioVoice
from sessions.call.voice.recording import CallRecording
from sessions.callers.users import ScriptedUser
from sessions.log.models import Event
from sessions.scenarios import Scenario, load_scenario
from sessions.scenarios.store import parse_scenario
from sessions.speech import SAMPLE_RATE

Audio = npt.NDArray[np.float32]


def scenario_toml(
    *agent_turns: str,
    user_turns: tuple[str, ...] = ("Okay, thanks.",),
    yields: bool = True,
    name: str = "voice-test",
) -> str:
    """A small scenario file: the agent's turns in order, the caller's lines."""
    turns = "\n".join(f'[[agent.turns]]\ntext = "{t}"\n' for t in agent_turns)
    users = ", ".join(f'"{u}"' for u in user_turns)
    return f"""name = "{name}"
title = "voice test"

[agent]
name = "Test line"
response_latency_s = 0.5
closing = "Goodbye."
yields_when_interrupted = {str(yields).lower()}

{turns}
[user]
goal = "Test the voice."
persona = "A tester."
turns = [{users}]
interruptions = ["Sorry, one moment."]
"""


def make_scenario(*agent_turns: str, **kwargs: Any) -> Scenario:
    return parse_scenario(scenario_toml(*agent_turns, **kwargs), "voice-test.toml")


@dataclass
class VoiceCall:
    loop: SimulatedCall
    voice: AudioVoice
    events: list[Event]
    wav: Path
    config: CallConfig = field(repr=False)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def recording(self) -> tuple[Audio, Audio]:
        return read_two_channels(self.wav)


def run_voice_call(
    scenario: Scenario | str,
    tmp: Path,
    *,
    alpha: float = 0.0,
    beta: float = 0.0,
    gamma: float = 0.0,
    seed: int = 1,
    headless_user: bool = True,
    schedule: list[tuple[float, object]] | None = None,
    max_seconds: float = 120.0,
    speech: str = "espeak",
    base_url: str | None = None,
) -> VoiceCall:
    """A virtual-clock call spoken with espeak-ng (or ``speech``), recorded to ``tmp/call.wav``."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    config = CallConfig(scenario=sc, tendencies=Tendencies(alpha, beta, gamma), seed=seed)
    spec = VoiceSpec(
        speech=speech, words_per_minute=config.style.words_per_minute, openai_base_url=base_url
    )
    voice = build_audio_voice(spec, realtime=False)
    tmp.mkdir(parents=True, exist_ok=True)
    wav = tmp / "call.wav"
    voice.record_to(CallRecording(wav))
    events: list[Event] = []
    user = ScriptedUser(sc, barge_in_with_next_line=True) if headless_user else None
    loop = simulated_call(
        config, ScriptedAgent(sc), user=user, listeners=[events.append], voice=voice
    )
    for at, command in schedule or []:
        loop.schedule(at, command)  # type: ignore[arg-type]
    try:
        loop.run_virtual(max_seconds=max_seconds)
    finally:
        voice.close()
    return VoiceCall(loop, voice, events, wav, config)


class Events:
    """Everything a call driver queued, drained from the caller's thread."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.seen: list[Event] = []

    def wait_for(self, test: Callable[[Event], bool], timeout: float) -> Event:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.seen += self.driver.drain()
            for event in self.seen:
                if test(event):
                    return event
            time.sleep(0.02)
        kinds = [e.type for e in self.seen]
        raise AssertionError(f"timed out; events so far: {kinds}")

    def of(self, kind: str) -> list[Any]:
        self.seen += self.driver.drain()
        return [e for e in self.seen if e.type == kind]


def scenario_file(path: Path, *agent_turns: str, **kwargs: Any) -> str:
    """:func:`scenario_toml` written to ``path``; returns the path for ``--scenario``."""
    path.write_text(scenario_toml(*agent_turns, **kwargs))
    return str(path)


def read_two_channels(path: Path) -> tuple[Audio, Audio]:
    with wave.open(str(path), "rb") as w:
        assert w.getnchannels() == 2 and w.getframerate() == SAMPLE_RATE
        assert w.getsampwidth() == 2
        raw = w.readframes(w.getnframes())
    both = np.frombuffer(raw, dtype="<i2").reshape(-1, 2).astype(np.float32) / 32768.0
    return both[:, 0].copy(), both[:, 1].copy()


def rms(audio: Audio, start: float, end: float) -> float:
    a, b = round(start * SAMPLE_RATE), round(end * SAMPLE_RATE)
    part = audio[a:b]
    return float(np.sqrt(np.mean(part**2))) if part.size else 0.0


__all__ = [
    "Events",
    "VoiceCall",
    "make_scenario",
    "read_two_channels",
    "rms",
    "run_voice_call",
    "scenario_file",
    "scenario_toml",
]
