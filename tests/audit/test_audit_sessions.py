"""Auditing crafted session logs (written with the real SessionWriter, read back with
read_session): known opportunity and action counts, the turn-end exclusion, shadow and
manual actions, landing positions, baselines and paired tests — and the live
realized-so-far counter giving the same numbers from the same events."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats as sps

from replay.audit.load import load_conversations
from replay.audit.report import build_report
from replay.audit.sessions import condition_of, from_session
from sessions.log import read_session
from sessions.log.models import (
    AgentInfo,
    AgentTurnEnd,
    AgentTurnStart,
    Backchannel,
    Event,
    Header,
    InsertionRecord,
    Interruption,
    Opportunity,
    ShortPause,
    TurnEnd,
    UserTurn,
)
from sessions.log.realized import RealizedCounter, realized
from tests.support.logs import header as log_header
from tests.support.logs import tendencies, write_log


def header(
    session_id: str,
    *,
    scenario: str = "retail",
    alpha: float = 0.5,
    beta: float = 0.5,
    gamma: float = 0.5,
) -> Header:
    """An OpenAI agent's call under the rules policy with a tau-voice shadow."""
    return log_header(
        session_id,
        scenario=scenario,
        agent=AgentInfo(kind="openai", model="test-model"),
        tendencies=tendencies(alpha, beta, gamma),
        policy="rules",
        shadow="tau-voice",
    )


def opp(
    t: float,
    index: int,
    pause: int | None,
    turn: int,
    decision: str = "NOTHING",
    *,
    executed: bool = False,
    mode: str = "auto",
    policy: str = "rules",
) -> Opportunity:
    return Opportunity(
        t=t,
        index=index,
        pause_index=pause,
        turn=turn,
        decision=decision,
        executed=executed,
        mode=mode,
        policy=policy,
    )


def pause(t: float, index: int, turn: int) -> ShortPause:
    return ShortPause(t=t, index=index, silence_start=round(t - 0.2, 3), turn=turn)


def crafted_events() -> list[Event]:
    """Three agent turns with every case the counting rules name."""
    return [
        AgentTurnStart(t=0.0, turn=0),
        pause(1.0, 0, 0),
        opp(1.0, 0, 0, 0, "BACKCHANNEL", mode="shadow", policy="tau-voice"),
        opp(1.0, 1, 0, 0),
        pause(2.0, 1, 0),
        opp(2.0, 2, 1, 0, "BACKCHANNEL", executed=True),
        Backchannel(t=2.0, turn=0),
        # Pause 2 grows into the turn end: neither it nor its shadow twin is an opportunity.
        pause(3.0, 2, 0),
        opp(3.0, 3, 2, 0, "INTERRUPT", mode="shadow", policy="tau-voice"),
        opp(3.0, 4, 2, 0),
        TurnEnd(t=3.3, silence_start=2.8, turn=0, short_pause_index=2),
        AgentTurnEnd(t=3.3, turn=0, text="...", spoken="..."),
        UserTurn(
            t=4.0,
            turn=0,
            original="I want the refund",
            rendered="um, I want the- the refund",
            insertions=[
                InsertionRecord(index=0, kind="filler", token="um,"),
                InsertionRecord(index=2, kind="repetition", token="the-"),
            ],
            alpha=0.5,
        ),
        AgentTurnStart(t=5.0, turn=1),
        pause(6.0, 3, 1),
        opp(6.0, 5, 3, 1),
        pause(7.0, 4, 1),
        opp(7.0, 6, 4, 1, "INTERRUPT", executed=True),
        Interruption(t=7.0, turn=1, trigger="auto"),
        # The interruption ended the turn, so its pause grew into a turn end: still counted.
        TurnEnd(t=7.3, silence_start=6.8, turn=1, short_pause_index=4),
        AgentTurnEnd(t=7.3, turn=1, text="...", spoken="...", interrupted=True),
        UserTurn(t=7.5, turn=1, source="interruption", original="Wait.", rendered="Wait."),
        AgentTurnStart(t=9.0, turn=2),
        opp(10.0, 7, None, 2),  # a polling policy's consultation: no pause
        Interruption(t=11.0, turn=2, trigger="manual"),
        Backchannel(t=11.5, turn=2, trigger="manual"),
        AgentTurnEnd(t=12.0, turn=2, text="...", spoken="..."),
    ]


