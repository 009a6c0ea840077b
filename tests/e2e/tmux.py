"""A tmux session on a private server, for driving the real `cutin` like a person would."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path


class Tmux:
    """One detached 120×40 session on its own tmux server (``-L``), killed on close."""

    def __init__(self, width: int = 120, height: int = 40) -> None:
        self.socket = f"cutin-test-{uuid.uuid4().hex[:8]}"
        self.width = width
        self.height = height
        self.env = dict(os.environ, TERM="xterm-256color")

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=20,
            check=True,
        )
        return proc.stdout

    def start(self, argv: list[str], env: dict[str, str], *, then: str = "") -> None:
        """Run ``argv`` in the session with ``env`` added; ``then`` runs after it exits."""
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"env TERM=xterm-256color {assignments} {shlex.join(argv)}"
        if then:
            command = f"{command}; {then}"
        self._tmux(
            "new-session", "-d", "-s", "main", "-x", str(self.width), "-y", str(self.height),
            command,
        )  # fmt: skip
        self._tmux("set-option", "-t", "main", "remain-on-exit", "on")

    def pane_pid(self) -> int:
        return int(self._tmux("display-message", "-p", "-t", "main", "#{pane_pid}").strip())

    def screen(self, *, history: bool = False) -> str:
        """The pane's text now (wrapped lines joined), with the scrollback if ``history``."""
        start = ["-S", "-"] if history else []
        return self._tmux("capture-pane", "-p", "-J", *start, "-t", "main")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "main", "-l", text)

    def keys(self, *keys: str) -> None:
        for key in keys:
            self._tmux("send-keys", "-t", "main", key)

    def wait_for(
        self, what: str | Callable[[str], bool], timeout: float = 30.0, every: float = 0.2
    ) -> str:
        """Poll the screen until it shows ``what`` (text or predicate); returns the screen."""
        test = (lambda s: what in s) if isinstance(what, str) else what
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if test(screen):
                return screen
            time.sleep(every)
        raise AssertionError(f"timed out after {timeout} s waiting for {what!r}; screen:\n{screen}")

    def close(self) -> None:
        """Kill this session's server and remove its socket file."""
        try:
            path = self._tmux("display-message", "-p", "#{socket_path}").strip()
        except subprocess.CalledProcessError:
            path = ""
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"],
            capture_output=True,
            env=self.env,
            timeout=20,
        )
        if path:
            Path(path).unlink(missing_ok=True)


def pid_of(marker: str) -> int:
    """The one running process whose command line holds ``marker`` (e.g. a unique temp path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(marker.encode() in a for a in argv) and b"tmux" not in argv[0]:
            found.append(int(entry.name))
    # The shell tmux started may hold the same text; the deepest process is the program.
    if not found:
        raise AssertionError(f"no process with {marker!r} in its command line")
    return max(found, key=_depth)


def _depth(pid: int) -> int:
    depth = 0
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        depth += 1
    return depth


def cutin_binary() -> Path:
    """The venv's console script (the program a user runs)."""
    import sys

    return Path(sys.executable).parent / "cutin"
