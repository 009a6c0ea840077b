"""``--adapt`` in simulate: calibrations are logged, and a dial acts alike on two agent
rhythms (closer than with the paper's constants); without it nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutin_tui.cli import main
from sessions.batch.filing import BatchMismatch, CallStatus
from sessions.batch.plan import BatchPlan, conditions, plan_batch
from sessions.batch.runner.run import run_batch
from sessions.batch.tally import summarize
from sessions.log import read_session
from sessions.log.models import Opportunity, RuleCalibration
from sessions.plan import CallPlan
from sessions.scenarios import load_scenario
from sessions.scenarios.model import Scenario

ROOT = Path(__file__).resolve().parents[2]
BENCH = sorted((ROOT / "bench" / "scenarios").glob("*.toml"))[:2]


def _scenarios(profile: bool) -> dict[str, Scenario]:
    out = {}
    for path in BENCH:
        sc = load_scenario(path)
        if not profile:
            sc = sc.model_copy(update={"agent": sc.agent.model_copy(update={"profile": None})})
        out[sc.name] = sc
    return out


def _rate(out: Path, profile: bool, adapt: bool) -> float:
    scenarios = _scenarios(profile)
    grid = conditions([0.0], [0.3], [0.0])
    specs = plan_batch(list(scenarios), grid, runs=4, seed=0, paired=True)
    outcomes = list(
        run_batch(BatchPlan(specs, scenarios, CallPlan(user="scripted", adapt=adapt), out))
    )
    assert all(o.status is CallStatus.RAN for o in outcomes)
    (row,) = summarize((o.spec, o.tally) for o in outcomes)
    assert row.interruptions_per_turn is not None
    return row.interruptions_per_turn


def test_adapt_brings_two_rhythms_closer(tmp_path: Path) -> None:
    paper = [_rate(tmp_path / f"p{p}", p, adapt=False) for p in (False, True)]
    adapted = [_rate(tmp_path / f"a{p}", p, adapt=True) for p in (False, True)]
    assert abs(adapted[0] - adapted[1]) < abs(paper[0] - paper[1])
    # Calibrated once per call, before it starts, from the script sample; the
    # decisions' checks carry the calibrated thresholds.
    log = next((tmp_path / "aTrue").glob("*.jsonl"))
    events = read_session(log).events
    cals = [e for e in events if isinstance(e, RuleCalibration)]
    assert len(cals) == 1 and cals[0].source == "sample" and cals[0].calibrated
    assert cals[0].params is not None
    patience = cals[0].params["interrupt_patience_s"]
    opp = next(e for e in events if isinstance(e, Opportunity))
    needed = {c["name"]: c["needed"] for c in opp.checks if c["rule"] == "interrupt"}
    assert needed["speaking_s"] == f"≥ {patience:g}"
    # The paper's constants without --adapt: no calibration event, the paper's checks.
    plain = read_session(next((tmp_path / "pTrue").glob("*.jsonl"))).events
    assert not any(isinstance(e, RuleCalibration) for e in plain)
    opp = next(e for e in plain if isinstance(e, Opportunity))
    needed = {c["name"]: c["needed"] for c in opp.checks if c["rule"] == "interrupt"}
    assert needed["speaking_s"] == "≥ 7.45" and needed["words"] == "≥ 12"


def test_adapted_and_plain_logs_do_not_mix(tmp_path: Path) -> None:
    scenarios = _scenarios(True)
    specs = plan_batch(list(scenarios)[:1], conditions([0.0], [0.7], [0.0]), runs=1)
    list(run_batch(BatchPlan(specs, scenarios, CallPlan(user="scripted", adapt=True), tmp_path)))
    with pytest.raises(BatchMismatch, match="adapt"):
        list(
            run_batch(BatchPlan(specs, scenarios, CallPlan(user="scripted", adapt=False), tmp_path))
        )


def test_simulate_cli_adapt_logs_calibrations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "simulate",
            "--scenario",
            str(BENCH[0]),
            "--beta",
            "1",
            "--gamma",
            "0.5",
            "--adapt",
            "--runs",
            "1",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    capsys.readouterr()
    (log,) = tmp_path.glob("*.jsonl")
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["batch"]["adapt"] is True
    cal = next(x for x in lines if x["type"] == "calibration")
    assert cal["tendencies"]["beta"] == 1.0
    assert cal["rhythm"]["turns"] > 0 and cal["replayed"]["interruptions_per_turn"] > 0
