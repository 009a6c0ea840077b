"""Plivo audio streams over a WebSocket, with cutin as Plivo's side of the call.

``--agent plivo:ws://HOST:PORT/PATH[?codec=mulaw|l16&rate=8000|16000]`` dials the agent
as a bidirectional ``<Stream>`` does; the URL names the stream's ``contentType``, which
a Plivo app sets in its XML (see :mod:`sessions.lines.stream_query`): ``audio/x-mulaw``
at 8000 Hz (cutin's default: the one Pipecat's Plivo serializer speaks), or
``audio/x-l16`` (16-bit little-endian PCM) at 8000 or 16000 Hz. All messages are
camelCase JSON text:

- ``start`` at once (``sequenceNumber`` 1; in ``start``: ``callId``, ``streamId``,
  ``accountId``, ``tracks`` ``["inbound"]`` and ``mediaFormat``: ``encoding`` and
  ``sampleRate``), waiting for nothing;
- the caller's audio as ``media`` every 20 ms (``track`` ``inbound``, ``chunk`` from
  1, ``timestamp`` in ms, ``payload``: base64 of the stream's format);
- a close (code 1000) when cutin hangs up (Plivo sends no stop message).

From the agent it takes ``playAudio`` (decoded by its own ``media.contentType`` and
``sampleRate``, as Plivo plays any of its formats whatever the stream's; a change of
format is noted), ``clearAudio`` (the playout buffer is emptied at once and
``clearedAudio`` goes back), ``checkpoint`` (``playedStream`` goes back once the audio
before it has played; a clear drops waiting checkpoints without one, as Plivo only
confirms audio that was played) and ``sendDTMF`` (noted). Anything else is reported
(bounded), never a crash.

The media stream's mechanics (JSON, base64 audio, markers waiting for their audio) are
:class:`~sessions.lines.json_stream.JsonStreamLine`'s; this module is the protocol.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from sessions.lines.base import LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.codec import decode_ulaw, encode_ulaw
from sessions.lines.json_stream import JsonStreamLine, WireIn, b64
from sessions.lines.stream_query import format_params_removed, plivo_format
from sessions.lines.wire_audio import G711In, Pcm16In, WireFrames, frame_bytes

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["CONTENT_TYPES", "PlivoLine", "make_line"]

CONTENT_TYPES = {"mulaw": "audio/x-mulaw", "l16": "audio/x-l16"}
"""The codec a URL names, as Plivo's ``contentType`` says it."""
_RATES = {"audio/x-mulaw": (8000,), "audio/x-l16": (8000, 16000)}
"""The rates Plivo plays each ``contentType`` at."""
CHUNK_MS = 20


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``plivo:ws://HOST:PORT/PATH[?codec=...&rate=...]``."""
    assert spec.url is not None
    codec, rate = plivo_format(spec.url)
    return PlivoLine(spec.url, codec=codec, rate=rate)


def _describe(content_type: str, rate: int) -> str:
    law = "μ-law" if content_type == "audio/x-mulaw" else "L16 (PCM16 little-endian)"
    return f"{content_type} ({law}) {rate} Hz mono"


