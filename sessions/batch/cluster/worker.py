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
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sessions.batch.call import finish_call, run_call, start_call
from sessions.batch.filing import CallOutcome, CallStatus
from sessions.batch.plan import CallSpec
from sessions.plan import CallPlan, on_line
from sessions.scenarios.model import Scenario
from sessions.version import version_string

if TYPE_CHECKING:
    from sessions.call.engine.realtime import RealtimePump
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
    """Runs calls on one node; concurrent calls each get their own scratch folder.

    Calls on a line run in real time on one pump for the whole actor, sharing the loaded
    VAD and Whisper models and the caller's speech (:mod:`sessions.batch.pump` does the
    same for ``--jobs``): the models are loaded before the actor answers, so its first
    calls do not pay for them. Virtual-clock calls run as :func:`run_call` runs them."""

    def __init__(self, settings: Settings | None = None, *, line: bool = False) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="cutin-ray-"))
        self.settings = node_settings(settings, self.scratch)
        self._pump: RealtimePump | None = None
        self._lock = threading.Lock()
        if line:
            self._warm()

    def _warm(self) -> None:
        from sessions.speech.shared import shared_transcriber
        from sessions.speech.vad import load_vad

        load_vad("onnx")
        shared_transcriber(self.settings.stt_model, cpu_threads=1)

    def _shared_pump(self) -> RealtimePump:
        with self._lock:
            if self._pump is None:
                from sessions.call.engine.realtime import RealtimePump

                self._pump = RealtimePump().start()
            return self._pump

    def _run_line(
        self, spec: CallSpec, scenario: Scenario, options: CallPlan, folder: Path
    ) -> CallOutcome:
        """One real-time call on the actor's pump, filed in ``folder`` as the pump
        executor files it."""
        scenarios = {spec.scenario: scenario}
        started = start_call(spec, options.agent, scenarios, options, folder, self.settings)
        if isinstance(started, CallOutcome):
            return started
        done = threading.Event()
        loop = started.built.loop
        started.pumped = self._shared_pump().add(
            loop,
            loop.voice.start(loop.submit),
            seconds=started.seconds,
            on_done=lambda call, error: done.set(),
        )
        done.wait()
        return finish_call(started, folder, started.pumped.error)

    def info(self) -> RunnerInfo:
        return RunnerInfo(version_string(), socket.gethostname(), os.getpid())

    def cpu_seconds(self) -> float:
        """CPU time of this process so far (all its threads): the bench's cost per call."""
        return time.process_time()

    def run(self, spec: CallSpec, scenario: Scenario, options: CallPlan) -> CallResult:
        start = time.monotonic()
        folder = Path(tempfile.mkdtemp(prefix=spec.stem[:40] + "-", dir=self.scratch))
        try:
            if on_line(options.agent):
                outcome = self._run_line(spec, scenario, options, folder)
            else:
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
        if self._pump is not None:
            self._pump.hang_up_all("interrupted")
            self._pump.close(timeout=5.0)
        shutil.rmtree(self.scratch, ignore_errors=True)


def _read(path: Path) -> bytes | None:
    with contextlib.suppress(OSError):
        if path.is_file():
            return path.read_bytes()
    return None
