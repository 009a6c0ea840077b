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
:class:`~sessions.lines.socket_line.SocketLine`'s, the media stream's mechanics
(JSON, base64 audio, marks) :class:`~sessions.lines.json_stream.JsonStreamLine`'s;
this module is the protocol only.

The wire format is fixed by Twilio: ``audio/x-mulaw`` at 8000 Hz, mono. An agent
sending something else (16-bit PCM, say) is told apart by how its bytes decode, and
reported once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sessions.hostile.redact import redact_url
from sessions.lines.base import LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.codec import decode_ulaw, encode_ulaw
from sessions.lines.json_stream import JsonStreamLine, b64, new_sid
from sessions.lines.wire_audio import G711In, WireFrames, looks_like_pcm16

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


class TwilioLine(JsonStreamLine):
    """A :class:`~sessions.lines.base.Line` to an agent that speaks Twilio Media Streams."""

    name = "twilio"
    audio_format = AUDIO_FORMAT
    takes = "Twilio sends text"
    stream_field = "streamSid"
    stream_key = "stream_sid"

    def __init__(
        self,
        url: str,
        *,
        custom_parameters: dict[str, str] | None = None,
        playout: PlayoutBuffer | None = None,
        limits: LineLimits | None = None,
    ) -> None:
        self.stream_sid = new_sid("MZ")
        super().__init__(url, stream=self.stream_sid, urls=[url], limits=limits, playout=playout)
        self.custom_parameters = dict(custom_parameters or {})
        self.call_sid = new_sid("CA")
        self.account_sid = new_sid("AC")
        self._frames = WireFrames(TWILIO_RATE, CHUNK_BYTES, encode_ulaw)
        self._in = G711In(decode_ulaw, self.playout)

    def _opened(self) -> None:
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Twilio Media Streams, {AUDIO_FORMAT} mono",
            {"stream_sid": self.stream_sid, "call_sid": self.call_sid},
        )
        self._format(
            "audio/x-mulaw 8000 Hz mono (stated: Twilio's format is fixed)",
            "audio/x-mulaw",
            TWILIO_RATE,
        )

    # -- messages ------------------------------------------------------------------

    def _hello(self) -> list[dict[str, Any]]:
        connected = {"event": "connected", "protocol": "Call", "version": "1.0.0"}
        self.sequence += 1
        start = {
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
        return [connected, start]

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        self.sequence += 1
        return {
            "event": "media",
            "sequenceNumber": str(self.sequence),
            "media": {
                "track": "inbound",
                "chunk": str(self.chunks_sent),
                "timestamp": str((self.chunks_sent - 1) * CHUNK_MS),
                "payload": b64(chunk),
            },
            "streamSid": self.stream_sid,
        }

    def _message(self, event: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sequence += 1
        return {
            "event": event,
            "sequenceNumber": str(self.sequence),
            "streamSid": self.stream_sid,
            **body,
        }

    def _stop(self) -> dict[str, Any]:
        return {"accountSid": self.account_sid, "callSid": self.call_sid}

    # -- the agent's messages ------------------------------------------------------

    def _check_media(self, message: dict[str, Any], data: bytes) -> None:
        if looks_like_pcm16(data):
            self._once(
                "pcm16",
                NoticeKind.ERROR,
                "the agent's media looks like 16-bit PCM, not 8 kHz μ-law; it will sound"
                " like noise",
                {"kind": "format", "expected": "audio/x-mulaw", "looks_like": "audio/l16"},
            )

    def _shown_mark(self, name: str) -> tuple[str, str]:
        return name, name  # whole: the limits bound its length
