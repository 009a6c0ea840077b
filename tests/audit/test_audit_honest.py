"""An audit that cannot mislead (issue 20): real calls on the virtual clock, audited as a
user runs ``cutin audit``, and what is printed checked.

* a call whose β was raised mid-call is not audited as its starting β;
* a scripted call and a black-box call in one folder never pair, nor share a trend;
* one call prints counts, not intervals like ``[100.0, 100.0]``;
* a negative control that moved is flagged with its likely cause;
* disfluency is given per source of the caller's text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controls import Tendencies
from cutin_tui.cli import main
from sessions.agents.scripted import ScriptedAgent
from sessions.call.commands import SetTendencies
from sessions.call.config import CallConfig
from sessions.call.recorder import Recorder, make_header
from sessions.call.setup.simulated_call import simulated_call
from sessions.callers.users import ScriptedUser
from sessions.log import read_session
from sessions.log.models import (
    AgentInfo,
    Backchannel,
    DialsChanged,
    Interruption,
    Opportunity,
    TendencyValues,
)
from sessions.scenarios import load_scenario
from tests.support.black_box_log import black_box_events, black_box_header
from tests.support.logs import write_log

SCENARIO = "retail-order-change"
RAISE_AT = 20.0


def dial_change_call(path: Path, *, raise_to: float | None = 0.8) -> Path:
    """A real call on the virtual clock: α 0.5, β 0, γ 0, with β raised to ``raise_to``
    at :data:`RAISE_AT` s by the same command the call screen sends; logged by the
    call's own recorder."""
    scenario = load_scenario(SCENARIO)
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.5, 0.0, 0.0), seed=3)
    agent = AgentInfo(kind="scripted", name="Riverside Outfitters support")
    recorder = Recorder(path, make_header(config, session_id=path.stem, agent=agent))
    call = simulated_call(
        config,
        ScriptedAgent(scenario),
        user=ScriptedUser(scenario, barge_in_with_next_line=True),
        listeners=[recorder],
    )
    if raise_to is not None:
        call.schedule(RAISE_AT, SetTendencies(Tendencies(0.5, raise_to, 0.0)))
    try:
        call.run_virtual(max_seconds=300.0)
    finally:
        recorder.close()
    return path


def audit(*args: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["audit", *args]) == 0
    return capsys.readouterr().out


