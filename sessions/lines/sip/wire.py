"""The pipe between a SIP line and its worker process: typed, length-prefixed frames.

Each frame is one type byte, a 4-byte big-endian payload length, and the payload.
cutin → worker: :data:`CONFIG` (JSON, first and once), :data:`AUDIO` (8 kHz 16-bit
PCM of the caller), :data:`DTMF` (digits, ASCII), :data:`HANGUP` (empty). worker →
cutin: :data:`AUDIO` (the agent's 8 kHz PCM, 20 ms frames) and :data:`EVENT` (JSON:
``{"event": ...}``). A payload over :data:`MAX_PAYLOAD` is a broken pipe, not a
frame: the reader raises. Stdlib only.
"""

from __future__ import annotations

import json
import struct
from typing import IO, Any

CONFIG = b"c"
AUDIO = b"a"
DTMF = b"d"
HANGUP = b"h"
EVENT = b"e"
MAX_PAYLOAD = 1 << 16
_HEAD = struct.Struct(">cI")


class WireError(RuntimeError):
    """The other side sent something that is not a frame."""


def frame(kind: bytes, payload: bytes = b"") -> bytes:
    return _HEAD.pack(kind, len(payload)) + payload


def event(name: str, **data: Any) -> bytes:
    return frame(EVENT, json.dumps({"event": name, **data}).encode())


def read_frame(stream: IO[bytes]) -> tuple[bytes, bytes] | None:
    """The next frame, or None at the end of the stream."""
    head = _read_exactly(stream, _HEAD.size)
    if head is None:
        return None
    kind, size = _HEAD.unpack(head)
    if size > MAX_PAYLOAD:
        raise WireError(f"a frame of {size} bytes (over {MAX_PAYLOAD})")
    payload = _read_exactly(stream, size) if size else b""
    if payload is None:
        raise WireError("the stream ended inside a frame")
    return kind, payload


def _read_exactly(stream: IO[bytes], n: int) -> bytes | None:
    parts: list[bytes] = []
    got = 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            if got:
                raise WireError("the stream ended inside a frame")
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)
