"""A real two-node Ray cluster on this machine for tests: `ray start --head` and
`ray start --address`, each a :class:`~tests.support.process.ChildProcess` in its own
session so a node can be killed alone, and everything they started ended by process id on
the way out.

    with ray_cluster(head_cpus=1, worker_cpus=1) as cluster:
        cluster.address          # HOST:PORT of the head, for --ray
        cluster.kill_worker()    # the worker node dies (SIGKILL to its processes)

Each node has a small object store and no dashboard; the temporary folder is short
(Ray's socket paths must stay under ~107 characters) and removed afterwards.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.process import ChildProcess

START_TIMEOUT_S = 180.0
"""`ray start` takes ~10 s on an idle 2-core machine; a loaded one, much longer."""
WORKER_IP = "127.0.0.2"
"""The worker node's own loopback address, so it is told apart from the head (and the
driver, on the head's machine, never attaches to it)."""
OBJECT_STORE_BYTES = 200_000_000
READY = re.compile(r"Ray runtime started")


def _ray_bin() -> str:
    found = Path(sys.executable).with_name("ray")
    return str(found) if found.exists() else "ray"


def _children(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (read from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            ppid = int(stat.rpartition(")")[2].split()[1])
            parents.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


@dataclass
class Node:
    child: ChildProcess
    """``ray start --block``: its output (stderr in it) read as it comes."""
    pids: set[int] = field(default_factory=set)

    def remember(self) -> None:
        """Note its processes now, while they are still its children."""
        self.pids |= {self.child.pid, *_children(self.child.pid)}

    def kill(self) -> None:
        """SIGKILL to every process it started (then ``ray start`` reaped)."""
        self.remember()
        for pid in sorted(self.pids):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.child.close()


@dataclass
class RayCluster:
    address: str
    folder: Path
    head: Node
    worker: Node
    env: dict[str, str]
    """The environment a driver needs (the cluster's token)."""

    def kill_worker(self) -> None:
        self.worker.kill()


def _start(argv: list[str], env: dict[str, str]) -> Node:
    child = ChildProcess(argv, name=" ".join(argv[1:3]), env=env, stderr="stdout", new_session=True)
    node = Node(child)
    try:
        child.wait_ready(READY, START_TIMEOUT_S)
    except BaseException:
        node.kill()
        raise
    node.remember()
    return node


@contextlib.contextmanager
def ray_cluster(head_cpus: int = 1, worker_cpus: int = 1) -> Iterator[RayCluster]:
    folder = Path(tempfile.mkdtemp(prefix="cutin-ray-"))
    # Token auth on, with a token of its own (else a token file in ~/.ray turns it on
    # for the head but not for the worker): the driver needs the same env.
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }
    env.pop("RAY_ADDRESS", None)
    common = [
        "--disable-usage-stats",
        "--block",
        f"--object-store-memory={OBJECT_STORE_BYTES}",
    ]
    nodes: list[Node] = []
    try:
        head = _start(
            [
                _ray_bin(),
                "start",
                "--head",
                "--port=0",
                f"--num-cpus={head_cpus}",
                "--include-dashboard=false",
                f"--temp-dir={folder / 't'}",
                *common,
            ],
            env,
        )
        nodes.append(head)
        address = (folder / "t" / "ray_current_cluster").read_text().strip()
        worker = _start(
            [
                _ray_bin(),
                "start",
                f"--address={address}",
                f"--num-cpus={worker_cpus}",
                f"--node-ip-address={WORKER_IP}",
                *common,
            ],
            env,
        )
        nodes.append(worker)
        yield RayCluster(address, folder, head, worker, env)
    finally:
        for node in reversed(nodes):
            node.kill()
        # Worker processes a raylet started leave once it is gone; any still here are ours.
        for node in nodes:
            node.kill()
        shutil.rmtree(folder, ignore_errors=True)
