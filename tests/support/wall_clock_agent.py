"""A Twilio Media Streams far end that times what it hears on its own wall clock.

An agent aligning cutin's log with its own logs has only its clock and the audio it
received. This one stamps every message with ``time.time()`` the moment its reader
takes it off the socket, and keeps the caller's audio as it arrived (8 kHz μ-law), so
it can say on its own clock:

* when the caller's line time 0 was (:attr:`HeardStream.zero`): a sample cannot leave
  cutin before its moment on the line, so every media message arrives at or after
  ``zero + samples_through_it / 8000``; the earliest arrivals (a message completed
  exactly at the end of a frame cutin processed on time) sit on that bound, so the
  lower envelope of ``arrival - samples / 8000`` is line time 0 as this end saw it;
* when the caller's first sound began (:meth:`HeardStream.first_sound`, at cutin's level
  of 0.02) and when the message carrying it arrived (:meth:`HeardStream.received_at`).

Nothing here reads cutin's log or clock: the test compares the two.

    with WallClockAgent() as agent:
        ...  # dial agent.url
        heard = agent.heard(stream_sid)  # the log's line ``open`` event names it
        heard.zero, heard.first_sound()
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.support.twilio_agent import TwilioAgent

RATE = 8000
LEVEL = 0.02
"""A sample at or over this amplitude is sound (the known agent's and cutin's level)."""
WALL = "_wall"
"""The key under which each received message carries its arrival time."""

_ULAW_TABLE: npt.NDArray[np.float32] | None = None


def _ulaw_table() -> npt.NDArray[np.float32]:
    """G.711 μ-law decoding, byte → float in [-1, 1], written out here so this end's
    ears do not borrow cutin's codec."""
    global _ULAW_TABLE
    if _ULAW_TABLE is None:
        u = ~np.arange(256, dtype=np.int32) & 0xFF
        sign = u & 0x80
        exponent = (u >> 4) & 0x07
        mantissa = u & 0x0F
        magnitude = ((mantissa << 3) + 0x84) << exponent
        value = np.where(sign != 0, 0x84 - magnitude, magnitude - 0x84)
        _ULAW_TABLE = (value / 32768.0).astype(np.float32)
    return _ULAW_TABLE


@dataclass
class HeardStream:
    """One call's caller audio as this end received it."""

    arrivals: list[tuple[float, int]]
    """Each media message: (its arrival on this end's wall clock, samples through it)."""
    audio: npt.NDArray[np.float32]

    @property
    def zero(self) -> float:
        """Line time 0 on this end's wall clock (the lower envelope; see the module)."""
        if not self.arrivals:
            raise AssertionError("no caller audio was received")
        return min(wall - samples / RATE for wall, samples in self.arrivals)

    def first_sound(self, level: float = LEVEL) -> int | None:
        """The first sample at or over ``level`` (None: silence throughout)."""
        loud = np.flatnonzero(np.abs(self.audio) >= level)
        return int(loud[0]) if loud.size else None

    def received_at(self, sample: int) -> float:
        """When the message carrying ``sample`` arrived."""
        for wall, through in self.arrivals:
            if sample < through:
                return wall
        raise AssertionError(f"sample {sample} never arrived")


class WallClockAgent(TwilioAgent):
    """A silent Twilio agent (it answers nothing) that times every message it receives."""

    def __enter__(self) -> WallClockAgent:
        super().__enter__()
        return self

    def parse(self, raw: str | bytes) -> dict[str, Any]:
        wall = time.time()  # first thing: the moment the reader has the message
        message = super().parse(raw)
        message[WALL] = wall
        return message

    def heard(self, stream_sid: str) -> HeardStream:
        """The caller's audio of the call whose stream is ``stream_sid``."""
        table = _ulaw_table()
        arrivals: list[tuple[float, int]] = []
        chunks: list[npt.NDArray[np.float32]] = []
        total = 0
        media = [m for call in self.calls for m in call.events("media")]
        for message in (m for m in media if m.get("streamSid") == stream_sid):
            payload = base64.b64decode(message["media"]["payload"])
            chunk = table[np.frombuffer(payload, dtype=np.uint8)]
            total += chunk.size
            chunks.append(chunk)
            arrivals.append((float(message[WALL]), total))
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
        return HeardStream(arrivals, audio)
