"""`cutin simulate --ray ADDRESS` on a real Ray cluster: a head and a worker node started
here on loopback (`ray start`), shared by the tests of this module (starting one takes
~25 s on two cores). The last test kills the worker node.

- the folder a Ray run leaves equals a `--jobs` run of the same plan: the same files,
  the same headers and events but for the wall-clock fields; both nodes ran calls; a
  rerun after one log is deleted runs that call alone and skips the others;
- a node without room for one call is one line;
- several agents (a port range, one call each) each take their own calls;
- line calls (real time, to the known agent) run on both nodes with their audio; the
  worker node killed mid-call: its calls are rerun on the head, with the reason on
  stderr, and every planned call ends up finished.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sessions.batch.tally import tally
from sessions.log import read_session
from tests.support.cli import run_cutin
from tests.support.known_agent import running_known_agent
from tests.support.ray_cluster import WORKER_IP, RayCluster, ray_cluster

pytestmark = pytest.mark.slow

VIRTUAL_PLAN = [
    "simulate",
    "--scenario",
    "retail-order-change",
    "--scenario",
    "clinic-triage",
    "--beta",
    "0,1",
    "--name",
    "same-batch",
]
RUN_TIMEOUT_S = 600.0
WALL_CLOCK = re.compile(r"wall|lag|elapsed|started_at|t0_unix|session_id|monotonic")
"""Fields that differ between two runs of the same call (when, and how fast, it ran)."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    with ray_cluster(head_cpus=1, worker_cpus=1) as c:
        yield c


def _cutin(cluster: RayCluster, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**cluster.env, "CUTIN_CACHE_DIR": str(cluster.folder / "cache")}
    return run_cutin(*argv, env=env, timeout=RUN_TIMEOUT_S)


def _comparable(path: Path) -> list[dict[str, Any]]:
    """Every line of a log, wall-clock fields dropped."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in row.items() if not WALL_CLOCK.search(k)} for row in rows]


def _summary(stdout: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(stdout)
    return out


def test_a_ray_run_files_what_a_jobs_run_files(cluster: RayCluster, tmp_path: Path) -> None:
    on_ray, local = tmp_path / "ray", tmp_path / "jobs"
    ray = _cutin(cluster, *VIRTUAL_PLAN, "--out", str(on_ray), "--ray", cluster.address, "--json")
    assert ray.returncode == 0, ray.stderr
    assert _summary(ray.stdout)["ran"] == 4
    # A virtual-clock call costs a CPU: a single-slot actor per 1-CPU node (the head's may
    # run all four before the worker's Python has started: the line test waits for both).
    assert re.search(r"node \S+ \(.*\): 1 call slot, 1 CPU$", ray.stderr, re.M), ray.stderr
    assert "Traceback" not in ray.stderr
    jobs = _cutin(cluster, *VIRTUAL_PLAN, "--out", str(local), "--jobs", "2", "--json")
    assert jobs.returncode == 0, jobs.stderr

    names = sorted(p.name for p in on_ray.iterdir())
    assert names == sorted(p.name for p in local.iterdir())
    assert len(names) == 4 and all(n.endswith(".jsonl") for n in names)
    for name in names:
        assert _comparable(on_ray / name) == _comparable(local / name), name
        assert tally(read_session(on_ray / name).events).complete

    # Resume, as every executor resumes: one call's log deleted, the rerun runs it alone,
    # skips the three others untouched, and files it as the --jobs run did.
    kept = {name: (on_ray / name).read_bytes() for name in names[1:]}
    (on_ray / names[0]).unlink()
    again = _cutin(cluster, *VIRTUAL_PLAN, "--out", str(on_ray), "--ray", cluster.address, "--json")
    assert again.returncode == 0, again.stderr
    assert (_summary(again.stdout)["ran"], _summary(again.stdout)["skipped"]) == (1, 3)
    assert sorted(p.name for p in on_ray.iterdir()) == names
    assert all((on_ray / name).read_bytes() == body for name, body in kept.items())
    assert _comparable(on_ray / names[0]) == _comparable(local / names[0])


def test_a_cluster_with_no_room_for_one_call_is_one_line(
    cluster: RayCluster, tmp_path: Path
) -> None:
    out = tmp_path / "b"
    argv = [*VIRTUAL_PLAN, "--out", str(out), "--ray", cluster.address]
    proc = _cutin(cluster, *argv, "--ray-cpus-per-call", "4")
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        "cutin: the Ray cluster has no node with 4 free CPUs for a call (2 nodes, 2 CPUs in all)"
    ), proc.stderr
    assert not list(out.glob("*.jsonl*"))


def _wait_for(path: Path, text: str, process: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in path.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"no {text!r} on stderr:\n{path.read_text(errors='replace')}")


def _two_free_ports() -> int:
    """A port P with P and P + 1 both free now (a port range needs neighbours)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return int(port)
    raise AssertionError("no two neighbouring free ports")


