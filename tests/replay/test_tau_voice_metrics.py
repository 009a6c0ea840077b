"""τ-Voice's interaction panel from ticks: the golden file bit for bit, and each
definition on hand-built tick patterns."""

from __future__ import annotations

import json

import pytest

from replay.load import load_paths
from replay.tau2.tau_voice_metrics import (
    COUNT_FIELDS,
    METRIC_FIELDS,
    events_for,
    metrics_for_timelines,
)
from replay.tau2.ticks import timeline_from_tau2
from tests.conftest import TAU2_FIXTURES

from .tickspec import ticks


def panel(agent: str, user: str, **kw: object) -> dict[str, object]:
    tl = timeline_from_tau2(ticks(agent, user, **kw), 0.2)  # type: ignore[arg-type]
    result = metrics_for_timelines([tl])
    assert result is not None
    return result


def outcomes(agent: str, user: str, **kw: object) -> list[str]:
    tl = timeline_from_tau2(ticks(agent, user, **kw), 0.2)  # type: ignore[arg-type]
    return [e.outcome for e in events_for(tl)]


def test_equals_the_published_golden_metrics_exactly() -> None:
    trials = load_paths([TAU2_FIXTURES / "voice_full_duplex"])
    got = metrics_for_timelines([t.ticks for t in trials if t.ticks is not None])
    expected = json.loads((TAU2_FIXTURES / "voice_full_duplex.expected_metrics.json").read_text())
    assert got is not None and got == expected  # same names, same floats, same counts
    assert list(got) == [*METRIC_FIELDS, "counts"]
    assert list(got["counts"]) == list(COUNT_FIELDS)


def test_response_latency_is_the_gap_to_the_agent_start() -> None:
    result = panel("..........AAAAA.....", "UUUUU...............")
    assert result["response_latency_mean"] == 1.0 and result["response_rate"] == 1.0
    assert result["counts"]["response_total"] == 1  # type: ignore[index]


def test_user_speaking_again_first_is_no_response() -> None:
    got = outcomes("..........................AAA...", "UUUUU..........UUUUU............")
    assert got == ["no_response", "response"]


def test_last_user_turn_with_nobody_after_is_not_scored() -> None:
    assert outcomes("", "UUUUU.....") == []


def test_yield_latency_counts_ticks_until_the_agent_is_silent() -> None:
    result = panel("AAAAAAA.............AAA..", "....UUUUUU...............")
    assert result["yield_rate"] == 1.0
    assert result["yield_latency_mean"] == pytest.approx(0.6)


def test_agent_talking_through_the_window_is_no_yield() -> None:
    result = panel("AAAAAAAAAAAAAAAAAAAA..", "..UUUU................")
    assert result["yield_rate"] == 0.0 and result["yield_latency_mean"] is None


def test_backchannel_talked_through_is_correct_stopping_is_an_error() -> None:
    through = panel("AAAAAAAAAAAAAAA..", "...UU............", actions={3: "backchannel"})
    assert through["selectivity_backchannel"] == 1.0
    stopped = panel("AAAAA............", "...UU............", actions={3: "backchannel"})
    assert stopped["selectivity_backchannel"] == 0.0
    assert stopped["counts"]["backchannel_total"] == 1  # type: ignore[index]


def test_vocal_tic_during_agent_speech_the_agent_stops_for_is_an_error() -> None:
    got = outcomes("AAAAA........", "...UU........", inserts={3: ("vocal_tic", "[cough]")})
    assert "vocal_tic_error" in got and "yield" not in got


def test_aside_in_silence_ignored_is_correct_answered_is_an_error() -> None:
    ignored = outcomes(
        "AAA..................", "......", source_inserts={6: ("non_directed_phrase", "Hold on.")}
    )
    assert ignored == ["non_directed_correct"]
    answered = outcomes(
        "AAA.......AAA..", "......", source_inserts={6: ("non_directed_phrase", "Hold on.")}
    )
    assert answered == ["non_directed_error"]


def test_agent_starting_over_the_user_counts_per_user_turn() -> None:
    # The agent starts over the user (tick 6) and stops before the user does; the user's
    # turn ends in silence, so it is response-eligible and later answered.
    result = panel("......AA..........AAA..", "UUUUUUUU...............")
    assert result["counts"]["agent_interrupts_count"] == 1  # type: ignore[index]
    assert result["counts"]["response_total"] == 1  # type: ignore[index]
    assert result["agent_interruption_rate"] == 1.0
    over_the_end = panel("......AAAA..........", "UUUUUUUU............")
    assert over_the_end["counts"]["response_total"] == 0  # type: ignore[index]
    assert over_the_end["agent_interruption_rate"] is None


def test_no_events_gives_none_rates_and_zero_counts() -> None:
    result = panel("AAAA", "")
    assert all(result[f] is None for f in METRIC_FIELDS)
    assert result["counts"]["n_simulations"] == 1  # type: ignore[index]
    assert metrics_for_timelines([]) is None
