"""A stop is placed at the sample where it takes effect, and a stall is not a stop.

Real-time calls (a Twilio line on loopback, Silero VAD, faster-whisper) to
examples/known_agent.py, whose truth says where its clear went out on the line's clock
and where it stalled:

* burst pacing: the agent sends each answer whole and stops with a ``clear``; the yield
  latency is the truth's within 5 ms (it read 13–24 ms early when a clear was applied at
  the start of the 32 ms frame it came in);
* a stall: the agent sends nothing for 500–700 ms just after a barge-in and then goes on
  with its turn (it never yields): no yield, ``resumed``, and its going on is the same
  turn, not an agent turn started over the caller.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.measures.harness import KnownCall, dial
from tests.support.known_agent import running_known_agent

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]
RATE = 8000
BOUND = 0.005
"""The issue's bound for a stop by a clear: 5 ms."""


def sound_at(call: KnownCall, stop: dict[str, Any], at: float) -> float:
    """The end of the agent's last sound that had played by line time ``at``: its own
    audio (known), placed where its turn played (found by aligning the turn's first
    sound: its clock is the line's until a clear empties cutin's buffer, after which the
    jitter depth shifts it)."""
    speak = max(
        (r for r in call.truth("speak") if r["t"] <= stop["decided_t"]), key=lambda r: r["t"]
    )
    audio = call.agent.speech()["greeting" if speak["why"] == "greeting" else "reply"]
    shift = call.on_line(speak["sound_t"], before=False) - speak["sound_t"]
    upto = round((at - shift - speak["t"]) * RATE)
    loud = np.flatnonzero(np.abs(audio[: max(0, upto)]) >= 0.02)
    assert loud.size, (speak, at)
    return float(speak["t"] + shift + (int(loud[-1]) + 1) / RATE)


def test_a_clear_in_burst_pacing_is_the_stop_to_5_ms(tmp_path: Path) -> None:
    with running_known_agent("--burst", "--yield-after-ms", "300") as agent:
        call = dial(agent, tmp_path, beta=1.0, seconds=26)
    stops, clears = call.truth("stop"), call.truth("clear")
    cuts = [y for y in call.of("agent_yield") if y.after == "interruption" and y.yielded]
    assert cuts and stops and len(clears) == len(stops)
    firsts = {r["t"]: r["first_t"] for r in call.truth("sound_start")}
    for y in cuts:
        i = min(range(len(stops)), key=lambda k: abs(stops[k]["onset_t"] - y.onset_t))
        stop, clear = stops[i], clears[i]
        onset = firsts[stop["onset_t"]]  # the caller's first sample, as the agent heard it
        assert abs(onset - y.onset_t) <= 0.003, (y, stop)  # the line's codec, resampled
        # The clear takes effect once it reaches cutin: never before the agent sent it
        # (the frame's start was up to 32 ms before), a moment after on loopback.
        assert y.clear_t is not None
        delivery = y.clear_t - clear["clear_t"]
        print(f"clear sent → applied: {delivery * 1000:.1f} ms")
        assert -0.001 <= delivery <= 0.2, (y, clear)
        # The stop: the end of the agent's sound as it played up to that instant.
        end = sound_at(call, stop, y.clear_t)
        # Its sound had ended in a pause before the onset: the flush is the stop.
        expected = y.clear_t if end < onset else end
        assert y.stop_t is not None and abs(y.stop_t - expected) <= BOUND, (y, stop, expected)
        assert y.latency_s is not None
        assert abs(y.latency_s - (expected - onset)) <= BOUND, (y, stop, expected)
        sent = sound_at(call, stop, clear["clear_t"])
        sent = clear["clear_t"] if sent < onset else sent
        print(
            f"yield latency {y.latency_s:.4f} s; truth {expected - onset:.4f} s where the clear"
            f" took effect, {sent - onset:.4f} s where it was sent"
        )


@pytest.mark.parametrize("stall_ms", [500, 700])
def test_a_stall_after_a_barge_in_is_not_a_yield(tmp_path: Path, stall_ms: int) -> None:
    # No lead: its audio goes out just in time, so cutin hears the stall's full length
    # (what a Pipecat bot pacing at 1x does), beyond the 500 ms that ends a turn.
    args = ("--never-yield", "--lead-ms", "60", "--stall-ms", str(stall_ms))
    with running_known_agent(*args, "--stall-after-ms", "100") as agent:
        call = dial(agent, tmp_path, beta=1.0, seconds=24)
    stalls = call.truth("stall")
    assert stalls, "β = 1 must barge in on its answer"
    assert not call.truth("stop")
    for stall in stalls:
        ys = [
            y
            for y in call.of("agent_yield")
            if y.after == "interruption" and abs(y.onset_t - stall["onset_t"]) <= 0.02
        ]
        assert ys, (stall, call.of("agent_yield"))
        for y in ys:
            assert not y.yielded and y.resumed, (y, stall)
        # Its going on is the same turn: no agent turn starts in or just after the stall.
        a, b = stall["t"], stall["t"] + stall["length_s"] + 0.3
        started = [s for s in call.of("agent_turn_start") if a <= s.t <= b]
        assert not started, (started, stall)
    assert not [s for s in call.of("agent_turn_start") if s.over_caller]
