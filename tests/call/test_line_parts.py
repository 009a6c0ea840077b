"""The line far end's measuring parts, each on its own, on inputs whose truth is known by
construction (no engine, no line, no models): the yield watch over a synthetic agent
track and the response clock over call times."""

from __future__ import annotations

import numpy as np

from sessions.call.far_ends.yield_watch import YieldWatch
from sessions.call.response_clock import ResponseClock
from sessions.call.sound_tape import SoundTape
from sessions.log.models import Event, LineEvent
from sessions.speech import SAMPLE_RATE

FRAME_S = 0.032


def _agent_track(speech_until: float, seconds: float = 6.0) -> SoundTape:
    """The agent speaks (a 220 Hz tone at 0.3) from 0.5 s to ``speech_until``, exactly to
    the sample, then is silent."""
    n = round(seconds * SAMPLE_RATE)
    t = np.arange(n) / SAMPLE_RATE
    audio = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    audio[: round(0.5 * SAMPLE_RATE)] = 0.0
    audio[round(speech_until * SAMPLE_RATE) :] = 0.0
    # A sine crosses zero: keep every sample of the speech over the sound level.
    speaking = slice(round(0.5 * SAMPLE_RATE), round(speech_until * SAMPLE_RATE))
    audio[speaking] = np.where(np.abs(audio[speaking]) < 0.05, 0.05, audio[speaking])
    tape = SoundTape()
    tape.append(audio)
    return tape


def _watch_over(tape: SoundTape, onset: float) -> tuple[YieldWatch, float | None]:
    """Run a yield watch frame by frame, ``speaking`` read off the tape as a VAD would
    (any sound in the frame), from the frame holding the caller's onset."""
    watch = YieldWatch(turn=0, after="interruption", onset_t=onset, window_s=2.0)
    t = int(onset / FRAME_S) * FRAME_S
    result = None
    while result is None:
        speaking = tape.last_sound(t, t + FRAME_S) is not None
        result = watch.frame(t, t + FRAME_S, speaking=speaking, caller_active=True)
        t = round(t + FRAME_S, 9)
        assert t < 10.0
    return watch, watch.stop_time(result, tape, FRAME_S)


def test_the_yield_watch_reports_a_stop_200_ms_after_the_onset() -> None:
    tape = _agent_track(speech_until=2.2)
    watch, stop = _watch_over(tape, onset=2.0)
    assert watch.result is not None and watch.result.yielded
    assert stop is not None and abs(stop - 2.2) < 1e-9  # to the sample, not the frame
    assert watch.latency(stop) == 0.2
    assert not watch.already_silent(stop)


def test_the_yield_watch_sees_an_agent_that_talks_on() -> None:
    tape = _agent_track(speech_until=5.5)
    watch, stop = _watch_over(tape, onset=2.0)
    assert watch.result is not None and not watch.result.yielded
    assert stop is None and watch.latency(stop) is None
    assert watch.talk_over_s > 1.9  # the whole window, over the caller


def test_an_agent_that_had_finished_before_the_onset_is_already_silent() -> None:
    tape = _agent_track(speech_until=1.7)
    watch, stop = _watch_over(tape, onset=2.0)
    assert stop is not None and abs(stop - 1.7) < 1e-9
    assert watch.already_silent(stop)


def _clock(window_s: float = 5.0) -> tuple[ResponseClock, list[Event]]:
    events: list[Event] = []
    return ResponseClock(window_s, events.append), events


def test_the_response_latency_is_onset_minus_the_callers_end() -> None:
    clock, events = _clock()
    clock.caller_ended(1.0, "turn")
    assert clock.owed()
    assert clock.answer(1.35, blocked=False) == (0.35, "turn")
    assert not clock.owed()
    assert clock.answer(2.0, blocked=False) == (None, None)  # answered once
    clock.watch(9.0, quiet=True)
    assert events == []


def test_an_agent_turn_over_the_caller_or_before_its_end_answers_nothing() -> None:
    clock, _ = _clock()
    clock.caller_ended(3.0, "turn")
    assert clock.answer(3.5, blocked=True) == (None, None)
    assert clock.answer(2.5, blocked=False) == (None, None)  # began before the end
    clock.agent_turn_ended(3.2)  # the agent talked past the caller's end
    assert clock.answer(4.0, blocked=False) == (None, None)
    assert not clock.owed()


def test_no_answer_within_the_window_is_one_no_response_at_its_end() -> None:
    clock, events = _clock(window_s=5.0)
    clock.caller_ended(10.0, "turn")
    clock.watch(14.9, quiet=True)
    clock.watch(15.5, quiet=False)  # the agent speaks (or the caller): not yet
    assert events == []
    clock.watch(15.6, quiet=True)
    clock.watch(16.0, quiet=True)
    assert len(events) == 1
    ev = events[0]
    assert isinstance(ev, LineEvent) and ev.kind == "no_response" and ev.t == 15.6
    assert ev.data == {"caller_end_t": 10.0, "after": "turn", "window_s": 5.0, "waited_s": 5.6}
    assert clock.answer(17.0, blocked=False) == (None, None)  # given up on


def test_a_backchannel_is_timed_from_but_owed_nothing() -> None:
    clock, events = _clock()
    clock.caller_ended(2.0, "backchannel")
    assert not clock.owed()
    clock.watch(20.0, quiet=True)
    clock.spoke_again(21.0, agent_turn_open=False)
    assert events == []
    assert clock.answer(2.4, blocked=False) == (0.4, "backchannel")


def test_the_caller_speaking_again_while_owed_is_a_no_response() -> None:
    clock, events = _clock()
    clock.caller_ended(1.0, "turn")
    clock.spoke_again(2.0, agent_turn_open=True)
    assert events == []
    clock.spoke_again(2.5, agent_turn_open=False)
    assert [e.kind for e in events if isinstance(e, LineEvent)] == ["no_response"]
    assert "spoke again" in events[0].detail  # type: ignore[union-attr]
