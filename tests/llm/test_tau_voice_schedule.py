"""When tau-Voice consults its classifiers: every 2.0 s of the agent's turn (pure)."""

from __future__ import annotations

import pytest

from sessions.policies.tau_voice import TauVoiceSchedule, due_times, next_due_time


def test_due_times_on_the_two_second_grid() -> None:
    assert due_times(10.0, 11.9, None) == []
    assert due_times(10.0, 12.0, None) == [12.0]
    assert due_times(10.0, 16.5, 12.0) == [14.0, 16.0]
    assert due_times(10.0, 15.9, 14.0) == []
    assert due_times(0.1, 4.1, 4.1) == []  # a consult at a grid point covers it
    assert due_times(0.0, 3.0, None, interval=1.0) == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError):
        due_times(0.0, 1.0, None, interval=0)


def test_next_due_time() -> None:
    assert next_due_time(10.0, 10.0) == 12.0
    assert next_due_time(10.0, 12.0) == 14.0
    assert next_due_time(10.0, 13.3) == 14.0


def test_schedule_polled_every_frame() -> None:
    schedule = TauVoiceSchedule()
    frames = [i * 0.032 for i in range(int(7.0 / 0.032))]  # 7 s of 32 ms frames
    fired = [t for t in frames if schedule.due(t, turn_onset=0.0)]
    assert len(fired) == 3  # at 2, 4 and 6 s
    assert all(abs(f - g) < 0.033 for f, g in zip(fired, (2.0, 4.0, 6.0), strict=True))


def test_schedule_skips_while_the_user_speaks_and_restarts_per_turn() -> None:
    schedule = TauVoiceSchedule()
    assert not schedule.due(2.0, 0.0, user_busy=True)
    assert schedule.due(2.5, 0.0)  # still due once the user is quiet
    assert not schedule.due(3.9, 0.0)
    assert not schedule.due(10.0, 9.0)  # new turn at 9 s: next at 11 s
    assert schedule.due(11.0, 9.0)


def test_a_late_caller_gets_one_consultation_not_a_backlog() -> None:
    schedule = TauVoiceSchedule()
    assert schedule.due(9.0, 0.0)
    assert not schedule.due(9.5, 0.0)
    assert schedule.due(10.0, 0.0)
