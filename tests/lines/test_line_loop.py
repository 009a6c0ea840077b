"""Every socket line of the process on one event loop, not two threads per line.

Eight raw-PCM lines to one echo server (a real WebSocket server on loopback, started
here) run at once: no line starts a thread of its own (the line loop is the one thread
they share), and each line's audio comes back whole and in order, so the loop's send
queue keeps every line's frames as they were sent.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from sessions.lines.base import LineState
from sessions.lines.pcm import PcmLine
from sessions.lines.socket_line import line_loop
from tests.lines.test_socket_line import EchoServer

LINES = 8
FRAMES = 25  # 0.8 s of 32 ms frames per line


def _line_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("cutin-")]


def test_eight_lines_share_one_loop_and_keep_their_frames_in_order() -> None:
    line_loop()  # the one loop thread, before counting
    before = _line_threads()
    server = EchoServer()
    lines = [PcmLine(server.url.replace("/pcm", f"/pcm{i}"), rate=16000) for i in range(LINES)]
    try:
        for line in lines:
            line.open(timeout_s=5.0)
        assert all(line.state is LineState.OPEN for line in lines)
        assert _line_threads() == before, "a line started a thread of its own"
        sent = []
        for i in range(LINES):
            # A ramp per line, distinct between lines: a frame out of order or from
            # another line shows.
            ramp = ((np.arange(FRAMES * 512) % 9973) / 20000 + i / 100).astype(np.float32)
            sent.append(ramp)
        for k in range(FRAMES):
            for line, ramp in zip(lines, sent, strict=True):
                line.send(ramp[k * 512 : (k + 1) * 512])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            line.playout.received < FRAMES * 512 for line in lines
        ):
            time.sleep(0.02)
        for line, ramp in zip(lines, sent, strict=True):
            back = line.take(FRAMES * 512)
            assert np.allclose(back, ramp, atol=1e-4)
    finally:
        for line in lines:
            line.close()
        server.close()
    assert all(line.state is LineState.CLOSED for line in lines)
    assert _line_threads() == before
