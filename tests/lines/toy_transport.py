"""A toy transport, whole: raw PCM16 at 16 kHz in binary WebSocket messages.

It is what a new transport is: this module (a :class:`SocketLine` subclass with only
its protocol, and ``make_line``) plus one :class:`~sessions.lines.registry.Transport`
entry, which the tests register and remove again. Nothing else in cutin names it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sessions.hostile.redact import redact_url
from sessions.lines.base import LINE_RATE, Audio, LineLimits, NoticeKind
from sessions.lines.registry import Transport
from sessions.lines.socket_line import SocketLine
from sessions.speech.wav import float_to_pcm16, pcm16_to_float

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

TRANSPORT = Transport(
    kind="toy",
    about="raw PCM16",
    audio="PCM16 16 kHz",
    builder="tests.lines.toy_transport:make_line",
    prefix="toy:",
)


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    assert spec.url is not None
    return ToyLine(spec.url)


class ToyLine(SocketLine):
    name = "toy"
    audio_format = f"audio/pcm;rate={LINE_RATE}"

    def __init__(self, url: str, *, limits: LineLimits | None = None) -> None:
        super().__init__(redact_url(url), urls=[url], limits=limits)
        self._url = url

    def send(self, samples: Audio) -> None:
        if self.is_open:
            self._post(float_to_pcm16(np.asarray(samples, dtype=np.float32)))

    def _connect(self, timeout_s: float) -> Any:
        return self._dial(self._url, timeout_s)

    def _opened(self) -> None:
        self._notify(NoticeKind.OPEN, f"connected to {self.target}; raw PCM16")
        self._notify(NoticeKind.FORMAT, "pcm16 16000 Hz", {"encoding": "pcm16", "rate": LINE_RATE})

    def _handle(self, raw: str | bytes) -> None:
        if isinstance(raw, str) or len(raw) % 2:
            self._error("not_pcm", "a message that is not PCM16")
            return
        self.playout.push(pcm16_to_float(raw))

    def _write(self, item: bytes) -> None:
        self._conn.send(item)
