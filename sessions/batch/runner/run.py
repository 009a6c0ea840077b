"""The one entry of a batch: :func:`run_batch` takes a :class:`~sessions.batch.plan.BatchPlan`,
resumes (skips what an earlier run filed), and hands the rest to the executor the plan
calls for (:mod:`sessions.batch.runner.executors`), chosen here and nowhere else."""

from __future__ import annotations

from collections.abc import Iterator

from sessions.batch.board import BatchBoard
from sessions.batch.filing import CallOutcome, pending_calls
from sessions.batch.plan import BatchPlan
from sessions.batch.pump import PumpExecutor
from sessions.batch.runner.executors import Executor, PoolExecutor, RayExecutor, SerialExecutor
from sessions.plan import on_line


def choose_executor(plan: BatchPlan) -> Executor:
    """Ray when the plan says so; calls on a line on the real-time pump; virtual-clock
    calls in worker processes when ``jobs > 1``; else one after another."""
    if plan.ray is not None:
        return RayExecutor(plan.ray)
    if on_line(plan.options.agent):
        return PumpExecutor()
    if plan.jobs > 1:
        return PoolExecutor()
    return SerialExecutor()


def run_batch(plan: BatchPlan, *, board: BatchBoard | None = None) -> Iterator[CallOutcome]:
    """Yield one outcome per planned call: skipped (already finished) ones first, then as
    calls end (in completion order when several run at once).

    Raises :class:`~sessions.batch.filing.BatchMismatch` before running anything if a
    finished log in ``plan.out_dir`` disagrees with the plan, and what the executor's
    check raises (Ray: :class:`~sessions.batch.cluster.connect.ClusterError`) before
    that. ``board`` shows what is running (a progress display)."""
    executor = choose_executor(plan)
    executor.check()
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    todo, done = pending_calls(plan.specs, plan.options, plan.out_dir)
    yield from done
    if todo:
        yield from executor.run(todo, plan, board)
