"""A userspace PulseAudio with one null sink: a real audio device on a machine without
a sound card, for tests and benchmarks that play and record.

Playing to the default device writes into the sink ``vsink``; recording the default
device reads its monitor, so what is played comes back (some 50-100 ms later).
PortAudio reaches the server through ALSA's pulse plugin; the environment that
points it there (``XDG_RUNTIME_DIR``, ``PULSE_SERVER``) must be set *before*
PortAudio initializes, so import ``sounddevice`` only after :func:`activate` (the
session fixture ``pulse_server`` does both; :func:`reinit_portaudio` covers a
``sounddevice`` that was imported earlier).

From a benchmark::

    with pulse_session(Path(tmp)) as server:
        import sounddevice  # sees the virtual device
        ...

Needs Debian's pulseaudio, pulseaudio-utils, libportaudio2 and libasound2-plugins.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.process import ChildProcess

INSTALL_HINT = "apt-get install pulseaudio pulseaudio-utils libportaudio2 libasound2-plugins"
SINK = "vsink"
RATE = 16_000

_NULL_PA = """\
load-module module-native-protocol-unix auth-anonymous=1 socket={socket}
load-module module-null-sink sink_name={sink} rate={rate} channels=1 \
sink_properties=device.description=VirtualSink
set-default-sink {sink}
set-default-source {sink}.monitor
"""

# Used only when the system ALSA config does not already route "default" to a running
# PulseAudio (Debian's /etc/alsa/conf.d/99-pulse.conf does).
_ASOUNDRC = """\
pcm.!default { type pulse }
ctl.!default { type pulse }
"""


class PulseUnavailable(RuntimeError):
    """PulseAudio (or the ALSA bridge to it) is not installed or did not start."""


@dataclass
class PulseServer:
    root: Path
    child: ChildProcess
    env: dict[str, str]
    """Variables a client needs (set them in os.environ before PortAudio starts)."""
    log: Path
    _saved: dict[str, str | None] = field(default_factory=dict)

    def running(self) -> bool:
        return self.child.running()

    def pactl(self, *args: str) -> str:
        out = subprocess.run(
            ["pactl", *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout

    def stop(self) -> None:
        """Stop the server this object started (SIGTERM, then SIGKILL; reaped)."""
        self.child.close()


def _alsa_routes_default_to_pulse() -> bool:
    for conf in ("/etc/alsa/conf.d/99-pulse.conf", "/usr/share/alsa/alsa.conf.d/99-pulse.conf"):
        if Path(conf).is_file():
            return True
    return False


def _alsa_pulse_plugin_present() -> bool:
    patterns = (
        "/usr/lib/*/alsa-lib/libasound_module_pcm_pulse.so",
        "/usr/lib/alsa-lib/libasound_module_pcm_pulse.so",
        "/usr/lib64/alsa-lib/libasound_module_pcm_pulse.so",
    )
    return any(glob.glob(p) for p in patterns)


def start_pulse(root: Path, *, timeout_s: float = 10.0) -> PulseServer:
    """Start a PulseAudio with a null sink whose files all live under ``root``."""
    for tool in ("pulseaudio", "pactl"):
        if shutil.which(tool) is None:
            raise PulseUnavailable(f"{tool} is not installed ({INSTALL_HINT})")
    if not _alsa_pulse_plugin_present():
        raise PulseUnavailable(f"ALSA's pulse plugin is missing ({INSTALL_HINT})")
    root = root.resolve()
    run = root / "run"
    run.mkdir(parents=True, exist_ok=True)
    socket = run / "native"
    config = root / "null.pa"
    config.write_text(_NULL_PA.format(socket=socket, sink=SINK, rate=RATE))
    env = {"XDG_RUNTIME_DIR": str(run), "PULSE_SERVER": f"unix:{socket}"}
    if not _alsa_routes_default_to_pulse():
        (root / ".asoundrc").write_text(_ASOUNDRC)
        env["HOME"] = str(root)
    log = root / "pulse.log"
    server_env = {**os.environ, **env, "HOME": str(root)}
    child = ChildProcess(
        [
            "pulseaudio",
            "-n",
            "-F",
            str(config),
            "--daemonize=no",
            "--exit-idle-time=-1",
            "--use-pid-file=no",
            "--disallow-exit",
            f"--log-target=file:{log}",
        ],
        name="PulseAudio",
        env=server_env,
        cwd=root,
        stderr="stdout",
        stop_signal=signal.SIGTERM,
        stop_grace_s=5.0,
    )
    server = PulseServer(root, child, env, log)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and child.running():
            probe = subprocess.run(
                ["pactl", "info"], env={**os.environ, **env}, capture_output=True, timeout=10
            )
            if probe.returncode == 0:
                return server
            time.sleep(0.1)
    except BaseException:
        server.stop()
        raise
    server.stop()
    tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
    raise PulseUnavailable(f"PulseAudio did not start: {' | '.join(tail) or 'no log'}")


def activate(server: PulseServer) -> None:
    """Point this process's audio clients at ``server`` (remembering the old values)."""
    for key, value in server.env.items():
        server._saved.setdefault(key, os.environ.get(key))
        os.environ[key] = value
    reinit_portaudio()


def deactivate(server: PulseServer) -> None:
    for key, old in server._saved.items():
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old
    server._saved.clear()


def reinit_portaudio() -> None:
    """If ``sounddevice`` is already imported, restart PortAudio so it sees the new env."""
    sd = sys.modules.get("sounddevice")
    if sd is not None:
        with contextlib.suppress(Exception):
            sd._terminate()
        sd._initialize()


@contextlib.contextmanager
def pulse_session(root: Path) -> Iterator[PulseServer]:
    """Start, activate, and at the end stop a server (for benchmarks and scripts)."""
    server = start_pulse(root)
    try:
        activate(server)
        yield server
    finally:
        deactivate(server)
        server.stop()


@pytest.fixture(scope="session")
def pulse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PulseServer]:
    """A running virtual audio device for the whole test session; skips when unavailable.

    Import ``sounddevice`` inside tests that use it, after this fixture has run.
    """
    try:
        server = start_pulse(tmp_path_factory.mktemp("pulse"))
    except PulseUnavailable as exc:
        pytest.skip(f"no virtual audio device: {exc}")
    activate(server)
    try:
        yield server
    finally:
        deactivate(server)
        server.stop()
