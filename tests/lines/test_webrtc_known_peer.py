"""The WebRTC line against an aiortc agent known by construction (tests/support/webrtc_peer.py).

Each test is one short real-time call built as ``cutin call --agent webrtc:http://...``
builds it (the one engine, Silero VAD and faster-whisper on the agent's audio); a manual
interruption at 2.5 s cuts into the agent's greeting. The peer stops a set number of ms
after it hears the caller (or never), to the sample, on the caller's own sample clock;
the log, read back from disk, is compared with what it did: the verdict exactly, the
onset, the stop and the yield latency within 20 ms.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from controls.tendencies import Tendencies
from sessions.call.commands import InterruptNow
from sessions.call.config import CallConfig
from sessions.call.engine.engine import CallEngine
from sessions.call.recorder import Recorder
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.log.models import AgentYield, LineEvent
from sessions.log.reader import read_session
from sessions.scenarios import load_scenario
from tests.remote.helpers import read_two_channels
from tests.support.bot_calls import hang_up_after, yield_after
from tests.support.sim_agent import LEVEL
from tests.support.webrtc_peer import RATE, Peer, running_peer

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]
pytest.importorskip("aiortc")
TOL = 0.020
"""The issue's bound: a measure within 20 ms of the truth."""
GREETING = (
    "Hello, you are through to the cutin test line, where a bot answers all of your calls,"
    " and I will keep on talking for a good while yet."
)
CUT_AT = 2.5


def espeak(text: str) -> np.ndarray:
    from sessions.speech.tts import EspeakTts

    return EspeakTts().synthesize(text).audio


def call_peer(peer: Peer, tmp_path: Path, seconds: float = 9.0) -> tuple[Path, list[AgentYield]]:
    """One real-time call to ``peer``: a manual interruption at :data:`CUT_AT`, hung up
    1.5 s after the yield watch decided (at most ``seconds``); the log and its yields."""
    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 0.0, 0.0), seed=2)
    spec = RemoteSpec(agent=f"webrtc:{peer.url}", cache_dir=tmp_path / "cache")
    recorder = Recorder.create(
        tmp_path, config, spec.agent_info(scenario.agent.name), speech=spec.speech_info()
    )
    wav = recorder.path.with_suffix(".wav")
    call = build_line_call(spec, config, recording_path=wav)
    assert isinstance(call, CallEngine)
    assert call.line is not None and call.line.name == "webrtc"
    call.listeners.append(recorder)
    call.schedule(CUT_AT, InterruptNow("Sorry, wait a moment please."))
    hang_up_after(call, yield_after("interruption"), 1.5)
    try:
        call.run_for(seconds)
    finally:
        recorder.close()
    events = read_session(recorder.path).events
    return recorder.path, [e for e in events if isinstance(e, AgentYield)]


def on_line(peer_t: float, delay: float) -> float:
    """Where the agent's sample sent at ``peer_t`` (its clock) played in the call."""
    return peer_t + delay


def playout_delay(log: Path, greeting: np.ndarray, until_s: float) -> float:
    """The delay between the peer's clock and where its audio played, just before
    ``until_s`` (its clock): the lag at which the 1.2 s of its greeting (known audio, as
    it sent it) before then best matches the recording. Found there, not at the start:
    silence the line skipped to keep up (a burst) moves what follows earlier."""
    from scipy.signal import correlate

    agent, _caller = read_two_channels(log.with_suffix(".wav"))
    i1 = round(until_s * 16_000)
    i0 = max(0, i1 - round(1.2 * 16_000))
    match = correlate(agent[i0 : i1 + 16_000], greeting[i0:i1], mode="valid")
    return int(np.argmax(match)) / 16_000


def test_a_peer_that_stops_200_ms_after_hearing_the_caller_yields(tmp_path: Path) -> None:
    greeting = espeak(GREETING)
    with running_peer(stop_ms=200, greeting=greeting) as peer:
        log, yields = call_peer(peer, tmp_path)
        truth = peer.of("onset"), peer.of("stop")
    (onset,), (stop,) = truth
    assert onset["speaking"], "the cut must land in the greeting"
    cuts = [y for y in yields if y.after == "interruption"]
    assert len(cuts) == 1, yields
    y = cuts[0]
    assert y.yielded and not y.already_silent
    assert y.stop_t is not None and y.latency_s is not None
    # The caller's onset as cutin sent it and as the peer heard it (its decoded stream
    # lags by Opus's 6.5 ms look-ahead and the resamplers' few samples).
    assert abs(onset["t"] - y.onset_t) <= TOL, (onset, y)
    # The agent's last sound before it stopped, on the line.
    delay = playout_delay(log, greeting, stop["t"])
    sent = greeting_at_48k(greeting)
    loud = np.flatnonzero(np.abs(sent[: stop["speech_pos"]]) >= LEVEL * 32768)
    last_sound = stop["t"] - (stop["speech_pos"] - (int(loud[-1]) + 1)) / RATE
    stop_on_line = on_line(last_sound, delay)
    print(
        f"webrtc peer: latency {y.latency_s:.4f} s, truth {stop_on_line - onset['t']:.4f} s;"
        f" stop {y.stop_t:.4f} vs {stop_on_line:.4f}; onset {y.onset_t:.4f} vs"
        f" {onset['t']:.4f}; the peer's audio plays {delay * 1000:.0f} ms after it sent it"
    )
    assert abs(y.stop_t - stop_on_line) <= TOL, (y, stop, delay)
    assert abs(y.latency_s - (stop_on_line - onset["t"])) <= TOL, (y, stop, delay)
    assert 0.2 <= y.latency_s <= 0.2 + delay + 0.1, (y.latency_s, delay)
    lines = [e for e in read_session(log).events if isinstance(e, LineEvent)]
    assert [e.kind for e in lines if e.kind in ("open", "format")] == ["open", "format"]
    assert [e.detail for e in lines if e.kind == "error"] == []
    closed = [e for e in lines if e.kind == "closed"]
    assert closed and closed[-1].data.get("by") == "cutin"


def test_a_peer_that_never_stops_talks_over_the_caller(tmp_path: Path) -> None:
    greeting = espeak(GREETING)
    with running_peer(stop_ms=None, greeting=greeting) as peer:
        _log, yields = call_peer(peer, tmp_path)
        onsets, stops = peer.of("onset"), peer.of("stop")
    assert onsets and onsets[0]["speaking"] and stops == []
    cuts = [y for y in yields if y.after == "interruption"]
    assert len(cuts) == 1, yields
    y = cuts[0]
    assert not y.yielded and not y.already_silent, y
    assert abs(onsets[0]["t"] - y.onset_t) <= TOL


def greeting_at_48k(greeting: np.ndarray) -> Any:
    from tests.support.webrtc_peer import _to_wire

    return _to_wire(greeting)
