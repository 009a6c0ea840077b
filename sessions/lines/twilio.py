"""Twilio Media Streams over a WebSocket, with cutin as Twilio's side of the call.

cutin connects to the agent's ``ws://`` / ``wss://`` URL as Twilio would, says
``connected`` and ``start`` (8 kHz μ-law, one inbound track), then streams the
caller's audio as ``media`` messages of 20 ms (160 μ-law bytes) with increasing
``sequenceNumber``, ``chunk`` and ``timestamp``. From the agent it takes ``media``
(decoded, resampled to 16 kHz and queued in a :class:`PlayoutBuffer`), ``clear``
(the queue is emptied, as Twilio stops playback) and ``mark`` (echoed back once the
audio queued before it has been played, or cleared, as Twilio does). ``close()``
says ``stop`` and closes the socket.

Threads, states, notices, limits and the wording of failures are
:class:`~sessions.lines.socket_line.SocketLine`'s; this module is the protocol only.

The wire format is fixed by Twilio: ``audio/x-mulaw`` at 8000 Hz, mono. An agent
sending something else (16-bit PCM, say) is told apart by how its bytes decode, and
reported once.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from sessions.lines.base import (
    LINE_RATE,
    Audio,
    LineLimits,
    NoticeKind,
    PlayoutBuffer,
)
from sessions.lines.codec import StreamResampler, decode_ulaw, encode_ulaw
from sessions.lines.notices import check_ws_url
from sessions.lines.socket_line import SocketLine
from sessions.redact import redact_url

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["TwilioLine", "looks_like_pcm16", "make_line", "redact_url"]

TWILIO_RATE = 8000
CHUNK_BYTES = 160
"""One Twilio media message: 20 ms of 8 kHz μ-law."""
CHUNK_MS = 20
AUDIO_FORMAT = "audio/x-mulaw;rate=8000"
MEDIA_FORMAT = {"encoding": "audio/x-mulaw", "sampleRate": TWILIO_RATE, "channels": 1}


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``twilio:ws://HOST:PORT/PATH``."""
    assert spec.url is not None
    return TwilioLine(spec.url)


def _sid(prefix: str) -> str:
    return prefix + uuid.uuid4().hex


def looks_like_pcm16(payload: bytes) -> bool:
    """Whether bytes sent as μ-law are more likely 16-bit little-endian PCM.

    Quiet PCM16 has high bytes near 0x00 / 0xFF at every odd position; as μ-law, 0x00
    is full-scale negative and 0xFF is silence, so half the "samples" would sit at one
    of the two extremes while the other half vary: nothing a μ-law voice does.
    """
    if len(payload) < 80 or len(payload) % 2:
        return False
    data = np.frombuffer(payload, dtype=np.uint8)
    high = data[1::2]
    extreme = np.isin(high, (0x00, 0x01, 0xFE, 0xFF)).mean()
    low_extreme = np.isin(data[0::2], (0x00, 0x01, 0xFE, 0xFF)).mean()
    return bool(extreme > 0.9 and low_extreme < 0.5)


