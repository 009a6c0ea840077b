"""Batch planning (pure): the grid, file names, seeds, speaking rates, tallies."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from sessions.batch.plan import (
    BatchPlanError,
    CallSpec,
    Condition,
    conditions,
    derive_seed,
    plan_batch,
    speaking_rate,
)
from sessions.batch.tally import CallTally, summarize, tally
from sessions.log.models import (
    AgentTurnStart,
    Backchannel,
    EndEvent,
    ErrorEvent,
    Event,
    Interruption,
    Opportunity,
)

FILE_NAME = re.compile(r"^[a-z0-9-]+__a[0-9.]+_b[0-9.]+_g[0-9.]+__run\d{2,}\.jsonl$")


def test_grid_is_every_combination_in_order_without_duplicates() -> None:
    grid = conditions([0.5], [0.0, 0.3, 0.3, 1.0], [0.0, 1.0])
    assert [c.label for c in grid] == [
        "a0.5_b0_g0",
        "a0.5_b0_g1",
        "a0.5_b0.3_g0",
        "a0.5_b0.3_g1",
        "a0.5_b1_g0",
        "a0.5_b1_g1",
    ]
    assert grid[2].as_dict() == {"alpha": 0.5, "beta": 0.3, "gamma": 0.0}


def test_plan_covers_scenarios_conditions_runs_run_major() -> None:
    grid = conditions([0.5], [0.0, 0.7], [0.0])
    specs = plan_batch(["retail-order-change", "clinic-triage"], grid, runs=3, batch="b")
    assert len(specs) == 2 * 2 * 3
    # Run-major: a batch stopped early still has every scenario x condition.
    assert [s.run for s in specs[:4]] == [1, 1, 1, 1]
    assert {(s.scenario, s.condition.label) for s in specs[:4]} == {
        (sc, c.label) for sc in ("retail-order-change", "clinic-triage") for c in grid
    }
    names = [s.file_name for s in specs]
    assert len(set(names)) == len(names)
    assert all(FILE_NAME.match(n) for n in names), names
    assert specs[0].file_name == "retail-order-change__a0.5_b0_g0__run01.jsonl"
    assert specs[0].batch_info() == {
        "batch": "b",
        "condition": {"alpha": 0.5, "beta": 0.0, "gamma": 0.0},
        "run": 1,
        "seed": 0,
        "paired": False,
    }


def test_plan_is_the_same_every_time() -> None:
    grid = conditions([0.0, 1.0], [0.3], [0.5])
    a = plan_batch(["airline-rebooking"], grid, runs=4, seed=9)
    b = plan_batch(["airline-rebooking"], grid, runs=4, seed=9)
    assert a == b


def test_seeds_are_stable_across_interpreters(child_env: dict[str, str]) -> None:
    """Seeds come from a hash of the inputs, not Python's per-process str hash."""
    here = derive_seed(0, "retail-order-change", Condition(0.5, 0.3, 0.0), 2)
    code = (
        "from sessions.batch.plan import Condition, derive_seed;"
        "print(derive_seed(0, 'retail-order-change', Condition(0.5, 0.3, 0.0), 2))"
    )
    for hash_seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**child_env, "PYTHONHASHSEED": hash_seed},
        )
        assert int(out.stdout) == here
    assert here == 868575155  # pinned: changing the derivation would orphan old batches


def test_seeds_differ_by_run_condition_scenario_and_base() -> None:
    c1, c2 = Condition(0.5, 0.0, 0.0), Condition(0.5, 1.0, 0.0)
    base = derive_seed(0, "s", c1, 1)
    assert derive_seed(0, "s", c1, 2) != base
    assert derive_seed(0, "s", c2, 1) != base
    assert derive_seed(0, "t", c1, 1) != base
    assert derive_seed(1, "s", c1, 1) != base
    assert 0 <= base < 2**31


def test_paired_plan_shares_seeds_across_conditions_only() -> None:
    grid = conditions([0.5], [0.0, 1.0], [0.0, 1.0])
    specs = plan_batch(["s"], grid, runs=2, paired=True)
    by_run = {r: {s.seed for s in specs if s.run == r} for r in (1, 2)}
    assert len(by_run[1]) == 1 and len(by_run[2]) == 1
    assert by_run[1] != by_run[2]
    unpaired = plan_batch(["s"], grid, runs=1)
    assert len({s.seed for s in unpaired}) == len(grid)


def test_speaking_rate_varies_per_run_within_the_jitter() -> None:
    specs = plan_batch(["s"], conditions([0.5], [0.0], [0.0]), runs=20, words_per_minute=160)
    rates = [s.words_per_minute for s in specs]
    assert all(152.0 <= r <= 168.0 for r in rates)
    assert len(set(rates)) > 10
    assert speaking_rate(160, 0.0, 123) == 160
    flat = plan_batch(["s"], conditions([0.5], [0.0], [0.0]), runs=3, rate_jitter=0.0)
    assert {s.words_per_minute for s in flat} == {165.0}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scenarios": []}, "no scenarios"),
        ({"scenarios": ["a", "a"]}, "named twice: a"),
        ({"grid": []}, "no conditions"),
        ({"runs": 0}, "--runs must be at least 1"),
        ({"rate_jitter": 0.6}, "jitter"),
    ],
)
def test_bad_plans_say_why(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "scenarios": ["a"],
        "grid": [Condition(0.5, 0.0, 0.0)],
        "runs": 1,
    }
    args.update(kwargs)
    with pytest.raises(BatchPlanError, match=message):
        plan_batch(**args)  # type: ignore[arg-type]


def test_tally_counts_acting_events_and_ignores_shadow_opportunities() -> None:
    events: list[Event] = [
        AgentTurnStart(t=0.0, turn=0),
        Opportunity(t=1.0, index=0, pause_index=0, turn=0, decision="NOTHING"),
        Opportunity(t=1.0, index=0, pause_index=0, turn=0, decision="INTERRUPT", mode="shadow"),
        Backchannel(t=2.0, turn=0),
        AgentTurnStart(t=5.0, turn=1),
        Interruption(t=6.0, turn=1),
        ErrorEvent(t=6.5, where="agent", message="boom"),
        EndEvent(t=7.0, reason="user_hangup"),
    ]
    t = tally(events)
    assert (t.agent_turns, t.opportunities, t.interruptions, t.backchannels) == (2, 1, 1, 1)
    assert t.errors == ["agent: boom"] and t.complete
    assert not tally(events[:-1]).complete
    assert not tally([EndEvent(t=1.0, reason="crash")]).complete


def test_summary_pools_scenarios_per_condition() -> None:
    c0, c1 = Condition(0.5, 0.0, 0.0), Condition(0.5, 1.0, 0.0)

    def spec(scenario: str, c: Condition) -> CallSpec:
        return CallSpec(scenario, c, 1, 0, 165.0, "b")

    rows = summarize(
        [
            (spec("x", c0), CallTally(agent_turns=4, backchannels=2)),
            (spec("y", c0), CallTally(agent_turns=6, backchannels=3)),
            (spec("x", c1), CallTally(agent_turns=5, interruptions=5)),
        ]
    )
    assert [r.condition for r in rows] == [c0, c1]
    assert (rows[0].calls, rows[0].agent_turns, rows[0].backchannels_per_turn) == (2, 10, 0.5)
    assert rows[1].interruptions_per_turn == 1.0
    assert summarize([(spec("x", c0), CallTally())])[0].interruptions_per_turn is None
