"""The line far end's measuring parts, each on its own, on inputs whose truth is known by
construction (no engine, no line, no models): the yield watch over a synthetic agent
track, the yield watches part on a hand-made call context, and the response clock over
call times."""

from __future__ import annotations

import random

import numpy as np

from controls.pauses import PauseDetector
from controls.tendencies import Tendencies
from sessions.call.config import CallConfig
from sessions.call.context import CallClock, CallContext, Dials
from sessions.call.far_ends.yield_watch import YieldWatch
from sessions.call.far_ends.yield_watches import YieldWatches
from sessions.call.line_parts import LineTurn
from sessions.call.response_clock import ResponseClock
from sessions.call.sound_tape import SoundTape
from sessions.log.models import AgentYield, Event, LineEvent
from sessions.scenarios import load_scenario
from sessions.speech import SAMPLE_RATE

FRAME_S = 0.032


def _agent_track(
    speech_until: float, seconds: float = 6.0, *, more: tuple[float, float] | None = None
) -> SoundTape:
    """The agent speaks (a 220 Hz tone at 0.3) from 0.5 s to ``speech_until``, exactly to
    the sample, then is silent (``more``: and speaks again over that span)."""
    n = round(seconds * SAMPLE_RATE)
    t = np.arange(n) / SAMPLE_RATE
    tone = 0.3 * np.sin(2 * np.pi * 220 * t)
    # A sine crosses zero: keep every sample of the speech over the sound level.
    tone = np.where(np.abs(tone) < 0.05, 0.05, tone).astype(np.float32)
    audio = np.zeros(n, np.float32)
    for a, b in [(0.5, speech_until)] + ([more] if more is not None else []):
        i, j = round(a * SAMPLE_RATE), round(b * SAMPLE_RATE)
        audio[i:j] = tone[i:j]
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


def _context(events: list[Event]) -> CallContext:
    """A call context made by hand: what the engine would hand its parts."""
    config = CallConfig(scenario=load_scenario("retail-order-change"))
    dials = Tendencies(0.0, 1.0, 0.0)
    return CallContext(
        config=config,
        clock=CallClock(
            now=lambda: 0.0, ended=lambda: False, monotonic_at=lambda t: t, virtual=True
        ),
        dials=Dials(
            read=lambda: dials, effective=lambda: dials, adapter=lambda: None, emit=events.append
        ),
        history=[],
        rng=random.Random(0),
        pauses=PauseDetector(),
        emit=events.append,
        schedule=lambda at, command: None,
        end=lambda reason: None,
        interrupt=lambda t, at: None,
    )


def _yields_over(tape: SoundTape, onset: float, gap_at: float | None = None) -> list[AgentYield]:
    """The yield watches part over the tape after a barge-in at ``onset``; ``gap_at``: the
    line's playout ran dry there (a gap in delivery, not a clear)."""
    events: list[Event] = []
    turn = LineTurn(index=0, onset=0.5)

    def stall_start(since: float, until: float) -> float | None:
        return gap_at if gap_at is not None and since <= gap_at + 0.1 and gap_at < until else None

    part = YieldWatches(_context(events), tape, lambda: [], stall_start, lambda: turn)
    part.start(turn, "interruption", onset, 2.0)
    t = int(onset / FRAME_S) * FRAME_S
    while t < 5.8:
        speaking = tape.last_sound(t, t + FRAME_S) is not None
        part.frame(t, t + FRAME_S, speaking=speaking, caller_active=True)
        t = round(t + FRAME_S, 9)
    assert not part.watches and not part.settling_stops
    return [e for e in events if isinstance(e, AgentYield)]


def test_the_yield_watches_report_one_agent_yield_200_ms_after_the_onset() -> None:
    (ev,) = _yields_over(_agent_track(speech_until=2.2), onset=2.0)
    assert ev.yielded and ev.stop_t == 2.2 and ev.latency_s == 0.2
    assert ev.onset_t == 2.0 and ev.after == "interruption"
    # It spoke on for 200 ms over the caller (to the frame), and the stop was settled
    # SETTLE_S after the watch decided (a 500 ms silence from the frame at 2.208 s).
    assert ev.resumed and ev.talk_over_s == 0.208 and ev.t == 3.22


def test_a_silence_in_a_gap_of_delivery_that_goes_on_is_no_yield() -> None:
    """The agent's audio runs dry at 2.2 s and comes back at 2.9 s (a 700 ms stall): with
    no gap known that silence is a stop; with the gap it is the turn going on."""
    tape = _agent_track(speech_until=2.2, more=(2.9, 5.5))
    (stop,) = _yields_over(tape, onset=2.0)
    assert stop.yielded and stop.stop_t == 2.2
    (went_on,) = _yields_over(tape, onset=2.0, gap_at=2.2)
    assert not went_on.yielded and went_on.stop_t is None and went_on.resumed
