"""One child process of a test: started, its ready line awaited, its output read, ended.

    with ChildProcess([sys.executable, "examples/known_agent.py", "--port", "0"],
                      name="the known agent") as child:
        ready = child.wait_ready("cutin-known-agent: listening ", timeout=60)
        ...
        t, line = child.wait_line("cutin-known-agent: call ", timeout=10, after=t0)
        child.output(after=t0)             # every stdout line read since t0

The child's stdin is empty; a reader thread puts each stdout line, stamped with
``time.monotonic()`` when it was read, on a queue that :meth:`output` drains into
:attr:`lines`. Its stderr goes to a file in a temporary folder (or into stdout, for a
child that writes its news there), and every failure (no ready line, an early exit, a
line that never came) says the child's last stdout lines and the tail of its stderr.
A pattern is a prefix (``str``) or a regular expression (searched in the line).

``close`` (and leaving the ``with``) sends the stop signal (SIGINT by default), waits
``stop_grace_s``, then SIGKILL, and reaps the child: it never outlives the test, not
even one whose ready line never came (the failure raised inside the ``with``).
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Literal

REPO_ROOT = Path(__file__).resolve().parents[2]

Line = tuple[float, str]
"""A stdout line (newline stripped) and ``time.monotonic()`` when it was read."""
Pattern = str | re.Pattern[str]
"""A line's prefix, or a regular expression searched in it."""


def matches(pattern: Pattern, line: str) -> bool:
    if isinstance(pattern, str):
        return line.startswith(pattern)
    return pattern.search(line) is not None


def _describe(pattern: Pattern) -> str:
    return repr(pattern) if isinstance(pattern, str) else f"/{pattern.pattern}/"


class ChildProcess:
    """A child process started from ``argv`` (see the module)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str,
        env: Mapping[str, str] | None = None,
        cwd: Path = REPO_ROOT,
        stderr: Literal["file", "stdout"] = "file",
        stop_signal: int = signal.SIGINT,
        stop_grace_s: float = 10.0,
        new_session: bool = False,
    ) -> None:
        self.name = name
        """What failures call it ("the known agent")."""
        self.argv = list(argv)
        self.stop_signal = stop_signal
        self.stop_grace_s = stop_grace_s
        self.lines: list[Line] = []
        """Every stdout line read so far (:meth:`output` brings it up to date)."""
        self._queue: queue.Queue[Line] = queue.Queue()
        self._stderr_kept = ""
        self._folder = tempfile.TemporaryDirectory(prefix="cutin-child-")
        self.stderr_path = Path(self._folder.name) / "stderr.txt"
        child_env = dict(os.environ if env is None else env)
        child_env.setdefault("PYTHONUNBUFFERED", "1")
        try:
            with self.stderr_path.open("w") as err:
                self.process = subprocess.Popen(
                    self.argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=err if stderr == "file" else subprocess.STDOUT,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    env=child_env,
                    cwd=cwd,
                    start_new_session=new_session,
                )
        except BaseException:
            self._folder.cleanup()
            raise
        assert self.process.stdout is not None
        self._reader = threading.Thread(
            target=self._pump, args=(self.process.stdout,), name=f"child-{self.pid}", daemon=True
        )
        self._reader.start()

    def __enter__(self) -> ChildProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.poll()

    def running(self) -> bool:
        return self.process.poll() is None

    def _pump(self, stream: IO[str]) -> None:
        """The reader thread: every stdout line onto the queue until the pipe closes (it
        owns the stream and closes it, so ``close`` never blocks on a pending read)."""
        try:
            for line in stream:
                self._queue.put((time.monotonic(), line.rstrip("\n")))
        except (OSError, ValueError):
            pass
        finally:
            stream.close()

    def output(self, after: float = 0.0) -> list[Line]:
        """The stdout lines read at or after ``after`` (``time.monotonic()``), so far."""
        while True:
            try:
                self.lines.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return [(t, s) for t, s in self.lines if t >= after] if after else list(self.lines)

    def find(self, pattern: Pattern, after: float = 0.0) -> list[Line]:
        """The lines so far (read at or after ``after``) that match ``pattern``."""
        return [(t, s) for t, s in self.output(after) if matches(pattern, s)]

    def stderr_tail(self, n: int = 30) -> str:
        """The last ``n`` lines of its stderr (kept after ``close``)."""
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            text = self._stderr_kept
        return "\n".join(text.splitlines()[-n:])

    def story(self, n: int = 12) -> str:
        """Its last ``n`` stdout lines and the tail of its stderr, for a failure."""
        said = [s for _, s in self.output()][-n:]
        tail = self.stderr_tail()
        return f"its last lines: {said}" + (f"\nstderr:\n{tail}" if tail else "")

    def wait_line(self, pattern: Pattern, timeout: float = 10.0, after: float = 0.0) -> Line:
        """The first line read at or after ``after`` that matches ``pattern``, waiting
        up to ``timeout`` s for it; fails at once, saying so, if the child has exited
        and its output is all read."""
        return self._wait(pattern, timeout, after, ready=False)

    def wait_ready(self, pattern: Pattern, timeout: float) -> str:
        """Its ready line (the first that matches ``pattern``); fails with its stderr if
        none comes within ``timeout`` s or it exits first."""
        return self._wait(pattern, timeout, 0.0, ready=True)[1]

    def _wait(self, pattern: Pattern, timeout: float, after: float, *, ready: bool) -> Line:
        deadline = time.monotonic() + timeout
        what = "a ready line" if ready else f"a line {_describe(pattern)}"
        while True:
            done = not self._reader.is_alive()  # before reading: all of it is on the queue
            found = self.find(pattern, after)
            if found:
                return found[0]
            if done and not self.running():
                raise AssertionError(
                    f"{self.name} exited with {self.process.returncode} before printing "
                    f"{what}; {self.story()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.name} printed no {what.removeprefix('a ')} within {timeout:g} s; "
                    f"{self.story()}"
                )
            time.sleep(0.02)

    def close(self) -> None:
        """The stop signal, ``stop_grace_s`` to go, then SIGKILL; reaped either way."""
        try:
            if self.process.poll() is None:
                try:
                    self.process.send_signal(self.stop_signal)
                    self.process.wait(timeout=self.stop_grace_s)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(timeout=10)
            self._reader.join(timeout=2.0)  # EOF follows the exit unless a grandchild holds it
        finally:
            if self.process.poll() is None:  # interrupted above: still never left running
                self.process.kill()
                self.process.wait(timeout=10)
            with contextlib.suppress(OSError):
                self._stderr_kept = self.stderr_path.read_text(errors="replace")
            self._folder.cleanup()
