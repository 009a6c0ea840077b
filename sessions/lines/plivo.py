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
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import uuid
from typing import TYPE_CHECKING, Any

from sessions.lines.base import LINE_RATE, Audio, LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.codec import StreamResampler, decode_ulaw, encode_ulaw
from sessions.lines.notices import check_ws_url
from sessions.lines.pcm import Pcm16In, Pcm16Out, PlayedMarks, frame_bytes
from sessions.lines.socket_line import SocketLine
from sessions.lines.stream_query import format_params_removed, plivo_format
from sessions.redact import redact_url

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["CONTENT_TYPES", "PlivoLine", "make_line"]

CONTENT_TYPES = {"mulaw": "audio/x-mulaw", "l16": "audio/x-l16"}
"""The codec a URL names, as Plivo's ``contentType`` says it."""
_RATES = {"audio/x-mulaw": (8000,), "audio/x-l16": (8000, 16000)}
"""The rates Plivo plays each ``contentType`` at."""
CHUNK_MS = 20
MAX_NAME_CHARS = 1024
"""A longer checkpoint name is refused (an agent gone wrong), not confirmed."""


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``plivo:ws://HOST:PORT/PATH[?codec=...&rate=...]``."""
    assert spec.url is not None
    codec, rate = plivo_format(spec.url)
    return PlivoLine(spec.url, codec=codec, rate=rate)


def _describe(content_type: str, rate: int) -> str:
    law = "μ-law" if content_type == "audio/x-mulaw" else "L16 (PCM16 little-endian)"
    return f"{content_type} ({law}) {rate} Hz mono"


class _Player:
    """The agent's audio in one format, decoded and resampled into the playout buffer."""

    def __init__(self, content_type: str, rate: int, playout: PlayoutBuffer) -> None:
        self.content_type = content_type
        self.rate = rate
        self._playout = playout
        self._pcm = Pcm16In(rate, playout) if content_type == "audio/x-l16" else None
        self._up = StreamResampler(rate, LINE_RATE)

    def play(self, data: bytes) -> bool:
        """Queue ``data``; False when PCM16 left half a sample over."""
        if self._pcm is not None:
            return self._pcm.play(data)
        self._playout.push(self._up.process(decode_ulaw(data)))
        return True

    def reset(self) -> None:
        if self._pcm is not None:
            self._pcm.clear()
        self._up.reset()