@pytest.fixture
def crafted(tmp_path: Path) -> Path:
    return write_log(tmp_path / "one.jsonl", crafted_events(), header("one"))


def test_counts_from_a_crafted_log(crafted: Path) -> None:
    conv = from_session(read_session(crafted))
    assert conv.agent_turns == 3
    assert conv.opportunities == 5  # pauses 0, 1, 3, 4 and one consultation; pause 2 is out
    assert conv.interruptions.actions == 1
    assert conv.backchannels.actions == 1
    assert conv.interruptions.positions == [2]  # turn 1's second opportunity
    assert conv.backchannels.positions == [2]
    assert conv.interruptions.per_agent_turn == [0, 1, 0]
    assert conv.backchannels.per_agent_turn == [1, 0, 0]
    assert (conv.interruptions.manual, conv.backchannels.manual) == (1, 1)
    assert (conv.interruptions.auto_events, conv.backchannels.auto_events) == (1, 1)
    assert conv.pause_events == 5
    shadow = conv.shadows["tau-voice"]
    assert (shadow.opportunities, shadow.interruptions, shadow.backchannels) == (1, 0, 1)
    first = conv.turns[0]
    assert (first.words, first.fillers, first.repetitions, first.initial_filler) == (
        6,
        1,
        1,
        True,
    )


def test_rows_of_a_crafted_log(crafted: Path) -> None:
    convs, warnings = load_conversations([crafted])
    assert warnings == []
    report = build_report(convs, ["alpha", "beta", "gamma", "policy", "model"], resamples=100)
    cond = {"alpha": 0.5, "beta": 0.5, "gamma": 0.5, "policy": "rules", "model": "test-model"}
    rows = {(r["behavior"], r["mode"]): r for r in report.turn_taking}
    cut = rows[("interruption", "auto")]
    assert cut["condition"] == cond
    assert (cut["opportunities"], cut["actions"], cut["agent_turns"], cut["manual"]) == (5, 1, 3, 1)
    assert cut["per_opportunity"] == pytest.approx(1 / 5)
    assert cut["per_turn"] == pytest.approx(1 / 3)
    assert cut["positions"] == {"2": 1} and cut["first_share"] == 0.0
    bc = rows[("backchannel", "auto")]
    assert (bc["opportunities"], bc["actions"], bc["manual"]) == (5, 1, 1)
    shadow_bc = rows[("backchannel", "shadow")]
    assert shadow_bc["policy"] == "tau-voice"
    assert (shadow_bc["opportunities"], shadow_bc["actions"]) == (1, 1)
    (dis,) = report.disfluency
    assert (dis["turns"], dis["words"], dis["fillers"], dis["repetitions"]) == (2, 7, 1, 1)


def test_the_live_counter_agrees_with_the_audit(crafted: Path) -> None:
    events = read_session(crafted).events
    snap = realized(events)
    conv = from_session(read_session(crafted))
    assert snap.agent_turns == conv.agent_turns
    assert snap.opportunities == conv.opportunities
    assert snap.interruptions == conv.interruptions.actions
    assert snap.backchannels == conv.backchannels.actions
    assert (snap.manual_interruptions, snap.manual_backchannels) == (1, 1)
    assert (snap.shadow_opportunities, snap.shadow_backchannels, snap.shadow_interruptions) == (
        1,
        1,
        0,
    )
    assert snap.interruptions_per_turn == pytest.approx(1 / 3)
    assert snap.backchannels_per_opportunity == pytest.approx(1 / 5)
    assert snap.line() == (
        "agent turns 3 · opportunities 5 · interruptions 1 (0.33/turn, 20%) +1 manual"
        " · backchannels 1 (0.33/turn, 20%) +1 manual"
    )


def test_the_live_counter_takes_an_opportunity_back_at_its_turn_end() -> None:
    counter = RealizedCounter()
    counter.feed(AgentTurnStart(t=0.0, turn=0))
    counter.feed(pause(1.0, 0, 0))
    assert counter.feed(opp(1.0, 0, 0, 0)).opportunities == 1
    assert counter.feed(TurnEnd(t=1.3, silence_start=0.8, short_pause_index=0)).opportunities == 0
    assert realized([]).line() == (
        "agent turns 0 · opportunities 0 · interruptions 0 · backchannels 0"
    )


