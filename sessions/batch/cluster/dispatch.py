"""The driver of `cutin simulate --ray`: the batch's calls on a Ray cluster's nodes.

Actors are placed per node (:mod:`sessions.batch.cluster.placement`), each call goes to a
free slot, and each result comes back as bytes that are filed into ``--out`` exactly
as a local call is (:func:`sessions.batch.filing.file_parts`): a finished call under its
final name, a failed one as ``.failed``, and a rerun skips what is finished. A node
that dies takes its running calls with it: each is run again elsewhere, at most
:data:`MAX_ATTEMPTS` times in all, then reported failed with the reason; no call is
dropped without an outcome.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions.batch.board import BatchBoard
from sessions.batch.cluster.connect import (
    ClusterError,
    connect,
    cpu_nodes,
    import_ray,
    shutdown,
)
from sessions.batch.cluster.placement import ActorSlot, PlacementError, default_cost, plan_actors
from sessions.batch.cluster.worker import CallResult, CallRunner
from sessions.batch.filing import (
    CallOutcome,
    CallStatus,
    file_parts,
    final_path,
    part_path,
    recording_part,
)
from sessions.batch.plan import BatchPlan, CallSpec, RaySetup, RayStats
from sessions.batch.pump import AgentPool
from sessions.batch.tally import CallTally, tally
from sessions.log.reader import LogError, read_session
from sessions.plan import CallPlan, on_line
from sessions.scenarios.model import Scenario
from sessions.version import version_string

if TYPE_CHECKING:
    from sessions.settings import Settings

MAX_ATTEMPTS = 3
"""A call whose node is lost runs at most this many times in all."""
READY_TIMEOUT_S = 180.0
"""An actor that has not answered by then (its node's CPUs are taken, or the node hangs)
is given up; generous, since a loaded node may take long to start a Python process."""
REPLACE_EVERY_S = 5.0
"""How often lost capacity is looked for again on the live nodes."""

Note = Callable[[str], None]


@dataclass
class _Actor:
    handle: Any
    slot: ActorSlot
    host: str = "?"
    """The node's address, as Ray knows it."""
    ready: bool = False
    busy: int = 0
    started: float = field(default_factory=time.monotonic)


@dataclass
class _Job:
    spec: CallSpec
    attempt: int = 1
    lost: list[str] = field(default_factory=list)


def short_reason(exc: BaseException) -> str:
    """One line of at most 160 characters naming what went wrong."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def file_result(spec: CallSpec, result: CallResult, out_dir: Path) -> CallOutcome:
    """Write a call's returned log (and audio) as ``.part`` files in ``out_dir`` and file
    them; the driver's own count of the log decides, as for a local call."""
    part = part_path(out_dir, spec)
    if result.log is None:
        return CallOutcome(spec, CallStatus.FAILED, part, CallTally(), result.message or "no log")
    wav_part = recording_part(out_dir, spec)
    wav_part.unlink(missing_ok=True)
    if result.wav is not None:
        wav_part.write_bytes(result.wav)
    part.write_bytes(result.log)
    try:
        counted = tally(read_session(part, skip_bad=True).events)
    except LogError as exc:
        counted = CallTally()
        return file_parts(spec, out_dir, counted, f"unreadable log from the node: {exc}")
    return file_parts(spec, out_dir, counted, None if result.ok else result.message or "failed")


def run_on_ray(
    todo: Sequence[CallSpec],
    plan: BatchPlan,
    setup: RaySetup,
    board: BatchBoard | None = None,
) -> Iterator[CallOutcome]:
    """The calls still to run (resume is done by :func:`sessions.batch.runner.run.run_batch`)
    on Ray: one outcome per call as results come back. Raises :class:`ClusterError`
    (one line) when Ray is missing, the cluster cannot be reached or has no CPU.

    The plan's agents (default ``options.agent``): several are each lent to one call at
    a time, as :mod:`sessions.batch.pump` lends them, so at most that many calls run at
    once on the whole cluster. ``board`` is told which calls run (a progress display)."""
    options = plan.options
    line = on_line(options.agent)
    cost = setup.cpus_per_call if setup.cpus_per_call is not None else default_cost(line)
    started = connect(setup.address)
    driver = _Driver(
        plan.scenarios, options, plan.out_dir, plan.settings, cost, line, setup.note, setup.stats
    )
    driver.pool, driver.board = AgentPool(plan.dialled), board
    try:
        yield from driver.run(list(todo))
    finally:
        driver.close()
        if started:
            shutdown()


class _Driver:
    def __init__(
        self,
        scenarios: Mapping[str, Scenario],
        options: CallPlan,
        out_dir: Path,
        settings: Settings | None,
        cost: float,
        shared: bool,
        note: Note,
        stats: RayStats | None,
    ) -> None:
        self.ray = import_ray()
        self.scenarios, self.options, self.out_dir = scenarios, options, out_dir
        self.settings, self.cost, self.shared, self.note = settings, cost, shared, note
        self.stats = stats
        self.actors: list[_Actor] = []
        self.lost_nodes: set[str] = set()
        self.last_loss = ""
        self.placed_at = 0.0
        self.lost_since_placed = False
        self.running: dict[Any, tuple[_Job, _Actor, str]] = {}
        """A running call: its job, its actor and the agent it dials."""
        self.probes: dict[Any, _Actor] = {}
        self.runner = self.ray.remote(CallRunner)
        self.pool = AgentPool([options.agent])
        self.board: BatchBoard | None = None

    # ---- actors -----------------------------------------------------------------

    def place(self, calls: int, *, first: bool) -> None:
        """Start actors for up to ``calls`` more calls on the live nodes' spare CPUs."""
        self.placed_at, self.lost_since_placed = time.monotonic(), False
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        held: dict[str, float] = {}
        for a in self.actors:
            held[a.slot.node_id] = held.get(a.slot.node_id, 0.0) + a.slot.cpus
        live = [n for n in cpu_nodes() if n.node_id not in self.lost_nodes]
        hosts = {n.node_id: n.host for n in live}
        nodes = [(n.node_id, n.cpus - held.get(n.node_id, 0.0)) for n in live]
        try:
            slots = plan_actors(nodes, self.cost, calls, shared=self.shared)
        except PlacementError as exc:
            if first:
                raise ClusterError(str(exc)) from None
            return
        for slot in slots:
            handle = self.runner.options(
                num_cpus=slot.cpus,
                max_concurrency=slot.slots,
                max_restarts=0,
                max_task_retries=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(slot.node_id, soft=False),
            ).remote(self.settings, line=self.shared)
            actor = _Actor(handle, slot, hosts.get(slot.node_id, "?"))
            self.actors.append(actor)
            self.probes[handle.info.remote()] = actor

    def _ready(self, ref: Any) -> None:
        actor = self.probes.pop(ref)
        try:
            info = self.ray.get(ref)
        except Exception as exc:
            self._lose(actor, f"could not start a worker: {short_reason(exc)}")
            return
        if info.version != version_string():
            self._drop(actor)
            raise ClusterError(
                f"node {info.host} runs cutin {info.version}, this machine {version_string()}: "
                "install the same cutin[cluster] on every node"
            )
        actor.ready = True
        if self.stats is not None:
            if self.stats.first_ready is None:
                self.stats.first_ready = time.monotonic()
            self.stats.nodes.add(actor.host)
            self.stats.slots += actor.slot.slots
        slots, cpus = actor.slot.slots, actor.slot.cpus
        self.note(
            f"node {actor.host} ({info.host}): {slots} call slot{'' if slots == 1 else 's'}, "
            f"{cpus:g} CPU{'' if cpus == 1 else 's'}"
        )

    def _drop(self, actor: _Actor) -> None:
        if actor in self.actors:
            self.actors.remove(actor)
        with contextlib.suppress(Exception):  # already gone with its node
            self.ray.kill(actor.handle, no_restart=True)

    def _lose(self, actor: _Actor, reason: str) -> None:
        """An actor (and so, as far as we know, its node) is gone."""
        if actor not in self.actors:
            return
        self.lost_nodes.add(actor.slot.node_id)
        self.lost_since_placed = True
        self._drop(actor)
        self.last_loss = f"node {actor.host} lost: {reason}"
        self.note(self.last_loss)

    def _timeouts(self) -> None:
        now = time.monotonic()
        for ref, actor in list(self.probes.items()):
            if now - actor.started > READY_TIMEOUT_S:
                del self.probes[ref]
                self._lose(actor, f"no worker started within {READY_TIMEOUT_S:.0f} s")

    # ---- calls ------------------------------------------------------------------

    def _submit(self, queue: deque[_Job]) -> None:
        for actor in self.actors:
            while queue and actor.ready and actor.busy < actor.slot.slots and self.pool.free:
                job, agent = queue.popleft(), self.pool.take()
                scenario = self.scenarios[job.spec.scenario]
                options = self.options.model_copy(update={"agent": agent})
                ref = actor.handle.run.remote(job.spec, scenario, options)
                actor.busy += 1
                self.running[ref] = (job, actor, agent)
                if self.board is not None:
                    self.board.call_started(job.spec.stem, None)

    def _finished(self, ref: Any, queue: deque[_Job]) -> CallOutcome | None:
        job, actor, agent = self.running.pop(ref)
        actor.busy -= 1
        self.pool.give(agent)
        if self.board is not None:
            self.board.call_ended(job.spec.stem)
        ray_exc = self.ray.exceptions
        try:
            result: CallResult = self.ray.get(ref)
        except (
            ray_exc.RayActorError,
            ray_exc.WorkerCrashedError,
            ray_exc.NodeDiedError,
            ray_exc.ObjectLostError,
            ray_exc.OutOfMemoryError,
        ) as exc:
            reason = short_reason(exc)
            self._lose(actor, reason)
            job.lost.append(f"node {actor.host}: {reason}")
            if job.attempt < MAX_ATTEMPTS:
                job.attempt += 1
                self.note(f"{job.spec.stem}: rerun (attempt {job.attempt} of {MAX_ATTEMPTS})")
                queue.appendleft(job)
                return None
            times = "once" if len(job.lost) == 1 else f"{len(job.lost)} times"
            message = f"its node was lost {times}; last: {job.lost[-1]}"
            return CallOutcome(
                job.spec,
                CallStatus.FAILED,
                final_path(self.out_dir, job.spec),
                CallTally(),
                message,
            )
        except Exception as exc:  # the call itself raised on the node: not a node's loss
            return CallOutcome(
                job.spec,
                CallStatus.FAILED,
                final_path(self.out_dir, job.spec),
                CallTally(),
                f"on node {actor.host}: {short_reason(exc)}",
            )
        if self.stats is not None:
            self.stats.call_s += result.seconds
        outcome = file_result(job.spec, result, self.out_dir)
        if job.lost:
            outcome.message = outcome.message or f"rerun after {'; '.join(job.lost)}"
        return outcome

    def run(self, todo: list[CallSpec]) -> Iterator[CallOutcome]:
        queue = deque(_Job(spec) for spec in todo)
        # Agents that take one call each: no more slots than agents.
        at_once = len(self.pool.agents) if self.pool.exclusive else len(todo)
        self.place(min(len(todo), at_once), first=True)
        while queue or self.running:
            self._submit(queue)
            # Lost capacity is sought again on the live nodes; at once when none is left.
            due = not self.actors or time.monotonic() - self.placed_at > REPLACE_EVERY_S
            if queue and self.lost_since_placed and due:
                capacity = sum(a.slot.slots for a in self.actors)
                wanted = len(queue) + len(self.running)
                if self.pool.exclusive:
                    wanted = min(wanted, len(self.pool.agents))
                self.place(wanted - capacity, first=False)
            if queue and not self.actors:
                reason = self.last_loss or "no node could start a worker"
                while queue:
                    job = queue.popleft()
                    yield CallOutcome(
                        job.spec,
                        CallStatus.FAILED,
                        final_path(self.out_dir, job.spec),
                        CallTally(),
                        f"no Ray node left to run it ({reason})",
                    )
                continue
            waiting = [*self.running, *self.probes]
            if not waiting:
                time.sleep(0.2)
                continue
            ready, _ = self.ray.wait(waiting, num_returns=1, timeout=1.0)
            for ref in ready:
                if ref in self.probes:
                    self._ready(ref)
                    continue
                outcome = self._finished(ref, queue)
                if outcome is None:
                    continue
                # The progress display shows the call and a failure's reason; a call that
                # ran after its node was lost is said here (the display shows it ran).
                if outcome.message and outcome.status is not CallStatus.FAILED:
                    self.note(f"{outcome.spec.stem}: {outcome.status} ({outcome.message})")
                yield outcome
            self._timeouts()

    def close(self) -> None:
        """Every actor is ended (a Ctrl-C's running calls too: a rerun runs them again);
        the bench's CPU figure is read first."""
        if self.stats is not None:
            refs = [a.handle.cpu_seconds.remote() for a in self.actors if a.ready]
            with contextlib.suppress(Exception):
                self.stats.actor_cpu_s += sum(self.ray.get(refs, timeout=30))
        # Each actor removes its scratch folder, then is ended (running calls with it).
        closing = [a.handle.close.remote() for a in self.actors if a.ready]
        with contextlib.suppress(Exception):
            self.ray.wait(closing, num_returns=len(closing), timeout=10)
        for actor in list(self.actors):
            self._drop(actor)
