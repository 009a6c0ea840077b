"""How many calls each Ray node runs at once, from the CPU cost of one call (pure).

A call on the virtual clock runs flat out: it costs one CPU and, being Python, one
process, so a node gets one single-slot actor per whole CPU. A call on a line runs in
real time and mostly waits (frames every 20 ms, VAD, STT of the agent, the caller's
TTS): it costs a fraction of a CPU, so a node gets one actor holding its loaded models
with as many slots as fractions fit. The actor reserves ``slots × cost`` CPUs, so Ray's
own accounting sees what the calls use and packs other work around them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

VIRTUAL_CALL_CPUS = 1.0
"""A virtual-clock call is CPU-bound: one CPU per call."""


class PlacementError(ValueError):
    """No node of the cluster can take a call."""


@dataclass(frozen=True, slots=True)
class ActorSlot:
    """One actor to start: on which node, how many calls at once, how many CPUs."""

    node_id: str
    slots: int
    cpus: float


def default_cost(on_line: bool) -> float:
    """CPUs one call reserves: a line call's is ``--jobs``'s measured per-call cost
    (:data:`sessions.batch.pump.LINE_CALL_CPU`, the calls of one actor share a pump and
    the models as ``--jobs`` calls do)."""
    if not on_line:
        return VIRTUAL_CALL_CPUS
    from sessions.batch.pump import LINE_CALL_CPU

    return LINE_CALL_CPU


def node_slots(cpus: float, cost: float) -> int:
    """Calls a node of ``cpus`` CPUs runs at once (a hair of float slack: 1.0 / 0.25 = 4)."""
    if cost <= 0 or not math.isfinite(cost) or not math.isfinite(cpus) or cpus <= 0:
        return 0
    return int(cpus / cost + 1e-9)


def plan_actors(
    nodes: list[tuple[str, float]], cost: float, calls: int, *, shared: bool
) -> list[ActorSlot]:
    """Actors for ``calls`` calls on ``nodes`` (node id, CPUs), biggest nodes first, never
    more slots than calls. ``shared``: one actor per node with all its slots (line calls,
    one set of models); else one single-slot actor per slot (virtual-clock calls, one
    process per CPU; a shared actor runs at most
    :data:`~sessions.batch.pump.PROCESS_CALLS`). Raises :class:`PlacementError` when no
    node fits one call."""
    if not math.isfinite(cost) or cost <= 0:
        raise PlacementError(f"CPUs per call must be a positive number, got {cost:g}")
    if calls <= 0:
        return []
    from sessions.batch.pump import PROCESS_CALLS

    actors: list[ActorSlot] = []
    left = calls
    for node_id, cpus in sorted(nodes, key=lambda n: -n[1]):
        slots = min(node_slots(cpus, cost), left)
        if shared:  # one process: its interpreter lock, not the node's cores, bounds it
            slots = min(slots, PROCESS_CALLS)
        if slots <= 0:
            continue
        if shared:
            actors.append(ActorSlot(node_id, slots, round(slots * cost, 4)))
        else:
            actors += [ActorSlot(node_id, 1, cost) for _ in range(slots)]
        left -= slots
        if left == 0:
            break
    if not actors:
        total = sum(max(c, 0.0) for _, c in nodes)
        raise PlacementError(
            f"the Ray cluster has no node with {cost:g} free CPU{'' if cost == 1 else 's'} "
            "for a call "
            f"({len(nodes)} node{'' if len(nodes) == 1 else 's'}, "
            f"{total:g} CPU{'' if total == 1 else 's'} in all)"
        )
    return actors
