"""A barge-in into the agent's pause: a yield when the agent flushed audio it had sent.

The rules cut in at the agent's own short pauses, so the caller's onset often falls in
one. An agent that then drops the rest of its answer (a ``clear`` that threw audio
away) yielded, at the flush; one whose clear dropped nothing (some agents clear on any
caller sound) or that sent no clear had finished on its own: ``already_silent``.
"""

from __future__ import annotations

import numpy as np

from sessions.call.far_ends.yield_watch import YieldWatch
from sessions.call.sound_tape import SoundTape
from sessions.speech import SAMPLE_RATE

FRAME_S = 0.032


def _watch(flush_at: float | None, *, dropped: bool) -> tuple[YieldWatch, float | None]:
    """Agent sound until 1.000 s, then silence; the caller's onset at 1.150 s."""
    tape = SoundTape()
    audio = np.zeros(int(3.0 * SAMPLE_RATE), np.float32)
    audio[:SAMPLE_RATE] = 0.3
    tape.append(audio)
    watch = YieldWatch(turn=0, after="interruption", onset_t=1.15, window_s=2.0, silence_start=1.0)
    if flush_at is not None:
        watch.clear_t = flush_at
        watch.flushed_t = flush_at if dropped else None
    t, result = 1.15, None
    while result is None:
        result = watch.frame(t, t + FRAME_S, speaking=False, caller_active=True)
        t += FRAME_S
    stop = watch.stop_time(result, tape, FRAME_S)
    assert stop is not None and abs(stop - 1.0) < 1e-6  # the last sample of sound
    return watch, stop


def test_a_flush_after_the_onset_is_the_stop_of_a_yield_in_a_pause() -> None:
    watch, stop = _watch(1.25, dropped=True)
    assert not watch.already_silent(stop)
    assert watch.flushed_stop(stop) == 1.25
    assert watch.latency(watch.flushed_stop(stop)) == 0.1


def test_a_clear_that_dropped_nothing_or_none_leaves_it_already_silent() -> None:
    for flush_at, dropped in ((1.25, False), (None, False)):
        watch, stop = _watch(flush_at, dropped=dropped)
        assert watch.already_silent(stop) and watch.flushed_stop(stop) is None


def test_a_flush_after_the_window_is_no_yield_in_it() -> None:
    watch, stop = _watch(3.5, dropped=True)
    assert watch.already_silent(stop)
