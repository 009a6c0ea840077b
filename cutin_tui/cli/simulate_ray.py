"""`cutin simulate --ray [ADDRESS]`: the batch's calls on a Ray cluster (sessions.cluster)."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cutin_tui.cli import CliError

if TYPE_CHECKING:
    from sessions.batch import CallSpec
    from sessions.batch_live import BatchBoard
    from sessions.batch_run import CallOutcome, RunOptions
    from sessions.scenarios.model import Scenario
    from sessions.settings import Settings


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
        "0.45 for a call on a line, as measured for --jobs in bench/); a larger value puts "
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
    from sessions.inert_text import terminal_line

    print(f"cutin simulate: {terminal_line(line)}", file=sys.stderr, flush=True)


def ray_batch(
    args: argparse.Namespace,
    specs: list[CallSpec],
    scenarios: Mapping[str, Scenario],
    options: RunOptions,
    out_dir: Path,
    settings: Settings,
    *,
    agents: Sequence[str] = (),
    board: BatchBoard | None = None,
) -> Iterator[CallOutcome]:
    """The batch on Ray, with a line on stderr per node, per lost node and per rerun
    call; a cluster that cannot be used is one :class:`CliError` line. Several
    ``agents`` are each lent to one call at a time, as in a local batch; ``board``
    shows the calls running on the nodes."""
    from sessions.cluster.connect import ClusterError
    from sessions.cluster.dispatch import run_on_ray

    try:
        yield from run_on_ray(
            specs,
            scenarios,
            options,
            out_dir,
            address=args.ray or None,
            settings=settings,
            cpus_per_call=args.ray_cpus_per_call,
            note=_note,
            agents=agents,
            board=board,
        )
    except ClusterError as exc:
        raise CliError(str(exc)) from None
