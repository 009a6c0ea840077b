"""The executors of a batch on this machine or a cluster, behind one interface.

An executor is handed the calls still to run (resume is done before, the same for all)
and yields one :class:`~sessions.batch.filing.CallOutcome` per call as it ends; it
files every call in ``plan.out_dir`` with :mod:`sessions.batch.filing` and tells the
board which calls run. :func:`sessions.batch.runner.run.run_batch` picks one per plan:

- :class:`SerialExecutor`: one call after another in this process;
- :class:`PoolExecutor`: virtual-clock calls in ``plan.jobs`` worker processes;
- :class:`~sessions.batch.pump.PumpExecutor`: calls on a line in real time, on one pump;
- :class:`RayExecutor`: the calls on a Ray cluster's nodes (:mod:`sessions.batch.cluster`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from sessions.batch.board import BatchBoard
from sessions.batch.call import run_call
from sessions.batch.filing import CallOutcome
from sessions.batch.plan import BatchPlan, CallSpec, RaySetup


class Executor(Protocol):
    name: str

    def check(self) -> None:
        """Fail (one line) before anything is filed if this executor cannot run here."""

    def run(
        self, todo: Sequence[CallSpec], plan: BatchPlan, board: BatchBoard | None
    ) -> Iterator[CallOutcome]:
        """Run ``todo``: one outcome per call, in the order the calls end."""
        ...


class SerialExecutor:
    """One call after another in this process, in the plan's order."""

    name = "serial"

    def check(self) -> None:
        pass

    def run(
        self, todo: Sequence[CallSpec], plan: BatchPlan, board: BatchBoard | None
    ) -> Iterator[CallOutcome]:
        for spec in todo:
            if board is not None:
                board.call_started(spec.stem, None)
            yield run_call(
                spec, plan.scenarios[spec.scenario], plan.options, plan.out_dir, plan.settings
            )
            if board is not None:
                board.call_ended(spec.stem)


class PoolExecutor:
    """Virtual-clock calls in ``plan.jobs`` worker processes (one call: in this one)."""

    name = "pool"

    def check(self) -> None:
        pass

    def run(
        self, todo: Sequence[CallSpec], plan: BatchPlan, board: BatchBoard | None
    ) -> Iterator[CallOutcome]:
        if len(todo) <= 1:
            yield from SerialExecutor().run(todo, plan, board)
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        # spawn: workers start clean (no inherited threads or open files).
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=plan.jobs, mp_context=context)
        # The workers take the calls in the order submitted, one each: the board shows
        # the first ``jobs`` running, then the next as each ends.
        waiting = list(todo)
        try:
            futures = {
                pool.submit(
                    run_call,
                    spec,
                    plan.scenarios[spec.scenario],
                    plan.options,
                    plan.out_dir,
                    plan.settings,
                ): spec
                for spec in todo
            }
            if board is not None:
                for spec in waiting[: plan.jobs]:
                    board.call_started(spec.stem, None)
                del waiting[: plan.jobs]
            for future in as_completed(futures):
                if board is not None:
                    board.call_ended(futures[future].stem)
                    if waiting:
                        board.call_started(waiting.pop(0).stem, None)
                yield future.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """The calls on a Ray cluster; ``ray`` is imported only inside
    :mod:`sessions.batch.cluster`, when this runs (the ``cluster`` extra)."""

    name = "ray"

    def __init__(self, setup: RaySetup) -> None:
        self.setup = setup

    def check(self) -> None:
        from sessions.batch.cluster.connect import import_ray

        import_ray()  # not installed: say so before anything else

    def run(
        self, todo: Sequence[CallSpec], plan: BatchPlan, board: BatchBoard | None
    ) -> Iterator[CallOutcome]:
        from sessions.batch.cluster.dispatch import run_on_ray

        yield from run_on_ray(todo, plan, self.setup, board)