def batch(tmp_path: Path, counts: dict[tuple[float, str], int]) -> Path:
    """One log per (β, scenario) with that many executed interruptions (γ = 0, α = 0)."""
    folder = tmp_path / "batch"
    for (beta, scenario), n in counts.items():
        events: list[Event] = []
        for k in range(max(n, 1) + 1):
            events.append(AgentTurnStart(t=10.0 * k, turn=k))
            events.append(pause(10.0 * k + 1, k, k))
            events.append(
                opp(10.0 * k + 1, k, k, k, "INTERRUPT" if k < n else "NOTHING", executed=k < n)
            )
        head = header(f"{scenario}-{beta}", scenario=scenario, alpha=0.0, beta=beta, gamma=0.0)
        write_log(folder / f"{scenario}_b{beta}.jsonl", events, head)
    return folder


def test_paired_tests_find_the_dial_at_zero_baseline(tmp_path: Path) -> None:
    base = {"s1": 0, "s2": 1, "s3": 0, "s4": 2, "s5": 0, "s6": 1}
    treated = {"s1": 3, "s2": 4, "s3": 2, "s4": 2, "s5": 5, "s6": 3}
    counts = {(0.0, s): n for s, n in base.items()} | {(0.7, s): n for s, n in treated.items()}
    convs, _ = load_conversations([batch(tmp_path, counts)])
    report = build_report(convs, ["beta"], resamples=200, seed=3)
    (row,) = [r for r in report.tests if r["test"] == "wilcoxon" and r["metric"] == "interruptions"]
    assert row["condition"] == {"beta": 0.7} and row["baseline"] == {"beta": 0.0}
    d = [treated[s] - base[s] for s in sorted(base)]
    assert (row["pairs"], row["nonzero"]) == (6, 5)
    assert row["mean_diff"] == pytest.approx(sum(d) / 6)
    assert row["p"] == pytest.approx(sps.wilcoxon(d).pvalue)
    assert row["w"] == 0.0
    assert row["paired_by"] == "session" and row["note"] is None and row["unpaired"] == 0
    # These logs have no word timings: no speech to measure the negative control on.
    assert not [r for r in report.tests if r["metric"] == "pauses_per_min_before_action"]
    (trend,) = [r for r in report.tests if r["test"] == "kendall_tau_b"]
    assert trend["field"] == "beta" and trend["levels"] == [0.0, 0.7]
    assert trend["tau_b"] > 0


def test_two_sessions_with_one_key_are_left_out_not_summed(tmp_path: Path) -> None:
    counts = {(0.0, "a"): 0, (0.0, "b"): 1, (0.5, "a"): 2, (0.5, "b"): 2}
    folder = batch(tmp_path, counts)
    # A second log of scenario "a" at β = 0.5 with the same (absent) seed: which of the
    # two is the session that ran at β = 0 cannot be told, so neither pairs.
    extra: list[Event] = [
        AgentTurnStart(t=0.0, turn=0),
        pause(1.0, 0, 0),
        opp(1.0, 0, 0, 0, "INTERRUPT", executed=True),
    ]
    head = header("a-run2", scenario="a", alpha=0.0, beta=0.5, gamma=0.0)
    write_log(folder / "a_b0.5_run2.jsonl", extra, head)
    convs, _ = load_conversations([folder])
    report = build_report(convs, ["beta"], resamples=50)
    (row,) = [r for r in report.tests if r["metric"] == "interruptions"]
    assert (row["pairs"], row["unpaired"]) == (1, 3)  # a@0.5 twice, a@0 alone
    assert row["mean_diff"] == pytest.approx(2 - 1)
    assert row["note"] is not None and "only 1 pair" in row["note"]


def test_any_header_path_is_a_condition_field(crafted: Path) -> None:
    conv = from_session(read_session(crafted))
    assert condition_of(conv, ["speech.tts", "shadow", "batch.user", "beta"]) == {
        "speech.tts": "text",
        "shadow": "tau-voice",
        "batch.user": None,
        "beta": 0.5,
    }
