"""Paired tests pair sessions (scenario · run · base seed), not scenarios; the negative
control counts pauses per minute of agent speech before any action in the turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutin_tui.cli import main
from replay.audit.load import load_conversations
from replay.audit.report import build_report, pairs_note
from replay.audit.sessions import from_session, pair_key
from sessions.log import read_session
from sessions.log.models import (
    AgentTurnStart,
    AgentWords,
    Event,
    Opportunity,
    ShortPause,
    TurnEnd,
    WordTiming,
)
from tests.support.logs import header, write_log


def words(turn: int, first: int, spans: list[tuple[float, float]]) -> AgentWords:
    return AgentWords(
        t=spans[-1][1],
        turn=turn,
        first_index=first,
        words=[WordTiming(word=f"w{first + i}", start=a, end=b) for i, (a, b) in enumerate(spans)],
    )


def test_the_negative_control_stops_at_the_first_action(tmp_path: Path) -> None:
    events: list[Event] = [
        AgentTurnStart(t=0.0, turn=0),
        words(0, 0, [(0.0, 1.0), (1.2, 2.0), (2.5, 3.5)]),
        ShortPause(t=2.2, index=0, silence_start=2.0, turn=0),
        ShortPause(t=3.7, index=1, silence_start=3.5, turn=0),
        TurnEnd(t=4.0, silence_start=3.5, turn=0, short_pause_index=1),  # the turn's end
        AgentTurnStart(t=5.0, turn=1),
        words(1, 0, [(5.0, 6.0), (6.3, 7.0), (7.4, 8.4)]),
        ShortPause(t=6.2, index=2, silence_start=6.0, turn=1),
        ShortPause(t=7.2, index=3, silence_start=7.0, turn=1),
        Opportunity(t=7.2, index=0, pause_index=3, turn=1, decision="INTERRUPT", executed=True),
        ShortPause(t=8.6, index=4, silence_start=8.4, turn=1),  # after the action: not counted
    ]
    head = header("x", scenario="s", tendencies=None)
    conv = from_session(read_session(write_log(tmp_path / "x.jsonl", events, head)))
    assert conv.pause_events == 5
    # Each window ends on a counted silence: turn 0's own end, turn 1's acted-at pause.
    assert conv.pre_action_pauses == 2 + 2
    assert conv.pre_action_speech_s == pytest.approx(2.8 + 1.0 + 0.7)  # w5 clipped at 7.2 s
    assert conv.pauses_per_minute_before_action == pytest.approx(60 * 4 / 4.5)


def test_the_opening_control_is_every_turns_first_six_words(tmp_path: Path) -> None:
    spans = [(float(i), i + 0.5) for i in range(8)]  # 8 words of 0.5 s, 0.5 s apart
    events: list[Event] = [
        AgentTurnStart(t=0.0, turn=0),
        words(0, 0, spans[:4]),
        ShortPause(t=1.7, index=0, silence_start=1.5, turn=0),  # after w1: in
        words(0, 4, spans[4:]),
        ShortPause(t=5.7, index=1, silence_start=5.5, turn=0),  # after w5 (the 6th): in
        ShortPause(t=6.7, index=2, silence_start=6.5, turn=0),  # after w6: out
        # An early action changes nothing here (it does cut the pre-action window).
        Opportunity(t=1.7, index=0, pause_index=0, turn=0, decision="BACKCHANNEL", executed=True),
        AgentTurnStart(t=10.0, turn=1),
        words(1, 0, [(10.0, 10.4), (10.6, 11.0)]),  # a short turn: all of it
        ShortPause(t=11.2, index=3, silence_start=11.0, turn=1),
    ]
    head = header("x", scenario="s", tendencies=None)
    conv = from_session(read_session(write_log(tmp_path / "x.jsonl", events, head)))
    assert conv.opening_pauses == 2 + 1
    assert conv.opening_speech_s == pytest.approx(6 * 0.5 + 0.8)
    assert conv.pauses_per_minute_opening == pytest.approx(60 * 3 / 3.8)


def test_pair_keys_name_the_session_as_logged() -> None:
    batch = {"run": 3, "seed": 7, "batch": "b"}
    none = ("", "", "")
    assert pair_key({"scenario": "s", "batch": batch}) == ("session", *none, "s", "3", "7")
    assert pair_key({"scenario": "s", "seeds": {"seed": 5}}) == ("call", *none, "s", "5")
    tau2 = {"source": "tau2", "scenario": "12", "trial": 0}
    assert pair_key(tau2) == ("tau2", *none, "12", "0")
    assert pair_key({"seeds": {"seed": 5}}) is None
    # The agent is part of the session: the same scenario and run to another agent
    # (kind, name or model) is another session.
    scripted = {"scenario": "s", "batch": batch, "agent": {"kind": "scripted", "name": "A"}}
    line = {"scenario": "s", "batch": batch, "agent": {"kind": "twilio", "name": "A"}}
    assert pair_key(scripted) == ("session", "scripted", "A", "", "s", "3", "7")
    assert pair_key(scripted) != pair_key(line)


def test_the_note_below_six_pairs() -> None:
    note = pairs_note(5)
    assert note is not None and "0.062" in note
    assert pairs_note(6) is None


@pytest.mark.parametrize("paired", [True, False])
def test_runs_of_one_scenario_are_as_many_pairs(tmp_path: Path, paired: bool) -> None:
    out = tmp_path / "b"
    argv = ["simulate", "--scenario", "retail-order-change", "--beta", "0,1", "--gamma", "0"]
    argv += ["--runs", "6", "--out", str(out)] + (["--paired"] if paired else [])
    assert main(argv) == 0
    convs, _ = load_conversations([out])
    report = build_report(convs, ["beta"], resamples=100)
    (row,) = [r for r in report.tests if r["metric"] == "interruptions"]
    assert (row["pairs"], row["unpaired"], row["note"]) == (6, 0, None)
    assert row["same_seed"] is paired
    assert row["p"] is not None and row["p"] < 0.05  # one scenario, six runs: six pairs
    (control,) = [r for r in report.tests if r["metric"] == "pauses_per_min_before_action"]
    assert control["pairs"] == 6
    rows = [r for r in report.turn_taking if r["behavior"] == "interruption"]
    assert all(r["pauses_per_min_before_action"] > 0 for r in rows)


def test_the_table_says_what_was_paired_and_notes_few_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    argv = ["simulate", "--scenario", "retail-order-change", "--beta", "0,1", "--gamma", "0"]
    assert main([*argv, "--runs", "3", "--paired", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["audit", str(out), "--by", "beta"]) == 0
    text = capsys.readouterr().out
    assert "by session (agent · scenario · run · base seed)" in text
    assert "only 3 pairs" in text and "0.25" in text
    assert "negative control" in text
    assert main(["audit", str(out), "--by", "beta", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = [t for t in data["tests"] if t["metric"] == "interruptions"]
    assert row["pairs"] == 3 and row["paired_by"] == "session" and row["same_seed"] is True