class PlivoLine(JsonStreamLine):
    """A :class:`~sessions.lines.base.Line` to an agent behind a Plivo audio stream."""

    name = "plivo"
    takes = "Plivo takes JSON"
    stream_field = "streamId"
    stream_key = "stream_id"
    stream_events = None
    mark_word = "checkpoint"

    def __init__(
        self,
        url: str,
        *,
        codec: str = "mulaw",
        rate: int = 8000,
        extra_headers: str = "",
        playout: PlayoutBuffer | None = None,
        limits: LineLimits | None = None,
    ) -> None:
        content_type = CONTENT_TYPES.get(codec)
        if content_type is None or rate not in _RATES[content_type]:
            raise ValueError(f"Plivo streams μ-law 8 kHz or L16 8/16 kHz, not {codec} {rate}")
        self.stream_id = str(uuid.uuid4())
        secret_parts = format_params_removed(url, "codec", "rate")
        super().__init__(
            url, stream=self.stream_id, urls=[secret_parts], limits=limits, playout=playout
        )
        self.content_type = content_type
        self.rate = rate
        self.audio_format = f"{content_type};rate={rate}"
        self.extra_headers = extra_headers
        self.call_id = str(uuid.uuid4())
        self.account_id = "MA" + uuid.uuid4().hex[:18].upper()
        if content_type == "audio/x-l16":
            self._frames = WireFrames(rate, frame_bytes(rate, CHUNK_MS))
        else:
            self._frames = WireFrames(rate, rate * CHUNK_MS // 1000, encode_ulaw)
        self._playing = (content_type, rate)
        """The format the agent's audio is played as (its ``playAudio``'s)."""
        self._in = self._player(content_type, rate)

    def _opened(self) -> None:
        described = _describe(self.content_type, self.rate)
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Plivo audio stream, {described}",
            {"stream_id": self.stream_id, "call_id": self.call_id},
        )
        self._format(
            f"{described}, base64 (stated in start's mediaFormat)", self.content_type, self.rate
        )

    # -- messages ------------------------------------------------------------------

    def _message(self, event: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sequence += 1
        return {"event": event, "sequenceNumber": self.sequence, "streamId": self.stream_id, **body}

    def _hello(self) -> list[dict[str, Any]]:
        start = {
            "callId": self.call_id,
            "streamId": self.stream_id,
            "accountId": self.account_id,
            "tracks": ["inbound"],
            "mediaFormat": {"encoding": self.content_type, "sampleRate": self.rate},
        }
        self.sequence += 1
        return [
            {
                "event": "start",
                "sequenceNumber": self.sequence,
                "start": start,
                "extra_headers": self.extra_headers,
            }
        ]

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        media = {
            "track": "inbound",
            "timestamp": str((self.chunks_sent - 1) * CHUNK_MS),
            "chunk": self.chunks_sent,
            "payload": b64(chunk),
        }
        return self._message("media", {"media": media})

    def _stop(self) -> None:
        return None  # Plivo sends no stop message: the close says it

    def _mark_reply(self, name: str) -> tuple[str, dict[str, Any]]:
        return "playedStream", {"name": name}

    # -- the agent's messages ------------------------------------------------------

    def _on_message(self, message: dict[str, Any], raw: str) -> None:
        event = message.get("event")
        if event == "playAudio":
            self._on_play(message)
        elif event == "clearAudio":
            self._on_clear()
        elif event == "checkpoint":
            self._on_checkpoint(message)
        elif event == "sendDTMF":
            digits = message.get("dtmf")
            shown = str(digits)[:40] if isinstance(digits, str | int) else "?"
            self._notify(
                NoticeKind.AGENT_EVENT,
                f"the agent sent DTMF {shown!r}",
                {"kind": "send_dtmf", "dtmf": shown},
            )
        else:
            self._unknown_event(event, raw)

    def _on_play(self, message: dict[str, Any]) -> None:
        media = message.get("media")
        payload = media.get("payload") if isinstance(media, dict) else None
        # Its format is checked before its payload is decoded (and a player chosen).
        if isinstance(media, dict) and isinstance(payload, str) and not self._play_as(media):
            return
        data = self._payload(payload, "playAudio", "play")
        if data is not None:
            self._play(message, data)

    def _play_as(self, media: dict[str, Any]) -> bool:
        """Play the agent's audio in its ``playAudio``'s stated format (a new player when
        it changed); False (an ERROR notice) for a format Plivo does not play."""
        content_type = media.get("contentType", self.content_type)
        rate = media.get("sampleRate", self.rate)
        if isinstance(rate, str) and rate.isdigit() and len(rate) < 7:
            rate = int(rate)
        if content_type not in _RATES or isinstance(rate, bool) or rate not in _RATES[content_type]:
            self._error(
                "play_format",
                f"a playAudio of {str(content_type)[:30]!r} at {str(rate)[:10]!r} Hz, which"
                " Plivo does not play (audio/x-mulaw 8000, audio/x-l16 8000 or 16000); dropped",
                {"content_type": str(content_type)[:30], "rate": str(rate)[:10]},
            )
            return False
        if self._playing != (content_type, rate):
            self._playing = (content_type, rate)
            self._in = self._player(content_type, rate)
            self._format(f"the agent plays {_describe(content_type, rate)}", content_type, rate)
        return True

    def _player(self, content_type: str, rate: int) -> WireIn:
        if content_type == "audio/x-l16":
            return Pcm16In(rate, self.playout)
        return G711In(decode_ulaw, self.playout)

    def _split_sample(self, data: bytes) -> None:
        self._error(
            "odd_bytes",
            f"an L16 payload of {len(data)} bytes: half a 16-bit sample is left over"
            " (kept for the next payload)",
            {"bytes": len(data)},
        )

    def _on_clear(self) -> None:
        self._cleared(self._in.clear())
        self._post(("reply", ("clearedAudio", {})))
        for name in self._marks.due(cleared=True):  # never played: no playedStream
            self._notify(
                NoticeKind.MARK,
                f"checkpoint {name[:80]!r} cleared before it played (no playedStream)",
                {"name": name[:200], "cleared": True},
            )

    def _on_checkpoint(self, message: dict[str, Any]) -> None:
        name = message.get("name")
        if not isinstance(name, str):
            self._error("checkpoint_no_name", "a checkpoint message without a name")
            return
        if self._keep_mark(name):
            self._echo_marks()
