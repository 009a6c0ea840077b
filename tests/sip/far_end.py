"""The loopback SIP far end (tests/support/sip_agent.py) as a subprocess for tests.

    with sip_far_end("--busy") as agent:
        line = SipLine(agent.uri)
        ...
        agent.wait_line("dtmf 1")        # its ``sip-agent:`` stdout lines

The far end is a real PJSIP endpoint of its own; the context waits for its ready
line and stops it with SIGTERM (then SIGKILL) afterwards.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
AGENT = REPO_ROOT / "tests" / "support" / "sip_agent.py"
TAG = "sip-agent: "
READY = TAG + "listening "


@dataclass
class FarEnd:
    uri: str
    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    _queue: queue.Queue[str] = field(default_factory=queue.Queue)

    def said(self, prefix: str = "") -> list[str]:
        while True:
            try:
                self.lines.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return [s[len(TAG) :] for s in self.lines if s.startswith(TAG + prefix)]

    def wait_line(self, prefix: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            found = self.said(prefix)
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise AssertionError(f"the far end never said {prefix!r}; it said {self.said()}")
            time.sleep(0.02)

    @property
    def port(self) -> int:
        return int(self.uri.rpartition(":")[2])


def _pump(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line.rstrip("\n"))


@contextmanager
def sip_far_end(*args: str, timeout: float = 30.0) -> Iterator[FarEnd]:
    process = subprocess.Popen(
        [sys.executable, str(AGENT), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO_ROOT,
    )
    far = FarEnd(uri="", process=process)
    threading.Thread(target=_pump, args=(process.stdout, far._queue), daemon=True).start()
    try:
        deadline = time.monotonic() + timeout
        while not far.uri:
            ready = far.said("listening ")
            if ready:
                far.uri = ready[0].removeprefix("listening ").strip()
            elif process.poll() is not None:
                raise AssertionError(f"the SIP far end exited with {process.returncode}")
            elif time.monotonic() > deadline:
                raise AssertionError("the SIP far end printed no ready line")
            else:
                time.sleep(0.02)
        yield far
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()
