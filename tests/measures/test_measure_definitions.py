"""The new agent-side measures from a hand-made log whose numbers are known (no audio):
already-silent acts left out (an older log's "yield" before the onset too), response rate
with no_response events, agent interruptions, dead air, tic and side-talk selectivity."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.audit.agent_measures import call_of_session, call_row
from sessions.log import read_session
from sessions.log.models import (
    AgentInfo,
    AgentTurnEnd,
    AgentTurnStart,
    AgentYield,
    Backchannel,
    CallerSound,
    EndEvent,
    Event,
    Header,
    LineEvent,
    UserTurn,
)
from tests.support.logs import header, tendencies, write_log


def head() -> Header:
    return header(
        "k",
        scenario="retail",
        agent=AgentInfo(kind="twilio", name="bot"),
        tendencies=tendencies(0.0, 0.5, 0.5),
        seeds={"seed": 1},
    )


def agent_turn(n: int, on: float, end: float, **start: object) -> list[Event]:
    return [
        AgentTurnStart(t=on, turn=n, **start),
        AgentTurnEnd(t=end + 0.5, turn=n, text="x", spoken="x", end_t=end),
    ]


def user(n: int, on: float, end: float) -> UserTurn:
    return UserTurn(t=on, turn=n, original="y", rendered="y", end_t=end)


def events() -> list[Event]:
    """Agent 0.5–3, caller 4–6, agent 6.8–12 (answers 0.8 s), backchannel at 8 (talked
    through), a backchannel at 12.3 after it finished (already silent), an older log's
    'false yield' at 12.4 stopped before its onset, caller 14–15, no answer (no_response
    at 20), caller 21–22, agent starts at 21.5 inside it (an agent interruption) to 25,
    a tic at 9 it talked through, side talk at 26 it answered; the call ends at 30."""
    return [
        *agent_turn(0, 0.5, 3.0),
        user(0, 4.0, 6.0),
        *agent_turn(1, 6.8, 12.0, response_latency_s=0.8, response_to="turn"),
        Backchannel(t=8.0, turn=1, token="mm-hmm"),
        AgentYield(t=9.0, turn=1, after="backchannel", onset_t=8.0, window_s=1.0, yielded=False),
        CallerSound(t=9.0, kind="vocal_tic", turn=1, end_t=9.18),
        AgentYield(t=10.0, turn=1, after="vocal_tic", onset_t=9.0, window_s=1.0, yielded=False),
        Backchannel(t=12.3, turn=1, token="mm-hmm"),
        AgentYield(
            t=12.8,
            turn=1,
            after="backchannel",
            onset_t=12.3,
            window_s=1.0,
            yielded=False,
            stop_t=12.0,
            already_silent=True,
        ),
        AgentYield(
            t=12.9,
            turn=1,
            after="backchannel",
            onset_t=12.4,
            window_s=1.0,
            yielded=True,
            stop_t=12.0,
            latency_s=0.0,
        ),
        user(1, 14.0, 15.0),
        LineEvent(t=20.0, kind="no_response", data={"caller_end_t": 15.0, "after": "turn"}),
        user(2, 21.0, 22.0),
        *agent_turn(2, 21.5, 25.0, over_caller=True),
        CallerSound(t=26.0, kind="non_directed", end_t=27.0, level_db=-12.0, text="hold on"),
        AgentYield(
            t=27.5,
            turn=-1,
            after="non_directed",
            onset_t=26.0,
            window_s=2.0,
            yielded=False,
            responded=True,
        ),
        *agent_turn(3, 27.5, 28.0),
        EndEvent(t=30.0, reason="hangup"),
    ]


def test_the_new_measures_from_a_known_log(tmp_path: Path) -> None:
    log = write_log(tmp_path / "k.jsonl", events(), head())
    call = call_of_session(read_session(log))
    assert call is not None
    row = call_row(call)
    # Backchannels: one talked through; two found the agent already silent (one logged
    # so, one an older log's "yield" whose stop precedes the onset): not scored.
    assert row["backchannel_total"] == 1 and row["false_yields"] == 0
    assert row["already_silent"] == 2 and row["selectivity_backchannel"] == 1.0
    # One caller turn answered, one no_response; the third was interrupted.
    assert row["responses"] == 1 and row["no_responses"] == 1 and row["response_total"] == 2
    assert row["response_rate"] == pytest.approx(0.5)
    assert row["response_latency_mean"] == pytest.approx(0.8)
    assert row["agent_interruptions"] == 1 and row["agent_interruption_rate"] == 0.5
    # Floor: 0.5–3, 4–6, 6.8–12, 14–15, 21–25 (the caller's 21–22 inside), 27.5–28;
    # dead air: 0.5 + 1 + 0.8 + 2 + 6 + 2.5 + 2 = 14.8 s of 30; longest 6 s; one over 3 s.
    assert row["dead_air_s"] == pytest.approx(14.8)
    assert row["dead_air_fraction"] == pytest.approx(14.8 / 30)
    assert row["dead_air_max_gap_s"] == pytest.approx(6.0)
    assert row["dead_air_long_gaps"] == 1
    # A tic talked through (correct); side talk answered in silence (an error).
    assert row["vocal_tic_total"] == 1 and row["selectivity_vocal_tic"] == 1.0
    assert row["non_directed_total"] == 1 and row["selectivity_non_directed"] == 0.0
