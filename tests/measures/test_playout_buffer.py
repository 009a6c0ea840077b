"""The line's playout buffer on a clock it is told (no sockets, no real time): a clear
takes effect at the sample playing when it was applied, delivery gaps shorter than the
jitter depth are never heard, a longer stall is heard as its own length of silence."""

from __future__ import annotations

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, PlayoutBuffer

FRAME = 512
"""The loop's 32 ms frame."""


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def tone(seconds: float) -> np.ndarray:
    n = round(seconds * LINE_RATE)
    wave = 0.3 * np.sin(np.arange(n) * 0.3) + 0.35  # never under 0.02
    return np.asarray(wave, dtype=np.float32)


Arrival = tuple[float, "np.ndarray | str"]


def run(buf: PlayoutBuffer, clock: Clock, until_s: float, arrivals: list[Arrival]) -> np.ndarray:
    """Frames taken just after their end (as the pump does); ``arrivals`` (time, audio or
    "clear") applied at their instant, between frames."""
    out = []
    todo = sorted(arrivals, key=lambda a: a[0])
    taken = 0
    while taken < until_s * LINE_RATE:
        frame_end = (taken + FRAME) / LINE_RATE
        while todo and todo[0][0] < frame_end:
            at, what = todo.pop(0)
            clock.t = at
            if isinstance(what, str):
                buf.clear()
            else:
                buf.push(what)
        clock.t = frame_end + 0.001  # the frame is stepped a moment after it ends
        out.append(buf.take(FRAME))
        taken += FRAME
    return np.concatenate(out)


def sound_runs(audio: np.ndarray) -> list[tuple[float, float]]:
    loud = np.abs(audio) >= 0.02
    edges = np.flatnonzero(np.diff(np.concatenate([[0], loud.astype(int), [0]])))
    return [(a / LINE_RATE, b / LINE_RATE) for a, b in zip(edges[::2], edges[1::2], strict=True)]


@pytest.mark.parametrize("clear_at", [0.5, 0.5203, 0.5317])
def test_a_clear_takes_effect_at_the_sample_playing_when_it_was_applied(clear_at: float) -> None:
    clock, buf = Clock(), PlayoutBuffer(depth_s=0.06)
    buf.follow(clock)
    # A whole answer sent at once (burst pacing) at 0.2 s, then a clear mid-frame.
    played = run(buf, clock, 1.5, [(0.2, tone(3.0)), (clear_at, "clear")])
    runs = sound_runs(played)
    assert len(runs) == 1
    start, end = runs[0]
    assert start == pytest.approx(0.26, abs=1 / LINE_RATE)  # 60 ms after it came
    assert end == pytest.approx(clear_at, abs=1 / LINE_RATE)  # not the frame's start
    assert buf.cleared + buf.played == buf.received


def test_without_a_clock_a_clear_drops_all_that_is_queued() -> None:
    buf = PlayoutBuffer()
    buf.push(tone(1.0))
    assert np.all(np.abs(buf.take(FRAME)) > 0.02)
    assert buf.clear() == LINE_RATE - FRAME
    assert not np.any(buf.take(FRAME))


def paced(seconds: float, jitter_s: list[float], start: float = 0.1) -> list[Arrival]:
    """20 ms chunks sent at exactly 1x with no lead, each delivered ``jitter_s[i]`` late."""
    chunk = tone(0.02)
    n = round(seconds / 0.02)
    return [(start + i * 0.02 + jitter_s[i % len(jitter_s)], chunk) for i in range(n)]


def test_delivery_jitter_inside_the_depth_is_not_heard() -> None:
    clock, buf = Clock(), PlayoutBuffer(depth_s=0.06)
    buf.follow(clock)
    rng = np.random.default_rng(3)
    late = [float(x) for x in rng.uniform(0.0, 0.05, 200)]
    runs = sound_runs(run(buf, clock, 3.0, paced(2.0, late)))
    assert len(runs) == 1 and runs[0][1] - runs[0][0] == pytest.approx(2.0, abs=1e-3)
    # The same delivery with no depth (cutin before): heard as a string of gaps.
    clock, buf = Clock(), PlayoutBuffer(depth_s=0.0)
    buf.follow(clock)
    assert len(sound_runs(run(buf, clock, 3.0, paced(2.0, late)))) > 3


def test_a_stall_longer_than_the_depth_is_heard_as_its_length() -> None:
    clock, buf = Clock(), PlayoutBuffer(depth_s=0.06)
    buf.follow(clock)
    before = paced(1.0, [0.0])
    after = [(t + 0.64, a) for t, a in paced(1.0, [0.0], start=1.1)]  # 640 ms stall
    runs = sound_runs(run(buf, clock, 3.5, before + after))
    assert len(runs) == 2
    assert runs[1][0] - runs[0][1] == pytest.approx(0.64, abs=1e-3)
    assert buf.gaps and (buf.gaps[-1][1] - buf.gaps[-1][0]) / LINE_RATE == pytest.approx(
        0.64, abs=1e-3
    )
    assert buf.gap_in(1.05, 1.2) and not buf.gap_in(0.2, 1.0)
    assert buf.dry_since() is not None  # it ran out again at the end, with no clear


def test_the_depth_is_bounded() -> None:
    for bad in (-0.1, 2.5, float("nan")):
        with pytest.raises(ValueError):
            PlayoutBuffer(depth_s=bad)


def test_a_late_loop_does_not_make_a_paced_agent_run_dry() -> None:
    # An agent that sends as it hears (the known agent, 50 ms ahead): the loop stalls
    # 300 ms, so it sends nothing meanwhile; its audio that comes before the loop needs it
    # is on time (the stall is cutin's, not a gap in the agent's delivery).
    clock, buf = Clock(), PlayoutBuffer(depth_s=0.06)
    buf.follow(clock)
    clock.t = 0.0
    buf.push(tone(0.55))  # the first 0.55 s, queued before the call's clock started
    out = [buf.take(FRAME) for _ in range(15)]  # to 0.48 s, on time
    clock.t = 0.8  # the loop stalled: it has taken 0.48 s by 0.8 s
    buf.push(tone(0.5))
    out += [buf.take(FRAME) for _ in range(30)]
    runs = sound_runs(np.concatenate(out))
    assert len(runs) == 1 and runs[0] == pytest.approx((0.0, 1.05), abs=1e-3)
    assert not buf.gaps