class PlivoLine(SocketLine):
    """A :class:`~sessions.lines.base.Line` to an agent behind a Plivo audio stream."""

    name = "plivo"

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
        secret_parts = format_params_removed(url, "codec", "rate")
        super().__init__(redact_url(url), urls=[secret_parts], limits=limits, playout=playout)
        self._url = url
        self.content_type = content_type
        self.rate = rate
        self.audio_format = f"{content_type};rate={rate}"
        self.extra_headers = extra_headers
        self.stream_id = str(uuid.uuid4())
        self.call_id = str(uuid.uuid4())
        self.account_id = "MA" + uuid.uuid4().hex[:18].upper()

        self._send_lock = threading.Lock()
        if content_type == "audio/x-l16":
            self._out: Pcm16Out | None = Pcm16Out(rate, frame_bytes(rate, CHUNK_MS))
        else:
            self._out = None
            self._down = StreamResampler(LINE_RATE, rate)
            self._pending = bytearray()
        self._player = _Player(content_type, rate, self.playout)
        self._checkpoints: PlayedMarks[str] = PlayedMarks(self.playout)

        self.sequence = 0
        """The last ``sequenceNumber`` sent."""
        self.chunks_sent = 0
        self.media_received = 0
        """``playAudio`` messages taken."""
        self.bytes_received = 0

    # -- the Line protocol -------------------------------------------------------

    def send(self, samples: Audio) -> None:
        if not self.is_open:
            return
        with self._send_lock:
            if self._out is not None:
                chunks = self._out.frames(samples)
            else:
                self._pending += encode_ulaw(self._down.process(samples))
                size = self.rate * CHUNK_MS // 1000
                whole = len(self._pending) - len(self._pending) % size
                chunks = [bytes(self._pending[i : i + size]) for i in range(0, whole, size)]
                del self._pending[:whole]
            if chunks:
                self._post(("media", chunks))  # under the lock: chunks leave in order

    def take(self, n: int) -> Audio:
        out = self.playout.take(n)
        if self._checkpoints:
            self._confirm_played()
        return out

    # -- SocketLine hooks ----------------------------------------------------------

    def _connect(self, timeout_s: float) -> Any:
        check_ws_url(self._url, self.name, self.target)
        from websockets.sync.client import connect

        conn = connect(self._url, close_timeout=2.0, **self.socket_options(timeout_s))
        return conn.__enter__()  # the line closes it itself

    def _handshake(self, deadline: float, timeout_s: float) -> None:
        self._conn.send(json.dumps(self._start_message()))
        self._ready.set()  # Plivo speaks first and waits for nothing

    def _opened(self) -> None:
        described = _describe(self.content_type, self.rate)
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Plivo audio stream, {described}",
            {"stream_id": self.stream_id, "call_id": self.call_id},
        )
        self._notify(
            NoticeKind.FORMAT,
            f"{described}, base64 (stated in start's mediaFormat)",
            {"encoding": self.content_type, "rate": self.rate, "channels": 1, "stated": True},
        )

    def _hangup(self) -> None:
        self._post(("close", None))
        self._post_stop()

    def _ended(self) -> None:
        self._checkpoints.drop()

    def _write(self, item: tuple[str, Any]) -> None:
        kind, payload = item
        if kind == "media":
            for chunk in payload:
                self._conn.send(json.dumps(self._media_message(chunk)))
        elif kind == "played":
            self._conn.send(json.dumps(self._message("playedStream", {"name": payload})))
        elif kind == "cleared":
            self._conn.send(json.dumps(self._message("clearedAudio", {})))
        elif kind == "close":
            self._conn.close(1000, "call ended")

    # -- messages ------------------------------------------------------------------

    def _message(self, event: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sequence += 1
        return {"event": event, "sequenceNumber": self.sequence, "streamId": self.stream_id, **body}

    def _start_message(self) -> dict[str, Any]:
        start = {
            "callId": self.call_id,
            "streamId": self.stream_id,
            "accountId": self.account_id,
            "tracks": ["inbound"],
            "mediaFormat": {"encoding": self.content_type, "sampleRate": self.rate},
        }
        self.sequence += 1
        return {
            "event": "start",
            "sequenceNumber": self.sequence,
            "start": start,
            "extra_headers": self.extra_headers,
        }

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        self.chunks_sent += 1
        media = {
            "track": "inbound",
            "timestamp": str((self.chunks_sent - 1) * CHUNK_MS),
            "chunk": self.chunks_sent,
            "payload": base64.b64encode(chunk).decode("ascii"),
        }
        return self._message("media", {"media": media})

    def _handle(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            self._error("binary", f"a binary message of {len(raw)} bytes (Plivo takes JSON)")
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
        sid = message.get("streamId")
        if sid is not None and sid != self.stream_id:
            self._once(
                "stream_id",
                NoticeKind.ERROR,
                f"the agent's streamId {str(sid)[:40]!r} is not this stream's",
                {"kind": "stream_id", "got": str(sid)[:40]},
            )
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
        elif isinstance(event, str):
            self._error(f"event:{event[:30]}", f"an unknown event {event[:30]!r}", {"event": event})
        else:
            self._error("no_event", f"a message without an event: {raw[:60]!r}")

    def _on_play(self, message: dict[str, Any]) -> None:
        media = message.get("media")
        if not isinstance(media, dict) or not isinstance(media.get("payload"), str):
            self._error("play_no_payload", "a playAudio message without media.payload")
            return
        player = self._player_for(media)
        if player is None:
            return
        try:
            data = base64.b64decode(media["payload"], validate=True)
        except (binascii.Error, ValueError):
            self._error("play_base64", "a playAudio payload that is not base64")
            return
        if not data:
            self._error("play_empty", "an empty playAudio payload")
            return
        self.media_received += 1
        self.bytes_received += len(data)
        if not player.play(data):
            self._error(
                "odd_bytes",
                f"an L16 payload of {len(data)} bytes: half a 16-bit sample is left over"
                " (kept for the next payload)",
                {"bytes": len(data)},
            )
        if self._checkpoints:
            self._confirm_played()

    def _player_for(self, media: dict[str, Any]) -> _Player | None:
        """The player for a ``playAudio``'s stated format (a new one when it changed)."""
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
            return None
        player = self._player
        if (player.content_type, player.rate) != (content_type, rate):
            player = self._player = _Player(content_type, rate, self.playout)
            self._notify(
                NoticeKind.FORMAT,
                f"the agent plays {_describe(content_type, rate)}",
                {"encoding": content_type, "rate": rate, "channels": 1, "stated": True},
            )
        return player

    def _on_clear(self) -> None:
        dropped = self.playout.clear()
        self._player.reset()
        seconds = dropped / LINE_RATE
        self._notify(
            NoticeKind.CLEAR,
            f"the agent cleared {seconds:.2f} s of queued audio",
            {"dropped_s": seconds, "dropped_samples": dropped},
        )
        self._post(("cleared", None))
        for name in self._checkpoints.due(cleared=True):  # never played: no playedStream
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
        if len(name) > MAX_NAME_CHARS:
            self._error(
                "checkpoint_too_long",
                f"a checkpoint name of {len(name)} characters (over {MAX_NAME_CHARS});"
                " not confirmed",
                {"length": len(name)},
            )
            return
        if not self._checkpoints.add(name):
            self._error(
                "checkpoint_limit", "over 256 checkpoints wait for their audio; one is dropped"
            )
            return
        self._confirm_played()

    def _confirm_played(self) -> None:
        for name in self._checkpoints.due():
            self._post(("played", name))
            self._notify(
                NoticeKind.MARK,
                f"checkpoint {name[:80]!r} played",
                {"name": name[:200], "cleared": False},
            )
