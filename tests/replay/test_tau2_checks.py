"""replay/tau2/checks: τ2 fields of the wrong type or range never reach the importer
silently; real τ2 files pass untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay.errors import LoadError
from replay.load import load_batch
from tests.conftest import TAU2_FIXTURES


def _sim(**fields: Any) -> dict[str, Any]:
    return {
        "id": "s1",
        "task_id": "t1",
        "messages": [
            {"role": "assistant", "content": "Hello, how can I help?", "turn_idx": 0},
            {"role": "user", "content": "Change my flight.", "turn_idx": 1},
        ],
        **fields,
    }


def _load(tmp_path: Path, *sims: dict[str, Any]) -> tuple[list[Any], list[str]]:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"info": {}, "tasks": [], "simulations": list(sims)}))
    batch = load_batch([path])
    return batch.trials, batch.warnings


def test_a_good_simulation_gives_no_warning(tmp_path: Path) -> None:
    trials, warnings = _load(tmp_path, _sim(duration=12.5, reward_info={"reward": 1.0}))
    assert warnings == []
    assert trials[0].duration == 12.5 and trials[0].reward == 1.0


def test_a_bad_message_is_read_as_empty_and_counted(tmp_path: Path) -> None:
    sim = _sim()
    sim["messages"].insert(0, {"role": "assistant", "content": "x", "tool_calls": True})
    sim["messages"].append({"role": "user", "content": 5})
    trials, warnings = _load(tmp_path, sim)
    assert [t.text for t in trials[0].turns] == ["Hello, how can I help?", "Change my flight."]
    assert len(warnings) == 1
    assert "$.simulations[0].messages: read as empty 2 of 4 bad record(s)" in warnings[0]
    assert "[0] tool_calls" in warnings[0]


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("duration", 10**19, "$.simulations[0].duration"),
        ("duration", -3, "$.simulations[0].duration"),
        ("start_time", 5, "$.simulations[0].start_time"),
        ("reward_info", {"reward": "high"}, "$.simulations[0].reward_info.reward"),
        ("reward_info", [1], "$.simulations[0].reward_info"),
        ("review", {"agent_error": "yes"}, "$.simulations[0].review.agent_error"),
    ],
)
def test_a_bad_field_is_ignored_with_its_json_path(
    tmp_path: Path, field: str, value: object, where: str
) -> None:
    trials, warnings = _load(tmp_path, _sim(**{field: value}))
    assert len(trials) == 1
    assert any(f"{where}: ignored" in w for w in warnings), warnings
    assert trials[0].reward is None
    assert trials[0].duration is None or 0 <= trials[0].duration < 1e7


def test_bad_checks_are_skipped_and_counted(tmp_path: Path) -> None:
    reward_info = {
        "reward": 0.0,
        "nl_assertions": [
            {"nl_assertion": "agent apologizes", "met": True},
            {"nl_assertion": ["not", "text"], "met": True},
            "not an object",
        ],
    }
    trials, warnings = _load(tmp_path, _sim(reward_info=reward_info))
    assert any("reward_info.nl_assertions: skipped 2 of 3" in w for w in warnings), warnings
    names = [v.name for v in trials[0].verdicts]
    assert "nl 1: agent apologizes" in names


def test_an_unusable_id_is_one_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"results.json: \$.simulations\[0\].id: expected"):
        _load(tmp_path, _sim(id={"not": "an id"}))


def test_a_bad_tick_keeps_its_place_on_the_timeline(tmp_path: Path) -> None:
    tick = {"user_chunk": {"contains_speech": True}, "agent_chunk": None}
    quiet = {"user_chunk": None, "agent_chunk": {"contains_speech": True}}
    ticks = [tick, tick, {"user_chunk": {"contains_speech": "yes"}}, quiet, quiet]
    sim = {"id": "s1", "task_id": "t1", "ticks": ticks}
    trials, warnings = _load(tmp_path, sim)
    assert trials[0].ticks is not None and len(trials[0].ticks) == 5
    assert any("ticks: read as empty 1 of 5" in w for w in warnings), warnings


@pytest.mark.parametrize("name", ["text_airline_results.json", "voice_full_duplex"])
def test_real_tau2_files_pass_the_checks_untouched(name: str) -> None:
    batch = load_batch([TAU2_FIXTURES / name])
    assert batch.trials
    assert not [w for w in batch.warnings if "ignored (" in w or "bad record" in w]


def test_a_tick_length_out_of_range_falls_back_with_a_warning(tmp_path: Path) -> None:
    tick = {"user_chunk": {"contains_speech": True}, "agent_chunk": None}
    quiet = {"user_chunk": None, "agent_chunk": {"contains_speech": True}}
    sim = {"id": "s1", "task_id": "t1", "ticks": [tick, tick, quiet, quiet, tick]}
    path = tmp_path / "results.json"
    info = {"audio_native_config": {"tick_duration_seconds": 5e-324}}
    path.write_text(json.dumps({"info": info, "tasks": [], "simulations": [sim]}))
    batch = load_batch([path])  # 5e-324 s ticks made every window infinite
    assert batch.trials[0].ticks is not None and batch.trials[0].ticks.tick_s == 0.2
    assert any("tick_duration_seconds: ignored" in w for w in batch.warnings), batch.warnings