def audit_json(*args: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(audit(*args, "--json", capsys=capsys))
    return data


def flat(text: str) -> str:
    """Printed text with its line wrapping undone."""
    return " ".join(text.split())


def test_every_decision_logs_the_dials_in_force(tmp_path: Path) -> None:
    log = read_session(dial_change_call(tmp_path / "changed.jsonl"))
    (change,) = [e for e in log.events if isinstance(e, DialsChanged)]
    acts = [e for e in log.events if isinstance(e, Opportunity | Interruption | Backchannel)]
    assert acts and all(e.tendencies is not None and e.autos is not None for e in acts)
    for e in acts:
        assert e.tendencies is not None
        assert e.tendencies.beta == (0.8 if e.t >= change.t else 0.0), e
    # Every automatic interruption of the call was decided under β 0.8.
    cuts = [e for e in acts if isinstance(e, Interruption) and e.trigger == "auto"]
    assert cuts and {e.tendencies.beta for e in cuts if e.tendencies} == {0.8}


def test_a_call_whose_dials_changed_is_listed_by_span_not_under_its_first_beta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "calls"
    folder.mkdir()
    dial_change_call(folder / "changed.jsonl")
    dial_change_call(folder / "steady.jsonl", raise_to=None)
    data = audit_json(str(folder), capsys=capsys)
    # The condition table holds only the steady call: β 0, no automatic interruption.
    rows = [r for r in data["turn_taking"] if r["behavior"] == "interruption"]
    assert [(r["condition"]["beta"], r["conversations"], r["actions"]) for r in rows] == [
        (0.0, 1, 0)
    ]
    (mixed,) = data["mixed_calls"]
    assert mixed["call"] == "changed.jsonl"
    assert mixed["changes"].startswith("β 0 → 0.8 at 20.")
    before, after = mixed["spans"]
    assert (before["dials"]["beta"], after["dials"]["beta"]) == (0.0, 0.8)
    assert before["interruptions"] == 0 and after["interruptions"] >= 1
    assert before["end_t"] == after["start_t"] == pytest.approx(RAISE_AT, abs=0.04)
    assert any("dials changed mid-call" in n for n in data["notes"])
    # The steady call never pairs with the mixed one: it is in no test at all.
    assert all(r["conversations"] == 1 for r in data["disfluency"])

    text = flat(audit(str(folder), capsys=capsys))
    assert "Calls whose dials changed mid-call — by span, left out of the condition tables" in text
    assert "changed.jsonl: β 0 → 0.8 at 20." in text
    assert "spans are not independent sessions" in text
    assert f"α 0.5 · β 0.8 · γ 0 {after['start_t']:.1f} end" in text


def test_an_older_log_without_the_field_is_split_by_log_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = read_session(dial_change_call(tmp_path / "new.jsonl"))
    for e in new.events:
        if isinstance(e, Opportunity | Interruption | Backchannel):
            e.tendencies = None
            e.autos = None
    old = write_log(tmp_path / "old" / "old.jsonl", new.events, new.header)
    assert '"tendencies"' not in old.read_text(encoding="utf-8").split("\n", 2)[2].replace(
        '"type":"dials","tendencies"', ""
    )
    (mixed,) = audit_json(str(old), capsys=capsys)["mixed_calls"]
    assert [s["dials"]["beta"] for s in mixed["spans"]] == [0.0, 0.8]
    assert mixed["spans"][1]["interruptions"] >= 1


def test_a_folder_mixing_agents_never_pairs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mixed"
    argv = ["simulate", "--scenario", SCENARIO, "--alpha", "0", "--beta", "0", "--gamma", "0"]
    assert main([*argv, "--runs", "1", "--out", str(folder)]) == 0
    # A call to a black-box agent, same scenario, run and base seed, at β 1: the same
    # pair key as the scripted call's before the key named the agent.
    head = black_box_header()
    head.tendencies = TendencyValues(alpha=0.0, beta=1.0, gamma=0.0)
    head.batch = {"batch": "mixed", "run": 1, "seed": 0, "user": "scripted"}
    write_log(folder / "remote01.jsonl", black_box_events(), head)
    data = audit_json(str(folder), "--by", "beta", capsys=capsys)
    assert not [r for r in data["tests"] if r["test"] in ("wilcoxon", "kendall_tau_b")]
    (row,) = [r for r in data["tests"] if r["metric"] == "interruptions"]
    assert row["test"] == "unpaired" and row["pairs"] == 0
    reasons = {u["call"]: (u["agent"], u["reason"]) for u in row["unpaired_calls"]}
    assert reasons["remote01.jsonl"] == (
        "twilio · Acme",
        "no call of the same agent, kind and scenario under β 0",
    )
    (scripted,) = [k for k in reasons if k != "remote01.jsonl"]
    assert reasons[scripted][0].startswith("scripted")

    text = flat(audit(str(folder), "--by", "beta", capsys=capsys))
    assert "Trend" not in text and "Wilcoxon" not in text
    assert "Unpaired calls (left out of the paired tests)" in text
    assert (
        "remote01.jsonl (twilio · Acme): no call of the same agent, kind and scenario under β 0"
        in text
    )


def test_a_condition_pooling_agents_is_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "pooled"
    argv = ["simulate", "--scenario", SCENARIO, "--alpha", "0", "--beta", "1", "--gamma", "0"]
    assert main([*argv, "--runs", "1", "--out", str(folder)]) == 0
    head = black_box_header()
    head.tendencies = TendencyValues(alpha=0.0, beta=1.0, gamma=0.0)
    write_log(folder / "remote01.jsonl", black_box_events(), head)
    text = flat(audit(str(folder), "--by", "beta", capsys=capsys))
    assert "note: condition β 1 pools calls to 2 agents" in text
    assert "--by agent_kind,agent splits them" in text
    data = audit_json(str(folder), "--by", "beta,agent_kind", capsys=capsys)
    kinds = {r["condition"]["agent_kind"] for r in data["turn_taking"]}
    assert kinds == {"scripted", "twilio"} and not data["notes"]


def test_one_call_prints_counts_not_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "one"
    argv = ["simulate", "--scenario", SCENARIO, "--alpha", "0.5", "--beta", "1", "--gamma", "0"]
    assert main([*argv, "--runs", "1", "--out", str(folder)]) == 0
    data = audit_json(str(folder), capsys=capsys)
    (row,) = data["disfluency"]
    assert row["combined_ci"] is None and row["vmr_ci"] is None and row["initial_ci"] is None
    assert set(row["hidden"]) == {"combined_ci", "vmr_ci", "initial_ci"}
    interruptions = next(r for r in data["turn_taking"] if r["behavior"] == "interruption")
    opportunities = interruptions["opportunities"]
    assert 0 < opportunities < 10 and interruptions["actions"] == opportunities
    assert {"per_opportunity", "per_turn", "first_share"} <= set(interruptions["hidden"])
    assert data["min_events"] == 10

    text = flat(audit(str(folder), capsys=capsys))
    assert "[100.0, 100.0]" not in text and "100.0%" not in text
    assert f"{opportunities} of {opportunities} †" in text
    assert "† fewer than 10 events (the count n is shown) or one conversation: no interval" in text
    assert "τ-Voice hides such rates too" in text


def test_a_moved_negative_control_is_flagged_with_its_likely_cause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "control"
    argv = ["simulate", "--scenario", SCENARIO, "--alpha", "0", "--beta", "0,1", "--gamma", "0"]
    assert main([*argv, "--runs", "8", "--out", str(folder)]) == 0
    data = audit_json(str(folder), "--by", "beta", capsys=capsys)
    (control,) = [r for r in data["tests"] if r["metric"] == "pauses_per_min_before_action"]
    assert control["pairs"] == 8 and control["p"] < 0.05
    # The scripted agent answered the β 1 conversation with other (longer) replies: the
    # rhythm the control measures changed with the conversation, not through the rule.
    assert "the agent's replies were written longer" in control["flag"]
    (events,) = [r for r in data["tests"] if r["metric"] == "pause_events"]
    assert "flag" not in events  # cuts move it by design: not a control

    text = flat(audit(str(folder), "--by", "beta", capsys=capsys))
    assert "0.0078 ⚠" in text
    assert (
        "⚠ pauses_per_min_before_action is a negative control (no dial can move it) and "
        "moved (p 0.0078, β 1): likely the agent's replies were written longer" in text
    )


def test_a_control_that_held_is_not_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "held"
    argv = ["simulate", "--scenario", SCENARIO, "--alpha", "0", "--beta", "0", "--gamma", "0"]
    assert main([*argv, "--runs", "8", "--out", str(folder)]) == 0
    argv = ["simulate", "--scenario", SCENARIO, "--alpha", "0.5", "--beta", "0", "--gamma", "0"]
    assert main([*argv, "--runs", "8", "--out", str(folder)]) == 0
    data = audit_json(str(folder), "--by", "alpha,beta", capsys=capsys)
    controls = [r for r in data["tests"] if r["metric"].startswith("pauses_per_min")]
    assert controls and all("flag" not in r for r in controls)
    assert "⚠" not in audit(str(folder), "--by", "alpha,beta", capsys=capsys)


def test_disfluency_is_reported_per_source_of_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "sources"
    argv = ["simulate", "--scenario", SCENARIO, "--alpha", "1", "--beta", "0,1", "--gamma", "0"]
    assert main([*argv, "--runs", "3", "--out", str(folder)]) == 0
    data = audit_json(str(folder), "--by", "alpha,beta", capsys=capsys)
    sources = {(r["condition"]["beta"], r["source"]) for r in data["disfluency_by_source"]}
    # At β 0 the caller says its scenario lines; at β 1 every line opens an interruption.
    assert (0.0, "scenario") in sources and (1.0, "interruption") in sources
    pooled = {r["condition"]["beta"]: r for r in data["disfluency"]}
    for beta, row in pooled.items():
        parts = [r for r in data["disfluency_by_source"] if r["condition"]["beta"] == beta]
        assert sum(p["words"] for p in parts) == row["words"]
        assert sum(p["fillers"] + p["repetitions"] for p in parts) == (
            row["fillers"] + row["repetitions"]
        )
    text = flat(audit(str(folder), "--by", "alpha,beta", capsys=capsys))
    assert "Disfluency by source of the caller's text" in text
    assert "α 1 · β 0 scenario line" in text and "α 1 · β 1 interruption" in text
    assert "compare α within one source" in text


def test_an_llm_callers_lines_are_its_own_source(tmp_path: Path) -> None:
    from replay.audit.sessions import from_session

    folder = tmp_path / "llm"
    argv = ["simulate", "--scenario", SCENARIO, "--beta", "0", "--runs", "1", "--out", str(folder)]
    assert main(argv) == 0
    (path,) = folder.glob("*.jsonl")
    session = read_session(path)
    assert set(from_session(session).turn_sources) == {"scenario"}
    # A batch run with --user llm logged its caller's lines as "scenario" lines.
    assert session.header.batch is not None
    head = session.header.model_copy(update={"batch": {**session.header.batch, "user": "llm"}})
    llm = write_log(tmp_path / "llm.jsonl", session.events, head)
    assert set(from_session(read_session(llm)).turn_sources) == {"simulator"}
