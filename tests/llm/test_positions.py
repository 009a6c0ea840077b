"""Positions: caller replies of recorded calls, with the history the simulator saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompts.user_sim import system_prompt
from replay.errors import LoadError
from replay.load import load_path
from replay.model import Trial
from replay.prompted.positions import HistoryItem, Position, extract, scenario_system_prompt
from replay.prompted.positions_io import read_positions, write_positions
from tests.llm.calls import AIRLINE, write_call


def trial(
    tmp_path: Path, name: str = "call-a", scenario: str = "airline-rebooking", failed: bool = False
) -> Trial:
    path = write_call(tmp_path / f"{name}.jsonl", AIRLINE, scenario=scenario, failed=failed)
    (t,) = load_path(path).trials
    return t


def test_positions_carry_the_history_the_simulator_saw(tmp_path: Path) -> None:
    result = extract([trial(tmp_path)], scenario_system_prompt)
    assert [p.reply for p in result.positions] == [
        "Sure, it's K7QX2M.",
        "Yes please, an aisle seat if you can.",
        "No, that's all, thanks.",
    ]  # the interruption line is not a position
    second = result.positions[1]
    assert second.id == "call-a:u2" and second.turn == 2
    assert second.history == (
        HistoryItem("assistant", AIRLINE[0][1]),
        HistoryItem("user", "Sure, it's K7QX2M."),
        HistoryItem("assistant", "Thank you. Your morning flight was cancelled.", truncated=True),
        HistoryItem("user", "Sorry, is there a direct one?"),
        HistoryItem("assistant", "Yes, at two fifteen. Shall I book it?"),
    )
    from sessions.scenarios.store import load_scenario

    user = load_scenario("airline-rebooking").user
    assert second.system == system_prompt(user.goal, user.persona)
    assert second.scenario == "airline-rebooking" and result.conversations == 1


def test_sampling_per_conversation_is_seeded_and_keeps_turn_order(tmp_path: Path) -> None:
    trials = [trial(tmp_path, f"call-{i}") for i in range(6)]
    picks = {
        seed: [
            p.id
            for p in extract(
                trials, scenario_system_prompt, per_conversation=2, seed=seed
            ).positions
        ]
        for seed in range(5)
    }
    assert all(len(ids) == 12 for ids in picks.values())
    assert picks[3] == [
        p.id for p in extract(trials, scenario_system_prompt, per_conversation=2, seed=3).positions
    ]
    assert len({tuple(v) for v in picks.values()}) > 1
    for ids in picks.values():
        for i in range(0, 12, 2):
            a, b = ids[i], ids[i + 1]
            assert a.split(":")[0] == b.split(":")[0]
            assert int(a.split(":u")[1]) < int(b.split(":u")[1])


def test_failed_calls_and_unknown_scenarios_are_skipped(tmp_path: Path) -> None:
    failed = trial(tmp_path, "failed", failed=True)
    unknown = trial(tmp_path, "unknown", scenario="no-such-scenario")
    result = extract([failed, unknown], scenario_system_prompt)
    assert result.positions == []
    assert any("failed" in s for s in result.skipped)
    assert any("no-such-scenario" in s for s in result.skipped)
    assert len(extract([failed], scenario_system_prompt, include_failed=True).positions) == 3


def test_positions_file_round_trips(tmp_path: Path) -> None:
    positions = extract([trial(tmp_path)], scenario_system_prompt).positions
    out = tmp_path / "positions.jsonl"
    assert write_positions(out, positions) == 3
    assert read_positions(out) == positions


def test_bad_positions_files_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema": "cutin.positions/1", "id": "x"}\n', encoding="utf-8")
    with pytest.raises(LoadError, match=r"bad.jsonl:1: missing field"):
        read_positions(bad)
    bad.write_text("not json\n", encoding="utf-8")
    with pytest.raises(LoadError, match=r"bad.jsonl:1"):
        read_positions(bad)
    p = Position("a", "c", "", None, 0, "sys", (), "hi")
    write_positions(bad, [p, p])
    with pytest.raises(LoadError, match="duplicate position id"):
        read_positions(bad)
