"""Attaching the driver to Ray: a local Ray started here, or an existing cluster.

Every way it can go wrong is one :class:`ClusterError` line: Ray not installed (the
extra to install), an address that does not answer (checked with a plain TCP connect
first, because ``ray.init`` retries an unreachable address for minutes), a cluster
without a CPU.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from typing import Any

from sessions.hostile.redact import redact_url

INSTALL_HINT = "pip install 'cutin[cluster]' (on this machine and on every node)"
CONNECT_TIMEOUT_S = 5.0


class ClusterError(RuntimeError):
    """The cluster cannot be used; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class Node:
    node_id: str
    host: str
    cpus: float


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`ClusterError` naming the extra."""
    try:
        import ray
    except ImportError:
        raise ClusterError(f"--ray needs Ray: {INSTALL_HINT}") from None
    return ray


def split_address(address: str) -> tuple[str, int] | None:
    """(host, port) of a ``HOST:PORT`` address; None for forms Ray resolves itself
    (``auto``, ``ray://...``). Raises :class:`ClusterError` for a malformed one."""
    if address == "auto" or "://" in address:
        return None
    host, sep, port = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterError(
            f"--ray {redact_url(address)}: give the head node as HOST:PORT (e.g. 10.0.0.5:6379)"
        )
    return host, int(port)


def check_reachable(address: str) -> None:
    target = split_address(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ClusterError(
            f"cannot connect to the Ray cluster at {redact_url(address)}: {reason} "
            "(is `ray start --head` running there, and the port open?)"
        ) from None


def connect(address: str | None) -> bool:
    """Attach to the cluster at ``address`` (None: start a local Ray, or attach to the
    one ``RAY_ADDRESS`` names). Returns whether this call initialized Ray (so the
    caller shuts it down); an already initialized Ray is used as it is."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    if address:
        check_reachable(address)
    # Ray's own chatter stays off the terminal: what matters comes back as a
    # ClusterError or a lost node's line.
    kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    if not address:
        kwargs["include_dashboard"] = False
    _quiet_driver(ray)
    where = redact_url(address) if address else "a local Ray"
    try:
        ray.init(address=address or None, **kwargs)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ClusterError(f"cannot start or attach {where}: {first}") from None
    return True


def _quiet_driver(ray: Any) -> None:
    """Keep the cluster's error broadcasts off stdout: even with ``log_to_driver=False``
    Ray's driver prints them there (a node's death, with colour escapes), which would
    corrupt ``--json`` and reach the terminal raw. The dispatch reports what matters as
    a lost node's line. (Ray's one printer of them; nothing else is muted.)"""
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    if worker is not None and hasattr(worker, "print_to_stdstream"):
        worker.print_to_stdstream = lambda data, ignore_prefix=False: None


def cpu_nodes() -> list[Node]:
    """The live nodes and their CPUs; :class:`ClusterError` when none has a CPU."""
    ray = import_ray()
    nodes = [
        Node(n["NodeID"], str(n.get("NodeManagerAddress", "?")), _cpus(n))
        for n in ray.nodes()
        if n.get("Alive")
    ]
    if not any(n.cpus > 0 for n in nodes):
        raise ClusterError(
            f"the Ray cluster has no CPUs ({len(nodes)} live nodes): "
            "start nodes with CPUs (ray start --num-cpus N)"
        )
    return nodes


def _cpus(node: dict[str, Any]) -> float:
    return float(node.get("Resources", {}).get("CPU", 0.0))


def shutdown() -> None:
    import_ray().shutdown()
