"""`cutin simulate --ray [ADDRESS]`: the batch's calls on a Ray cluster (sessions.batch.cluster)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING

from cutin_tui.cli import CliError

if TYPE_CHECKING:
    from sessions.batch.plan import RaySetup


def add_ray_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run the calls on Ray (pip install 'cutin[cluster]' on every node): no ADDRESS "
        "starts a local Ray (or uses RAY_ADDRESS), HOST:PORT attaches to the cluster whose "
        "head runs `ray start --head` there; each node runs its share of calls and the logs "
        "and audio come back into --out",
    )
    p.add_argument(
        "--ray-cpus-per-call",
        type=float,
        metavar="CPUS",
        help="CPUs one call reserves on a Ray node (default: 1 on the virtual clock, "
        "0.14 for a call on a line, as measured for --jobs in bench/); a larger value puts "
        "fewer calls on each node, the remedy (with more nodes) when calls lag",
    )


def check_ray(args: argparse.Namespace) -> None:
    """Flags that do not go with --ray, one line each."""
    if args.ray is None:
        if args.ray_cpus_per_call is not None:
            raise CliError("--ray-cpus-per-call needs --ray")
        return
    if args.jobs != 1:
        raise CliError("--jobs does not go with --ray: each Ray node runs its share of calls")
    cost = args.ray_cpus_per_call
    if cost is not None and (not math.isfinite(cost) or not 0 < cost <= 64):
        raise CliError(f"--ray-cpus-per-call must be in (0, 64], got {cost:g}")


def _note(line: str) -> None:
    from sessions.hostile.inert_text import terminal_line

    print(f"cutin simulate: {terminal_line(line)}", file=sys.stderr, flush=True)


def ray_setup(args: argparse.Namespace) -> RaySetup | None:
    """The plan's Ray part (None: no --ray), with a line on stderr per node, per lost
    node and per rerun call; a cluster that cannot be used is one
    :class:`~sessions.batch.cluster.connect.ClusterError` line, which the command
    prints as its error."""
    from sessions.batch.plan import RaySetup

    if args.ray is None:
        return None
    return RaySetup(address=args.ray or None, cpus_per_call=args.ray_cpus_per_call, note=_note)