def test_each_agent_of_a_port_range_takes_its_own_calls(
    cluster: RayCluster, tmp_path: Path
) -> None:
    """Two agents on neighbouring ports, dialled as one port range on a two-node cluster:
    every call goes to a free one, as in a local batch; before, every call dialled the
    first port (issue 31)."""
    out = tmp_path / "two"
    port = _two_free_ports()
    with (
        running_known_agent("--port", str(port)) as first,
        running_known_agent("--port", str(port + 1)) as second,
    ):
        proc = _cutin(
            cluster, "simulate", "--agent", f"twilio:ws://127.0.0.1:{{{port}..{port + 1}}}/",
            "--runs", "2", "--beta", "0,1", "--max-seconds", "4",
            "--out", str(out), "--ray", cluster.address, "--ray-cpus-per-call", "0.5", "--json",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert _summary(proc.stdout)["ran"] == 4, proc.stderr
        taken = [len(agent.events("call_start")) for agent in (first, second)]
    assert taken == [2, 2], proc.stderr  # each took two of the four, one at a time
    dialled = sorted(read_session(p).header.agent.base_url for p in out.glob("*.jsonl"))
    assert dialled == sorted([first.url, first.url, second.url, second.url])


def test_line_calls_rerun_when_their_node_dies(cluster: RayCluster, tmp_path: Path) -> None:
    out = tmp_path / "line"
    err_path = tmp_path / "stderr.txt"
    with running_known_agent() as agent:
        argv = [
            "simulate",
            "--agent",
            f"twilio:{agent.url}",
            "--scenario",
            "retail-order-change",
            "--beta",
            "0,1",
            "--runs",
            "2",
            "--max-seconds",
            "20",
            "--out",
            str(out),
            "--ray",
            cluster.address,
            # Half a CPU a call: two calls on each 1-CPU node.
            "--ray-cpus-per-call",
            "0.5",
            "--json",
        ]
        env = {**cluster.env, "CUTIN_CACHE_DIR": str(cluster.folder / "cache")}
        with err_path.open("w") as err:
            process = subprocess.Popen(
                [sys.executable, "-m", "cutin_tui", *argv],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=env,
            )
        try:
            _wait_for(err_path, f"node {WORKER_IP} (", process, timeout=300)
            time.sleep(5)  # its two calls are under way
            cluster.kill_worker()
            stdout, _ = process.communicate(timeout=RUN_TIMEOUT_S)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    stderr = err_path.read_text(errors="replace")
    assert process.returncode == 0, stderr
    assert "\x1b" not in stdout + stderr  # Ray's own broadcasts (colour escapes) kept out
    assert _summary(stdout)["ran"] == 4, stderr
    assert f"node {WORKER_IP} lost: " in stderr
    reruns = re.findall(r"(\S+): rerun \(attempt 2 of 3\)", stderr)
    assert len(reruns) == 2, stderr
    for stem in reruns:
        assert re.search(rf"{re.escape(stem)}: ran \(rerun after node {WORKER_IP}: ", stderr)
    logs = sorted(out.glob("*.jsonl"))
    assert {p.stem for p in logs} >= set(reruns) and len(logs) == 4
    for log in logs:
        assert tally(read_session(log).events).complete, log.name
        assert log.with_suffix(".wav").stat().st_size > 44, log.name
    assert not list(out.glob("*.part")) and not list(out.glob("*.failed"))
