"""Misbehaving agents and the checks a run against one needs (tests/lines/test_hostile_agents).

The agents are scripts for :class:`~tests.support.twilio_agent.TwilioAgent` (a real
``websockets`` server on loopback, any path): Twilio Media Streams ones, and Realtime
ones that answer the ``openai`` client's ``session.update`` themselves
(:func:`realtime_hello`), since the server only speaks JSON both ways.

:func:`run_measured` runs ``cutin`` as a child and takes that child's own peak memory
(its ``VmHWM`` while it runs: not ``ru_maxrss``, which carries the test session's own
size into every child); :func:`run_tui` runs ``cutin call`` on a pseudo-terminal and
quits it with ctrl+q. :data:`RAW` and :func:`raw_controls` find what a terminal would
act on; :func:`log_strings` walks every string of a JSONL log, decoded, so an escape
written as ``\\u001b`` is found too.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.twilio_agent import AgentCall

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""ESC, the other C0 controls but newline and tab, DEL and the C1 controls."""

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[H\x9b31m"
"""A window-title set (OSC … BEL), a screen clear, cursor home and a C1 CSI."""


def raw_controls(text: str) -> list[str]:
    """The control characters in ``text`` a terminal would act on (empty: inert)."""
    return RAW.findall(text)


def log_strings(path: Path) -> Iterator[str]:
    """Every key and string value of every line of a JSONL log, decoded."""
    stack: list[Any] = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line
    ]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def log_events(path: Path) -> list[dict[str, Any]]:
    """The events of a JSONL log (the header left out), parsed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:] if line]


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str
    peak_mb: float
    """The child's peak resident memory (``ru_maxrss``), MB."""


def _hwm_kib(pid: int) -> int | None:
    """The high-water mark of ``pid``'s resident memory since its exec (``VmHWM``), KiB."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_measured(argv: list[str], env: dict[str, str], timeout: float = 180.0) -> Measured:
    """``python ARGV`` to completion (stdin empty), with its own peak memory.

    The peak is the child's ``VmHWM``, read every 20 ms while it runs: the memory of the
    program it became. Not ``ru_maxrss``: Linux carries the pre-exec high-water mark of
    the forked (or vforked) copy of the parent into it, so from a test session that has
    loaded Whisper every child "peaks" at the session's size (850 MB whatever it did)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, *argv], stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env
        )
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        peak = [0]
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                kib = _hwm_kib(proc.pid)
                if kib is not None:
                    peak[0] = max(peak[0], kib)
                done.wait(0.02)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            # Wait without reaping, so the last look at VmHWM is as late as it can be.
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
            done.set()
            watcher.join()
            _, status, _usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            done.set()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        assert peak[0] > 0, "the child's memory was never read"
        return Measured(
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            peak[0] / 1024,
        )


def simulate_argv(agent: str, out: Path, max_seconds: float = 30.0) -> list[str]:
    """``cutin simulate`` of one call of the default scenario against ``agent``."""
    return [
        "-m", "cutin_tui", "simulate", "--agent", agent, "--scenario", "retail-order-change",
        "--runs", "1", "--max-seconds", f"{max_seconds:g}", "--out", str(out),
    ]  # fmt: skip


# ---- Twilio ---------------------------------------------------------------------------


def media(stream_sid: str, ulaw: bytes) -> dict[str, Any]:
    payload = base64.b64encode(ulaw).decode("ascii")
    return {"event": "media", "streamSid": stream_sid, "media": {"payload": payload}}


def mark(stream_sid: str, name: str) -> dict[str, Any]:
    return {"event": "mark", "streamSid": stream_sid, "mark": {"name": name}}


def ulaw_voice(seconds: float) -> bytes:
    """A 300 Hz tone as 8 kHz μ-law: an agent that talks (the VAD may or may not call
    a pure tone speech; the tests only need audio on the line)."""
    import numpy as np

    from sessions.lines.codec import encode_ulaw

    t = np.arange(int(seconds * 8000)) / 8000
    return encode_ulaw(0.3 * np.sin(2 * np.pi * 300 * t) * (1 + np.sin(2 * np.pi * 3 * t)) / 2)


# ---- Realtime -------------------------------------------------------------------------


async def expect_type(call: AgentCall, name: str, timeout: float = 60.0) -> dict[str, Any]:
    """The next client event of ``type`` ``name`` (others in between are skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        message = await asyncio.wait_for(call._inbox.get(), max(left, 0.001))
        if message.get("type") == name:
            return message


async def realtime_hello(call: AgentCall) -> dict[str, Any]:
    """Realtime's opening: ``session.created``, then ``session.updated`` for the
    client's ``session.update`` (its session returned as is); returns that session."""
    await call.send({"type": "session.created", "event_id": "e0", "session": {}})
    update = await expect_type(call, "session.update")
    session = update.get("session", {})
    await call.send({"type": "session.updated", "event_id": "e1", "session": session})
    return dict(session)


def audio_delta(pcm: bytes, item: str = "item_1", response: str = "resp_1") -> dict[str, Any]:
    return {
        "type": "response.output_audio.delta",
        "event_id": "e_audio",
        "response_id": response,
        "item_id": item,
        "output_index": 0,
        "content_index": 0,
        "delta": base64.b64encode(pcm).decode("ascii"),
    }


def pcm24_voice(seconds: float) -> bytes:
    """A 300 Hz tone as 24 kHz PCM16."""
    import numpy as np

    t = np.arange(int(seconds * 24_000)) / 24_000
    return (0.3 * 32767 * np.sin(2 * np.pi * 300 * t)).astype("<i2").tobytes()


def run_tui(
    argv: list[str], env: dict[str, str], done: Callable[[], bool], timeout: float = 180.0
) -> tuple[int, bytes]:
    """``python ARGV`` on a pseudo-terminal (a Textual app, as a user runs it); once
    ``done()`` holds, ctrl+q quits it. Returns its exit code and everything it wrote."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of 120 × 40
        os.environ.clear()
        os.environ.update({**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
        os.execv(sys.executable, [sys.executable, *argv])
    out = bytearray()
    deadline = time.monotonic() + timeout
    quit_at: float | None = None
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # the child closed the terminal: it has exited
                    break
                if not data:
                    break
                out += data
            if quit_at is None and done():
                quit_at = time.monotonic() + 1.0  # let the screen show the end first
            if quit_at is not None and time.monotonic() >= quit_at:
                os.write(fd, b"\x11")  # ctrl+q
                quit_at = deadline + 1  # once
        else:
            os.kill(pid, signal.SIGKILL)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), bytes(out)
