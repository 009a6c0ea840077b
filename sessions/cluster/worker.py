"""What a Ray node runs: batch calls in a scratch folder of its own, each call's log and
audio read back as bytes, so the driver files them and the nodes need not share a disk.

:class:`CallRunner` is the body of the per-node actor (``dispatch`` wraps it with
``ray.remote``); it imports no Ray itself, so it runs and is tested like any class.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sessions.batch import CallSpec
from sessions.batch_run import CallStatus, RunOptions, run_call
from sessions.scenarios.model import Scenario
from sessions.version import version_string

if TYPE_CHECKING:
    from sessions.settings import Settings


@dataclass(frozen=True, slots=True)
class CallResult:
    """One call as it comes back to the driver."""

    stem: str
    ok: bool
    """The node filed it as finished (the driver checks the log again)."""
    message: str
    """Why it failed ("" when ok)."""
    log: bytes | None
    """The call's JSONL log; None when no log could be created."""
    wav: bytes | None
    """Both sides' audio of a voice call; None for a text-clock call."""
    host: str
    seconds: float
    """Wall seconds the call took on the node."""


@dataclass(frozen=True, slots=True)
class RunnerInfo:
    """Who answered: the driver checks the version before sending calls."""

    version: str
    host: str
    pid: int


def node_settings(settings: Settings | None, scratch: Path) -> Settings:
    """The driver's settings (model, endpoint, key) with this node's own folders: the
    driver's cache folder need not exist here."""
    from sessions.settings import Settings

    local = Settings()
    if settings is None:
        return local.model_copy(update={"sessions_dir": scratch})
    return settings.model_copy(update={"cache_dir": local.cache_dir, "sessions_dir": scratch})


class CallRunner:
    """Runs calls on one node; concurrent calls each get their own scratch folder."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="cutin-ray-"))
        self.settings = node_settings(settings, self.scratch)

    def info(self) -> RunnerInfo:
        return RunnerInfo(version_string(), socket.gethostname(), os.getpid())

    def cpu_seconds(self) -> float:
        """CPU time of this process so far (all its threads): the bench's cost per call."""
        return time.process_time()

    def run(self, spec: CallSpec, scenario: Scenario, options: RunOptions) -> CallResult:
        start = time.monotonic()
        folder = Path(tempfile.mkdtemp(prefix=spec.stem[:40] + "-", dir=self.scratch))
        try:
            outcome = run_call(spec, scenario, options, folder, self.settings)
            log = _read(outcome.path)
            wav = _read(outcome.path.with_name(spec.stem + ".wav"))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        ok = outcome.status is CallStatus.RAN
        return CallResult(
            spec.stem,
            ok,
            "" if ok else outcome.message,
            log,
            wav,
            socket.gethostname(),
            time.monotonic() - start,
        )

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def _read(path: Path) -> bytes | None:
    with contextlib.suppress(OSError):
        if path.is_file():
            return path.read_bytes()
    return None
