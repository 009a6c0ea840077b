"""The loopback SIP far end (tests/support/sip_agent.py) as a subprocess for tests.

    with sip_far_end("--busy") as agent:
        line = SipLine(agent.uri)
        ...
        agent.wait_line("dtmf 1")        # its ``sip-agent:`` stdout lines

The far end is a real PJSIP endpoint of its own (a :class:`~tests.support.process.
ChildProcess`); the context waits for its ready line and stops it with SIGTERM (then
SIGKILL) afterwards.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.process import ChildProcess

REPO_ROOT = Path(__file__).resolve().parents[2]
AGENT = REPO_ROOT / "tests" / "support" / "sip_agent.py"
TAG = "sip-agent: "
READY = TAG + "listening "


@dataclass
class FarEnd:
    uri: str
    child: ChildProcess

    def said(self, prefix: str = "") -> list[str]:
        return [s[len(TAG) :] for _, s in self.child.find(TAG + prefix)]

    def wait_line(self, prefix: str, timeout: float = 20.0) -> str:
        return self.child.wait_line(TAG + prefix, timeout)[1][len(TAG) :]

    @property
    def port(self) -> int:
        return int(self.uri.rpartition(":")[2])


@contextmanager
def sip_far_end(*args: str, timeout: float = 30.0) -> Iterator[FarEnd]:
    argv = [sys.executable, str(AGENT), *args]
    with ChildProcess(
        argv, name="the SIP far end", cwd=REPO_ROOT, stop_signal=signal.SIGTERM
    ) as child:
        ready = child.wait_ready(READY, timeout)
        yield FarEnd(uri=ready[len(READY) :].strip(), child=child)
