"""How many calls each node takes: fractions of a CPU per call, biggest nodes first."""

from __future__ import annotations

import pytest

from sessions.batch.cluster.placement import (
    PlacementError,
    default_cost,
    node_slots,
    plan_actors,
)


def test_slots_are_whole_calls_that_fit() -> None:
    assert node_slots(1.0, 0.25) == 4  # 1 / 0.25 in floating point is not below 4
    assert node_slots(1.0, 0.35) == 2
    assert node_slots(1.0, 0.12) == 8
    assert node_slots(8.0, 1.0) == 8
    assert node_slots(0.5, 1.0) == 0
    assert node_slots(0.0, 0.1) == 0
    assert node_slots(4.0, 0.0) == 0
    assert node_slots(float("nan"), 0.5) == 0


def test_line_calls_share_one_actor_per_node_with_fractional_cpus() -> None:
    actors = plan_actors([("small", 1.0), ("big", 2.0)], 0.5, 100, shared=True)
    assert [(a.node_id, a.slots, a.cpus) for a in actors] == [("big", 4, 2.0), ("small", 2, 1.0)]


def test_one_actor_runs_no_more_calls_than_one_process_paces() -> None:
    """A big node's cores would take more, but one process's interpreter lock would not."""
    from sessions.batch.pump import PROCESS_CALLS

    actors = plan_actors([("big", 64.0)], 0.14, 1000, shared=True)
    assert [(a.node_id, a.slots) for a in actors] == [("big", PROCESS_CALLS)]


def test_virtual_calls_get_one_process_per_cpu() -> None:
    actors = plan_actors([("a", 2.0), ("b", 1.0)], 1.0, 100, shared=False)
    assert [(a.node_id, a.slots, a.cpus) for a in actors] == [("a", 1, 1.0)] * 2 + [("b", 1, 1.0)]


def test_never_more_slots_than_calls() -> None:
    actors = plan_actors([("a", 4.0), ("b", 4.0)], 0.5, 3, shared=True)
    assert sum(a.slots for a in actors) == 3
    assert [a.node_id for a in actors] == ["a"]
    assert plan_actors([("a", 4.0)], 0.5, 0, shared=True) == []


def test_a_cluster_without_room_for_one_call_is_one_clear_error() -> None:
    no_room = r"no node with 1 free CPU for a call .*2 nodes, 0\.5 CPUs"
    with pytest.raises(PlacementError, match=no_room):
        plan_actors([("a", 0.5), ("b", 0.0)], 1.0, 5, shared=False)
    with pytest.raises(PlacementError, match="positive"):
        plan_actors([("a", 4.0)], 0.0, 5, shared=True)


def test_default_cost_by_clock() -> None:
    assert default_cost(on_line=False) == 1.0
    assert 0 < default_cost(on_line=True) < 0.5  # a real-time call mostly waits