class TwilioLine(SocketLine):
    """A :class:`~sessions.lines.base.Line` to an agent that speaks Twilio Media Streams."""

    name = "twilio"
    audio_format = AUDIO_FORMAT

    def __init__(
        self,
        url: str,
        *,
        custom_parameters: dict[str, str] | None = None,
        playout: PlayoutBuffer | None = None,
        limits: LineLimits | None = None,
    ) -> None:
        super().__init__(redact_url(url), urls=[url], limits=limits, playout=playout)
        self._url = url
        self.custom_parameters = dict(custom_parameters or {})
        self.stream_sid = _sid("MZ")
        self.call_sid = _sid("CA")
        self.account_sid = _sid("AC")

        self._send_lock = threading.Lock()
        self._down = StreamResampler(LINE_RATE, TWILIO_RATE)
        self._pending = bytearray()
        self._up = StreamResampler(TWILIO_RATE, LINE_RATE)

        self._marks_lock = threading.Lock()
        self._marks: deque[tuple[int, str]] = deque()
        """Marks waiting to be echoed: (buffer position they follow, name)."""

        self.sequence = 0
        """The last ``sequenceNumber`` sent."""
        self.chunks_sent = 0
        self.media_received = 0
        """Agent ``media`` messages taken."""
        self.bytes_received = 0

    # -- the Line protocol -------------------------------------------------------

    def send(self, samples: Audio) -> None:
        if not self.is_open:
            return
        with self._send_lock:
            self._pending += encode_ulaw(self._down.process(samples))
            whole = len(self._pending) - len(self._pending) % CHUNK_BYTES
            if whole == 0:
                return
            chunks = [
                bytes(self._pending[i : i + CHUNK_BYTES]) for i in range(0, whole, CHUNK_BYTES)
            ]
            del self._pending[:whole]
            self._post(("media", chunks))  # under the lock: chunks leave in audio order

    def take(self, n: int) -> Audio:
        out = self.playout.take(n)
        if self._marks:
            self._echo_played_marks()
        return out

    # -- SocketLine hooks ----------------------------------------------------------

    def _connect(self, timeout_s: float) -> Any:
        check_ws_url(self._url, self.name, self.target)
        from websockets.sync.client import connect

        conn = connect(self._url, close_timeout=2.0, **self.socket_options(timeout_s))
        # The line closes it itself; entering says so (websockets >= 17 warns otherwise).
        return conn.__enter__()

    def _handshake(self, deadline: float, timeout_s: float) -> None:
        self._conn.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
        self._conn.send(json.dumps(self._start_message()))
        self._ready.set()  # Twilio's side speaks first and waits for nothing

    def _opened(self) -> None:
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Twilio Media Streams, {AUDIO_FORMAT} mono",
            {"stream_sid": self.stream_sid, "call_sid": self.call_sid},
        )
        self._notify(
            NoticeKind.FORMAT,
            "audio/x-mulaw 8000 Hz mono (stated: Twilio's format is fixed)",
            {"encoding": "audio/x-mulaw", "rate": TWILIO_RATE, "channels": 1, "stated": True},
        )

    def _hangup(self) -> None:
        self._post(("stop", None))
        self._post_stop()

    def _ended(self) -> None:
        with self._marks_lock:
            self._marks.clear()

    def _write(self, item: tuple[str, Any]) -> None:
        kind, payload = item
        if kind == "media":
            for chunk in payload:
                self._conn.send(json.dumps(self._media_message(chunk)))
        elif kind == "mark":
            self.sequence += 1
            mark = {
                "event": "mark",
                "sequenceNumber": str(self.sequence),
                "streamSid": self.stream_sid,
                "mark": {"name": payload},
            }
            self._conn.send(json.dumps(mark))
        elif kind == "stop":
            self.sequence += 1
            stop = {
                "event": "stop",
                "sequenceNumber": str(self.sequence),
                "streamSid": self.stream_sid,
                "stop": {"accountSid": self.account_sid, "callSid": self.call_sid},
            }
            self._conn.send(json.dumps(stop))
            self._conn.close(1000, "call ended")

    # -- messages ------------------------------------------------------------------

    def _start_message(self) -> dict[str, Any]:
        self.sequence += 1
        return {
            "event": "start",
            "sequenceNumber": str(self.sequence),
            "start": {
                "accountSid": self.account_sid,
                "streamSid": self.stream_sid,
                "callSid": self.call_sid,
                "tracks": ["inbound"],
                "customParameters": self.custom_parameters,
                "mediaFormat": dict(MEDIA_FORMAT),
            },
            "streamSid": self.stream_sid,
        }

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        self.sequence += 1
        self.chunks_sent += 1
        return {
            "event": "media",
            "sequenceNumber": str(self.sequence),
            "media": {
                "track": "inbound",
                "chunk": str(self.chunks_sent),
                "timestamp": str((self.chunks_sent - 1) * CHUNK_MS),
                "payload": base64.b64encode(chunk).decode("ascii"),
            },
            "streamSid": self.stream_sid,
        }

    def _handle(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            self._error("binary", f"a binary message of {len(raw)} bytes (Twilio sends text)")
            return
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError):
            self._error("not_json", f"a message that is not JSON: {raw[:60]!r}")
            return
        if not isinstance(message, dict):
            self._error("not_object", f"a JSON message that is not an object: {raw[:60]!r}")
            return
        event = message.get("event")
        sid = message.get("streamSid")
        if sid is not None and sid != self.stream_sid and event in ("media", "mark", "clear"):
            self._once(
                "stream_sid",
                NoticeKind.ERROR,
                f"the agent's streamSid {str(sid)[:40]!r} is not this stream's",
                {"kind": "stream_sid", "got": str(sid)[:40]},
            )
        if event == "media":
            self._on_media(message)
        elif event == "clear":
            self._on_clear()
        elif event == "mark":
            self._on_mark(message)
        elif isinstance(event, str):
            self._error(f"event:{event[:30]}", f"an unknown event {event[:30]!r}", {"event": event})
        else:
            self._error("no_event", f"a message without an event: {raw[:60]!r}")

    def _on_media(self, message: dict[str, Any]) -> None:
        media = message.get("media")
        payload = media.get("payload") if isinstance(media, dict) else None
        if not isinstance(payload, str):
            self._error("media_no_payload", "a media message without media.payload")
            return
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            self._error("media_base64", "a media payload that is not base64")
            return
        if not data:
            self._error("media_empty", "an empty media payload")
            return
        if looks_like_pcm16(data):
            self._once(
                "pcm16",
                NoticeKind.ERROR,
                "the agent's media looks like 16-bit PCM, not 8 kHz μ-law; it will sound"
                " like noise",
                {"kind": "format", "expected": "audio/x-mulaw", "looks_like": "audio/l16"},
            )
        self.media_received += 1
        self.bytes_received += len(data)
        self.playout.push(self._up.process(decode_ulaw(data)))
        if self._marks:
            self._echo_played_marks()

    def _on_clear(self) -> None:
        dropped = self.playout.clear()
        self._up.reset()
        seconds = dropped / LINE_RATE
        self._notify(
            NoticeKind.CLEAR,
            f"the agent cleared {seconds:.2f} s of queued audio",
            {"dropped_s": seconds, "dropped_samples": dropped},
        )
        self._echo_played_marks(cleared=True)

    def _on_mark(self, message: dict[str, Any]) -> None:
        mark = message.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        if not isinstance(name, str):
            self._error("mark_no_name", "a mark message without mark.name")
            return
        with self._marks_lock:
            if not self._mark_fits(name, len(self._marks)):
                return
            self._marks.append((self.playout.received - self.playout.dropped, name))
        self._echo_played_marks()

    def _echo_played_marks(self, *, cleared: bool = False) -> None:
        done = self.playout.played + self.playout.cleared
        echoed: list[str] = []
        with self._marks_lock:
            while self._marks and (cleared or self._marks[0][0] <= done):
                echoed.append(self._marks.popleft()[1])
        for name in echoed:
            self._post(("mark", name))
            how = "cleared" if cleared else "played"
            self._notify(
                NoticeKind.MARK, f"mark {name!r} {how}", {"name": name, "cleared": cleared}
            )
