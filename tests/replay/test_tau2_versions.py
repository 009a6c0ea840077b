"""τ2-bench files as people have them (issue 14): every layout, the version, fields
cutin does not know, control tokens, τ2's own review, effects and environments.

Real files: ``tests/fixtures/tau2`` (upstream) and ``tests/fixtures/tau2_excerpts``
(excerpts from public τ2 runs); sources and licences in their READMEs. Variants
(a wrapper, a review, an effect timeline) are made in ``tmp_path`` from real files.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from replay.errors import LoadError
from replay.judges.columns import judge_group, judge_groups
from replay.load import load_path
from replay.model import CallControl, EffectEvent
from replay.report.trials import build_report, render_html, render_markdown
from replay.tau2.effects import configured, environment_label, realized
from replay.tau2.version import SIMULATION_FIELDS, generation
from tests.conftest import TAU2_EXCERPTS, TAU2_FIXTURES

PIPECAT = TAU2_EXCERPTS / "pipecat_voice_retail_trajectory.json"
FORK_GEN1 = TAU2_EXCERPTS / "fork_gen1_convalidacion_results.json"


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ---- layouts and versions -----------------------------------------------------------


def test_a_lone_trajectory_from_a_fork_loads_with_its_version() -> None:
    batch = load_path(PIPECAT)
    (trial,) = batch.trials
    assert batch.warnings == []  # every field is one τ2's data model has
    assert trial.id == "sim_00e6a59c" and trial.task_id == "1"
    # "mode": "voice" with messages and no ticks is a half-duplex run; the raw value stays.
    assert trial.mode == "half_duplex" and trial.meta["tau2_mode"] == "voice"
    version = trial.meta["tau2_version"]
    assert (version["layout"], version["generation"]) == ("simulation", 5)
    assert version["label"] == "τ2 gen 5 · simulation"
    # "turn_idx": null on every message: turns still know their message positions.
    assert [t.speaker for t in trial.turns] == ["agent", "user", "agent", "user"]
    assert trial.turns[1].meta["messages"] == [1, 2, 3, 4]
    assert trial.reward == 0.0 and trial.failed


def test_a_simulation_run_record_loads_with_its_task(tmp_path: Path) -> None:
    sim = json.loads(PIPECAT.read_text())
    task = {"id": "1", "description": {"purpose": "Exchange a keyboard and a thermostat."}}
    path = _write(tmp_path / "record.json", {"simulation_run": sim, "task": task})
    (trial,) = load_path(path).trials
    assert trial.meta["tau2_version"]["layout"] == "simulation_run"
    assert trial.meta["task_purpose"] == "Exchange a keyboard and a thermostat."
    assert len(trial.turns) == 4
    # Not a wrapper: a "simulation_run" that is not a simulation is still refused.
    bad = _write(tmp_path / "bad.json", {"simulation_run": {"id": "x"}})
    with pytest.raises(LoadError, match="not a cutin log or τ2-bench file"):
        load_path(bad)


def test_versions_of_the_upstream_files() -> None:
    mono = load_path(TAU2_FIXTURES / "text_airline_results.json").trials[0]
    assert mono.meta["tau2_version"] == {
        "layout": "monolithic",
        "generation": 5,
        "format_version": None,
        "git_commit": "121283b87f0e5e14917e9fea3a6411e90408a6e1",
        "label": "τ2 gen 5 · monolithic · git 121283b",
    }
    voice = load_path(TAU2_FIXTURES / "voice_full_duplex").trials
    assert {t.meta["tau2_version"]["label"] for t in voice} == {"τ2 gen 2 · dir · git c0dd233"}
    one = next((TAU2_FIXTURES / "voice_full_duplex" / "simulations").glob("*.json"))
    (lone,) = load_path(one).trials
    assert lone.meta["tau2_version"]["layout"] == "simulation"
    assert lone.meta["tau2_version"]["git_commit"].startswith("c0dd233")  # from results.json


def test_an_early_results_file_from_a_fork() -> None:
    batch = load_path(FORK_GEN1)
    (trial,) = batch.trials
    assert batch.warnings == []
    assert trial.meta["tau2_version"]["label"] == "τ2 gen 1 · monolithic · git e94fa4d"
    assert trial.mode == "half_duplex" and "tau2_mode" not in trial.meta
    assert trial.meta["user_llm"] == "gemini/gemma-4-26b-a4b-it"
    assert trial.meta["task_purpose"].startswith("Rechazar una actividad externa")
    agent, user = trial.turns
    assert agent.text == "Hi! How can I help you today?"
    # "...¡Buen día!\n\n###STOP###": the words are speech, the token a hang-up.
    assert user.text.endswith("¡Buen día!") and "###" not in user.text
    assert [e.kind for e in user.events] == ["hang_up"]
    assert user.meta["messages"] == [1, 27]
    labels = {v.name: v.label for v in trial.verdicts}
    assert labels["reward"] == "fail" and labels["actions"] == "fail"


def test_generation_reads_the_newest_marker_key() -> None:
    base = {"id": "a", "task_id": "1", "messages": []}
    assert generation(base) == 1
    assert generation({**base, "mode": "half_duplex"}) == 2
    assert generation({**base, "mode": "x", "review": None}) == 3
    assert generation({**base, "review": None, "effect_timeline": None}) == 5


# ---- unknown fields -----------------------------------------------------------------


def test_unknown_fields_are_kept_and_named_once(tmp_path: Path) -> None:
    data = json.loads((TAU2_FIXTURES / "text_airline_results.json").read_text())
    data["leaderboard_note"] = "submitted"
    for sim in data["simulations"][:3]:
        sim["judge_scores"] = {"naturalness": 4}
    data["simulations"][1]["latency_ms"] = 812
    path = _write(tmp_path / "results.json", data)
    batch = load_path(path)
    unknown = [w for w in batch.warnings if "does not know" in w]
    assert unknown == [
        f"{path}: τ2 results fields cutin does not know, kept as they are: leaderboard_note",
        f"{path}: τ2 simulation fields cutin does not know, kept as they are: "
        "judge_scores, latency_ms",
    ]
    report = build_report(batch.trials, batch.warnings)
    second = report["trials"][1]["tau2"]["unknown_fields"]
    assert second == {"judge_scores": {"naturalness": 4}, "latency_ms": 812}
    assert report["trials"][10]["tau2"]["unknown_fields"] == {}
    assert batch.trials[1].header["latency_ms"] == 812


def test_record_fields_beside_the_run_are_kept(tmp_path: Path) -> None:
    sim = json.loads(PIPECAT.read_text())
    sim["my_score"] = 0.5
    path = _write(tmp_path / "r.json", {"simulation_run": sim, "split": "test"})
    batch = load_path(path)
    assert any("record fields" in w and "split" in w for w in batch.warnings)
    assert any("simulation fields" in w and "my_score" in w for w in batch.warnings)
    tau2 = build_report(batch.trials)["trials"][0]["tau2"]
    assert tau2["unknown_record_fields"] == {"split": "test"}
    assert tau2["unknown_fields"] == {"my_score": 0.5}
    assert "my_score" not in SIMULATION_FIELDS


# ---- control tokens -----------------------------------------------------------------


def test_control_tokens_are_call_events_never_speech() -> None:
    trials = load_path(TAU2_FIXTURES / "text_airline_results.json").trials
    assert not any("###" in t.text for trial in trials for t in trial.turns)
    kinds = Counter(e.kind for trial in trials for t in trial.turns for e in t.events)
    # 24 bare ###TRANSFER### messages and 3 more after words; STOP ends 21 calls.
    assert (kinds["transfer"], kinds["hang_up"], kinds["out_of_scope"]) == (27, 21, 2)
    # A goodbye with the token: the words stay speech, the token becomes the event.
    turn = next(
        t
        for trial in trials
        for t in trial.turns
        if t.text.endswith("Thank you for your help!") and t.events_of(CallControl)
    )
    assert turn.speaker == "user"
    assert turn.events_of(CallControl)[0].label == "hang-up (###STOP###)"


def test_a_bare_token_message_adds_no_turn(tmp_path: Path) -> None:
    data = json.loads((TAU2_FIXTURES / "text_airline_results.json").read_text())
    sim = next(
        s for s in data["simulations"] if s["messages"][-1].get("content") == "###TRANSFER###"
    )
    data["simulations"] = [sim]
    (trial,) = load_path(_write(tmp_path / "one.json", data)).trials
    last = trial.turns[-1]
    assert last.events[-1].kind == "transfer" and last.events[-1].data["by"] == "user"
    assert last.text.strip() and "###" not in last.text
    # The user spoke no words in that message: the last user turn is an earlier one.
    assert len(sim["messages"]) - 1 in last.meta["messages"]


# ---- τ2's review: a judge column of its own -------------------------------------------


def _with_review(tmp_path: Path) -> Path:
    sim = json.loads(PIPECAT.read_text())
    sim["review"] = {
        "summary": "The agent asked for the zip code three times.",
        "agent_error": True,
        "user_error": True,
        "critical_user_error": False,
        "has_errors": True,
        "errors": [
            {
                "source": "agent",
                "error_type": "content_error",
                "error_tags": ["repeated_request"],
                "severity": "critical",
                "turn_idx": 5,
                "reasoning": "The zip code had been given.",
                "correct_behavior": "Look the user up by name and zip.",
            },
            {
                "source": "user",
                "error_type": "content_error",
                "error_tags": ["premature_information"],
                "severity": "minor",
                "turn_idx": 6,
                "reasoning": "Gave a fallback before being asked.",
            },
        ],
    }
    sim["hallucination_check"] = {
        "hallucination_found": True,
        "summary": "One invented order number.",
        "errors": [{"reasoning": "Order W2378-156 is not in the scenario.", "user_message": "x"}],
    }
    sim["auth_classification"] = {"status": "succeeded", "reasoning": "Name and zip matched."}
    return _write(tmp_path / "reviewed.json", sim)


def test_review_errors_sit_on_their_turns_with_severity_and_who(tmp_path: Path) -> None:
    (trial,) = load_path(_with_review(tmp_path)).trials
    review = [v for v in trial.verdicts if v.judge == "tau2-review"]
    call, agent, user = review
    assert (call.name, call.label, call.scope) == ("review", "fail", "call")
    assert "agent error" in call.rationale and "user error" in call.rationale
    assert agent.name == "error 1: agent critical content_error (repeated_request)"
    assert (agent.label, agent.turn, agent.extra["severity"]) == ("fail", 2, "critical")
    assert trial.turns[2].speaker == "agent"
    assert (user.label, user.turn, user.extra["source"]) == ("info", 3, "user")
    hall = [v for v in trial.verdicts if v.judge == "tau2-hallucination"]
    assert [v.label for v in hall] == ["warn", "warn"]
    (auth,) = [v for v in trial.verdicts if v.judge == "tau2-auth"]
    assert (auth.name, auth.label) == ("authentication succeeded", "info")
    # Four columns, side by side: the reward's and the review's are apart.
    assert {judge_group(v.judge) for v in trial.verdicts} == {"tau2", "review"}
    assert judge_groups([trial]) == ("tau2", "review")


def test_reports_put_the_review_beside_the_reward(tmp_path: Path) -> None:
    (trial,) = load_path(_with_review(tmp_path)).trials
    md = render_markdown([trial])
    header = next(line for line in md.splitlines() if line.startswith("| # | time"))
    assert header == "| # | time | speaker | text | events | τ2 reward | τ2 review |"
    row = next(line for line in md.splitlines() if line.startswith("| 2 |"))
    # No events and no reward verdict on this turn; the review's error is in the last column.
    assert "? |  |  | ✗ tau2-review error 1: agent critical content\\_error" in row
    assert row.endswith("Instead: Look the user up by name and zip. |")
    assert "τ2 gen 5 · simulation" in md
    html = render_html([trial])
    assert "<th>τ2 reward</th><th>τ2 review</th>" in html


# ---- effects and the speech environment ----------------------------------------------

ENV = {
    "complexity": "regular",
    "environment": "outdoor",
    "background_noise_file": "noise/busy_street.wav",
    "burst_noise_files": ["car_horn.wav"],
    "telephony_enabled": True,
    "source_effects_config": {
        "enable_background_noise": True,
        "enable_burst_noise": True,
        "burst_noise_events_per_minute": 2.0,
    },
    "speech_effects_config": {
        "enable_vocal_tics": True,
        "enable_non_directed_phrases": False,
        "speech_insert_events_per_minute": 1.5,
        "enable_dynamic_muffling": False,
    },
}


def test_effect_timeline_lands_on_the_turn_where_it_happens(tmp_path: Path) -> None:
    sim = json.loads(PIPECAT.read_text())
    # Give the messages a clock: one per 10 s from the start time.
    for k, msg in enumerate(sim["messages"]):
        msg["timestamp"] = f"2026-09-23T15:59:{19 + k * 4:02d}.905631+00:00"
    sim["speech_environment"] = ENV
    sim["effect_timeline"] = {
        "events": [
            {"effect_type": "burst_noise", "start_ms": 9000, "end_ms": 9600,
             "participant": "user", "params": {"file": "noise/car_horn.wav", "snr_db": 5.0}},
            {"effect_type": "out_of_turn_speech", "start_ms": 21000, "end_ms": 21500,
             "participant": "user", "params": {"type": "vocal_tic", "text": "[cough]"}},
            {"effect_type": "burst_noise", "start_ms": 30000, "participant": "user"},
        ]
    }  # fmt: skip
    (trial,) = load_path(_write(tmp_path / "fx.json", sim)).trials
    placed = [(t.index, e.label) for t in trial.turns for e in t.events if e.kind == "effect"]
    starts = [t.start for t in trial.turns]
    assert starts == [0.0, 4.0, 20.0, 24.0]
    assert placed == [(1, "burst_noise car_horn.wav"), (2, "out_of_turn_speech [cough]"),
                      (3, "burst_noise")]  # fmt: skip
    assert realized(trial) == {"burst_noise": 2, "out_of_turn_speech": 1}
    assert configured(trial.meta["speech_environment"])["burst_noise_per_min"] == 2.0
    assert environment_label(trial.meta["speech_environment"]) == (
        "regular · outdoor · noise busy_street.wav · bursts 2/min · inserts 1.5/min · telephony"
    )
    assert "speech environment: regular · outdoor" in render_markdown([trial])


def test_tick_effects_during_speech_become_effect_events() -> None:
    trials = load_path(TAU2_FIXTURES / "voice_full_duplex").trials
    inside = [(t, e) for tr in trials for t in tr.turns for e in t.events if e.kind == "effect"]
    assert len(inside) == 13
    for trial in trials:
        tl = trial.ticks
        assert tl is not None
        for turn in trial.turns:
            for e in turn.events_of(EffectEvent):
                assert tl.user_speech[e.data["tick"]]  # the user was speaking
                effects = tl.user_effects[e.data["tick"]]
                assert any(fx.kind == e.data["effect_type"] for fx in effects)
    totals: Counter[str] = Counter()
    for trial in trials:
        totals.update(realized(trial))
    # In and out of turn together: what the ticks say happened.
    assert totals == {"burst_noise": 12, "muffling": 8, "non_directed_speech": 6, "vocal_tic": 9}


def test_a_control_token_in_tick_text_is_a_call_event(tmp_path: Path) -> None:
    from .tickspec import ticks

    stop = "###STOP###"
    sim = {
        "id": "fd-1",
        "task_id": "1",
        "mode": "full_duplex",
        "ticks": ticks(
            "AAAAAA....................",
            ".......UUUU..U..........U",
            user_text={7: "Thanks, ", 8: "that's all. ", 9: "Bye! ", 13: stop, 24: stop},
        ),
    }
    (trial,) = load_path(_write(tmp_path / "fd.json", sim)).trials
    first, last = trial.user_turns()
    # A token inside a turn: the words stay, the token becomes the turn's hang-up.
    assert first.text == first.spoken == "Thanks, that's all. Bye!"
    assert [e.kind for e in first.events] == ["hang_up"]
    # The lone end-of-call tick τ2 leaves: no words, one hang-up.
    assert last.text == "" and [e.kind for e in last.events] == ["hang_up"]


def test_a_dir_layout_with_a_format_version(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(TAU2_FIXTURES / "voice_full_duplex", copy)
    meta = json.loads((copy / "results.json").read_text())
    meta["format_version"] = 2  # what newer dir layouts carry (τ2 drops it on load)
    _write(copy / "results.json", meta)
    batch = load_path(copy)
    assert not any("does not know" in w for w in batch.warnings)
    assert {t.meta["tau2_version"]["label"] for t in batch.trials} == {
        "τ2 gen 2 · dir · format 2 · git c0dd233"
    }
