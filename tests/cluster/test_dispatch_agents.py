"""The Ray driver's bookkeeping without a cluster: each agent of a list is lent to one
call at a time (a call gets the agent in its options), and the progress board counts the
calls running on the nodes (it said `0 running` under --ray)."""

from __future__ import annotations

from collections import deque
from itertools import count
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sessions.batch.board import BatchBoard
from sessions.batch.cluster.placement import ActorSlot
from sessions.batch.plan import Condition, plan_batch
from sessions.batch.pump import AgentPool
from sessions.plan import CallPlan

pytest.importorskip("ray")


class _Handle:
    """An actor handle that records what it was asked to run."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.ids = count()
        self.run = SimpleNamespace(remote=self._run)

    def _run(self, spec: Any, scenario: Any, options: CallPlan) -> str:
        self.sent.append((spec.stem, options.agent))
        return f"ref{next(self.ids)}"


def test_calls_take_free_agents_and_the_board_counts_them(tmp_path: Path) -> None:
    from sessions.batch.cluster.dispatch import _Actor, _Driver, _Job

    agents = ["twilio:ws://127.0.0.1:8765/", "twilio:ws://127.0.0.1:8766/"]
    specs = plan_batch(["line-check"], [Condition(0.5, 0.0, 0.5)], runs=3)
    options = CallPlan(user="scripted", agent=agents[0], speech="espeak")
    driver = _Driver({}, options, tmp_path, None, 0.5, True, lambda line: None, None)
    driver.scenarios = {"line-check": None}  # type: ignore[dict-item]
    driver.pool, driver.board = AgentPool(agents), BatchBoard()
    handle = _Handle()
    driver.actors = [_Actor(handle, ActorSlot("node", 4, 2.0), ready=True)]
    queue = deque(_Job(spec) for spec in specs)

    driver._submit(queue)
    # Four slots, but two agents that take one call each: two calls, one per agent.
    assert sorted(agent for _, agent in handle.sent) == agents
    assert len(queue) == 1 and len(driver.board.running()) == 2

    # One call comes back: its agent is free again and the third call takes it.
    first_ref = next(iter(driver.running))
    freed = driver.running[first_ref][2]
    driver.ray = SimpleNamespace(get=lambda ref: _no_log(), exceptions=driver.ray.exceptions)
    outcome = driver._finished(first_ref, queue)
    assert outcome is not None and len(driver.board.running()) == 1
    driver._submit(queue)
    assert handle.sent[-1] == (specs[2].stem, freed) and not queue
    assert len(driver.board.running()) == 2 and driver.board.peak == 2


def _no_log() -> Any:
    from sessions.batch.cluster.worker import CallResult

    return CallResult("x", False, "refused", None, None, "node", 0.1)
