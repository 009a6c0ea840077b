"""controls.PauseDetector on synthetic speech-probability runs of 32 ms frames."""

from __future__ import annotations

import random

import pytest

from controls import PauseDetector, PauseEvent, PauseEventKind

FRAME = 0.032
SPEECH, SILENCE = 0.9, 0.05


def frames(*runs: tuple[int, float]) -> list[tuple[float, float]]:
    """(frame start, probability) for consecutive runs of (frame count, probability)."""
    probs = [prob for count, prob in runs for _ in range(count)]
    return [(round(k * FRAME, 6), p) for k, p in enumerate(probs)]


def feed_one_by_one(
    detector: PauseDetector, run: list[tuple[float, float]]
) -> list[tuple[int, PauseEvent]]:
    """Each event with the index of the frame whose feed() returned it."""
    return [(k, e) for k, (t, p) in enumerate(run) for e in detector.feed(t, p)]


def kinds(events: list[tuple[int, PauseEvent]]) -> list[PauseEventKind]:
    return [e.kind for _, e in events]


def test_nothing_fires_before_the_first_speech() -> None:
    detector = PauseDetector()
    assert feed_one_by_one(detector, frames((40, SILENCE))) == []


def test_speech_start_fires_on_the_first_speech_frame() -> None:
    events = feed_one_by_one(PauseDetector(), frames((5, SILENCE), (3, SPEECH)))
    assert [(k, e.kind, e.t) for k, e in events] == [(5, PauseEventKind.SPEECH_START, 0.16)]


def test_short_pause_fires_in_real_time_at_two_hundred_ms_of_silence() -> None:
    run = frames((10, SPEECH), (12, SILENCE))
    events = feed_one_by_one(PauseDetector(), run)
    assert kinds(events) == [PauseEventKind.SPEECH_START, PauseEventKind.SHORT_PAUSE]
    k, pause = events[1]
    assert pause.silence_start == pytest.approx(10 * FRAME)
    # The frame that completes 200 ms of silence returns the event: the 7th silent one.
    assert k == 10 + 6
    assert pause.silence_start is not None
    assert 0.2 <= pause.t - pause.silence_start < 0.2 + FRAME
    assert pause.index == 0


@pytest.mark.parametrize("gap_frames", [1, 4, 5, 6])  # 32 ms .. 192 ms, ~150 ms among them
def test_a_gap_shorter_than_two_hundred_ms_fires_nothing(gap_frames: int) -> None:
    run = frames((10, SPEECH), (gap_frames, SILENCE), (10, SPEECH))
    assert kinds(feed_one_by_one(PauseDetector(), run)) == [PauseEventKind.SPEECH_START]


def test_turn_end_at_five_hundred_ms_names_the_short_pause_it_grew_from() -> None:
    run = frames(
        (10, SPEECH), (8, SILENCE), (10, SPEECH), (20, SILENCE), (10, SILENCE), (5, SPEECH)
    )
    events = feed_one_by_one(PauseDetector(), run)
    assert kinds(events) == [
        PauseEventKind.SPEECH_START,
        PauseEventKind.SHORT_PAUSE,  # index 0, recovered from
        PauseEventKind.SHORT_PAUSE,  # index 1, grows into the turn end
        PauseEventKind.TURN_END,
        PauseEventKind.SPEECH_START,  # a new turn
    ]
    (_, first), (_, second), (k_end, end), (k_new, _) = events[1:]
    assert (first.index, second.index) == (0, 1)
    assert end.short_pause_index == 1
    assert end.silence_start == second.silence_start == pytest.approx(28 * FRAME)
    assert k_end == 28 + 15  # the 16th silent frame completes 500 ms
    assert end.silence_start is not None
    assert 0.5 <= end.t - end.silence_start < 0.5 + FRAME
    assert k_new == 58


def test_hysteresis_keeps_speech_at_point_four_once_speaking() -> None:
    run = frames((5, SPEECH), (30, 0.4), (20, SILENCE))
    events = feed_one_by_one(PauseDetector(), run)
    assert kinds(events) == [
        PauseEventKind.SPEECH_START,
        PauseEventKind.SHORT_PAUSE,
        PauseEventKind.TURN_END,
    ]
    assert events[1][1].silence_start == pytest.approx(35 * FRAME)


def test_hysteresis_point_four_does_not_start_speech_from_silence() -> None:
    assert feed_one_by_one(PauseDetector(), frames((30, 0.4))) == []
    # Nor does it end a pause that has begun: the short pause still fires on time.
    events = feed_one_by_one(PauseDetector(), frames((5, SPEECH), (2, SILENCE), (10, 0.4)))
    assert kinds(events) == [PauseEventKind.SPEECH_START, PauseEventKind.SHORT_PAUSE]
    assert events[1][1].silence_start == pytest.approx(5 * FRAME)


@pytest.mark.parametrize(("prob", "starts"), [(0.5, True), (0.49, False)])
def test_speech_threshold_edge(prob: float, starts: bool) -> None:
    events = feed_one_by_one(PauseDetector(), frames((3, prob)))
    assert kinds(events) == ([PauseEventKind.SPEECH_START] if starts else [])


@pytest.mark.parametrize(("prob", "keeps"), [(0.35, True), (0.34, False)])
def test_silence_threshold_edge(prob: float, keeps: bool) -> None:
    events = feed_one_by_one(PauseDetector(), frames((3, SPEECH), (10, prob)))
    assert (PauseEventKind.SHORT_PAUSE not in kinds(events)) is keeps


def test_one_short_pause_per_silence_and_no_events_after_turn_end() -> None:
    events = feed_one_by_one(PauseDetector(), frames((3, SPEECH), (100, SILENCE)))
    assert kinds(events) == [
        PauseEventKind.SPEECH_START,
        PauseEventKind.SHORT_PAUSE,
        PauseEventKind.TURN_END,
    ]


def test_feeding_in_bulk_equals_feeding_frame_by_frame() -> None:
    rng = random.Random(5)
    run = [(round(k * FRAME, 6), rng.random()) for k in range(3000)]
    one = [e for _, e in feed_one_by_one(PauseDetector(), run)]
    assert PauseDetector().feed_many(run) == one
    assert len(one) > 10


def test_turn_end_without_a_short_pause_is_impossible_with_default_timers() -> None:
    rng = random.Random(8)
    run = [(round(k * FRAME, 6), rng.choice([SPEECH, SILENCE, 0.4])) for k in range(5000)]
    events = PauseDetector().feed_many(run)
    ends = [e for e in events if e.kind is PauseEventKind.TURN_END]
    assert ends and all(e.short_pause_index is not None for e in ends)


def test_event_as_dict() -> None:
    events = PauseDetector().feed_many(frames((3, SPEECH), (20, SILENCE)))
    assert [e.as_dict()["type"] for e in events] == ["speech_start", "short_pause", "turn_end"]
    assert events[1].as_dict() == {
        "type": "short_pause",
        "t": round(events[1].t, 6),
        "silence_start": 0.096,
        "index": 0,
    }
    assert events[2].as_dict()["short_pause_index"] == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(silence_threshold=0.6, speech_threshold=0.5),
        dict(short_pause_s=0.5, turn_end_s=0.5),
        dict(short_pause_s=0.0),
    ],
)
def test_inconsistent_settings_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        PauseDetector(**kwargs)


def test_reset_forgets_the_turn() -> None:
    detector = PauseDetector()
    detector.feed_many(frames((5, SPEECH)))
    detector.reset()
    assert detector.feed_many([(1.0 + k * FRAME, SILENCE) for k in range(20)]) == []
