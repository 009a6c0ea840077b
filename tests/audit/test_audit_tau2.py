"""τ-Voice's realized interruptions and backchannels from full-duplex τ2 ticks:
opportunity = classifier consultation (every 10 ticks of agent speech while the
user is silent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay.audit.load import load_conversations
from replay.audit.report import build_report
from replay.audit.tau2 import consultations
from replay.load import load_path
from tests.conftest import TAU2_FIXTURES


def tick(k: int, agent: bool, user: bool, action: str | None) -> dict[str, Any]:
    return {
        "tick_id": k,
        "agent_chunk": {"role": "assistant", "contains_speech": agent},
        "user_chunk": {
            "role": "user",
            "contains_speech": user,
            "turn_taking_action": {"action": action} if action else None,
        },
    }


def crafted_simulation(tmp_path: Path) -> Path:
    """The agent speaks ticks 0-44 and 60-85. The user backchannels at tick 19, replies
    over ticks 25-41 and 49-55 (after the agent stopped), and interrupts at tick 79."""
    ticks = []
    for k in range(100):
        agent = k <= 44 or 60 <= k <= 85
        if k == 19:
            action, user = "backchannel", True
        elif 25 <= k <= 41:
            action, user = ("generate_message" if k == 25 else "keep_talking"), True
        elif k == 49:
            action, user = "generate_message", True
        elif 50 <= k <= 55:
            action, user = "keep_talking", True
        elif k == 79:
            action, user = "generate_message", True
        elif 80 <= k <= 90:
            action, user = "keep_talking", True
        else:
            action, user = "wait", False
        ticks.append(tick(k, agent, user, action))
    sim = {"id": "crafted", "task_id": "7", "mode": "full_duplex", "ticks": ticks}
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(sim), encoding="utf-8")
    return path


def test_consultations_on_a_crafted_timeline(tmp_path: Path) -> None:
    (trial,) = load_path(crafted_simulation(tmp_path)).trials
    assert trial.ticks is not None
    spans = [(t.meta["tick_start"], t.meta["tick_end"]) for t in trial.agent_turns()]
    found = consultations(trial.ticks, spans)
    # Ticks 9 and 19 (agent speaking, user silent); 29 and 39: the user talks; 49: the
    # agent fell silent at 45; 69 and 79 in the second agent turn; 89: the user talks.
    assert [c.tick for c in found] == [9, 19, 69, 79]
    assert [c.action for c in found] == ["wait", "backchannel", "wait", "generate_message"]
    assert [c.position for c in found] == [1, 2, 1, 2]


def test_crafted_simulation_rows(tmp_path: Path) -> None:
    convs, _ = load_conversations([crafted_simulation(tmp_path)])
    report = build_report(convs, ["policy"], resamples=50)
    rows = {r["behavior"]: r for r in report.turn_taking}
    assert rows["interruption"]["condition"] == {"policy": "tau-voice"}
    assert rows["interruption"]["unit"] == "consultation"
    assert (rows["interruption"]["opportunities"], rows["interruption"]["actions"]) == (4, 1)
    assert (rows["backchannel"]["opportunities"], rows["backchannel"]["actions"]) == (4, 1)
    assert rows["interruption"]["positions"] == {"2": 1}


@pytest.fixture
def fixture_dir() -> Path:
    return TAU2_FIXTURES / "voice_full_duplex"


def raw_counts(sim_file: Path) -> tuple[int, int, int]:
    """Consultations, interruptions, backchannels read straight from the JSON."""
    ticks = json.loads(sim_file.read_text(encoding="utf-8"))["ticks"]

    def speaks(chunk: Any) -> bool:
        return bool(chunk) and bool(chunk.get("contains_speech", True))

    user = [speaks(t.get("user_chunk")) for t in ticks]
    if len(ticks) >= 2 and user[-1] and not user[-2]:
        ticks = ticks[:-1]  # τ2's ###STOP### tick
    agent = [speaks(t.get("agent_chunk")) for t in ticks]
    actions = [
        ((t.get("user_chunk") or {}).get("turn_taking_action") or {}).get("action") for t in ticks
    ]
    listening = ("wait", "generate_message", "backchannel")
    consulted = [
        k
        for k in range(1, len(ticks))
        if (k + 1) % 10 == 0 and agent[k - 1] and actions[k] in listening
    ]
    return (
        len(consulted),
        sum(actions[k] == "generate_message" for k in consulted),
        sum(actions[k] == "backchannel" for k in consulted),
    )


def test_the_fixture_audit(fixture_dir: Path) -> None:
    convs, _ = load_conversations([fixture_dir])
    assert len(convs) == 3
    by_id = {c.id: c for c in convs}
    for sim_file in sorted((fixture_dir / "simulations").glob("*.json")):
        conv = by_id[sim_file.stem]
        assert (
            conv.opportunities,
            conv.interruptions.actions,
            conv.backchannels.actions,
        ) == raw_counts(sim_file)
        assert conv.warnings == []  # every backchannel fell on the schedule
    report = build_report(convs, ["policy"], resamples=50)
    rows = {r["behavior"]: r for r in report.turn_taking}
    golden = TAU2_FIXTURES / "voice_full_duplex.expected_metrics.json"
    expected = json.loads(golden.read_text())["counts"]
    # τ-Voice's own count of the user's backchannels in these three simulations.
    assert rows["backchannel"]["actions"] == expected["backchannel_total"] == 3
    # Classifier interruptions are a subset of τ2's user barge-ins.
    assert 0 < rows["interruption"]["actions"] <= expected["yield_total"]
    assert rows["interruption"]["opportunities"] == 270
    assert rows["interruption"]["agent_turns"] == sum(c.agent_turns for c in convs)
    assert rows["interruption"]["per_opportunity"] == pytest.approx(
        rows["interruption"]["actions"] / 270
    )
    # Where interruptions land: never on a turn's first consultation here.
    assert rows["interruption"]["first_share"] == 0.0
    assert sum(rows["interruption"]["positions"].values()) == rows["interruption"]["actions"]


def test_half_duplex_text_is_audited_for_disfluency() -> None:
    convs, _ = load_conversations([TAU2_FIXTURES / "text_airline_results.json"])
    report = build_report(convs, ["policy", "user.model"], resamples=50)
    assert report.turn_taking == []
    (row,) = report.disfluency
    assert row["condition"] == {"policy": "tau2-half-duplex", "user.model": "gpt-4o"}
    assert row["conversations"] == 50 and row["turns"] > 250 and row["words"] > 5000
