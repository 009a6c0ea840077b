"""Telnyx media streaming over a WebSocket, with cutin as Telnyx's side of the call.

``--agent telnyx:ws://HOST:PORT/PATH[?codec=PCMA]`` dials the agent as Telnyx's
bidirectional RTP stream does (``stream_bidirectional_mode`` ``rtp``, the codec both
ways being the stream's, ``PCMU`` unless the URL asks for ``PCMA``; see
:mod:`sessions.lines.stream_query`). All messages are JSON text with snake_case fields:

- ``connected`` (``version`` 1.0.0), then ``start`` (``sequence_number`` 1,
  ``stream_id``, and in ``start``: ``call_control_id``, ``call_session_id``, ``from``,
  ``to``, ``custom_parameters`` and ``media_format``: the codec at 8000 Hz, mono),
  both at once, waiting for nothing;
- the caller's audio as ``media`` every 20 ms (160 bytes: a base64 RTP payload
  without its header), numbered by ``sequence_number`` (one more per message),
  ``media.chunk`` (from 1) and ``media.timestamp`` (ms), ``track`` ``inbound``;
- ``stop`` and a close (code 1000) when cutin hangs up.

From the agent it takes ``media`` (the payload in the stream's codec, played as it
comes), ``clear`` (the playout buffer is emptied at once, as Telnyx stops playback, and
every waiting mark goes back) and ``mark`` (sent back once the audio before it has
played, at once if none is queued, as Telnyx does). Telnyx says frame order is not
guaranteed and carries numbers to order by: where the agent numbers its messages
(``sequence_number``, else ``media.chunk``), cutin plays them in number order through
a small :class:`~sessions.lines.reorder.ReorderWindow` (at most 4 frames or 100 ms
held) and counts what it put back, dropped as late or repeated, and never saw. Audio
in the other G.711 law than the stream's, or 16-bit PCM, is reported once.

Threads, states, limits and the wording of failures are
:class:`~sessions.lines.socket_line.SocketLine`'s, the media stream's mechanics
(JSON, base64 audio, marks) :class:`~sessions.lines.json_stream.JsonStreamLine`'s;
this module is the protocol.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

import numpy as np

from sessions.lines.base import Audio, LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.codec import decode_alaw, decode_ulaw, encode_alaw, encode_ulaw
from sessions.lines.json_stream import JsonStreamLine, b64, wire_number
from sessions.lines.reorder import ReorderWindow
from sessions.lines.stream_query import TELNYX_CODECS, format_params_removed, telnyx_codec
from sessions.lines.wire_audio import G711In, WireFrames, looks_like_pcm16

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["TelnyxLine", "looks_like_other_law", "make_line"]

TELNYX_RATE = 8000
CHUNK_BYTES = 160
"""One media message: 20 ms of 8 kHz G.711."""
CHUNK_MS = 20
_SILENCE = {"PCMU": (0xFF, 0x7F, 0xFE, 0x7E), "PCMA": (0xD5, 0x55, 0xD4, 0x54)}
"""The codes of (near) digital silence in each law."""
_LAW = {"PCMU": "μ-law", "PCMA": "A-law"}


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``telnyx:ws://HOST:PORT/PATH[?codec=PCMU|PCMA]``."""
    assert spec.url is not None
    return TelnyxLine(spec.url, codec=telnyx_codec(spec.url))


def looks_like_other_law(payload: bytes, codec: str) -> bool:
    """Whether G.711 bytes sent as ``codec`` look like the other law's: over half of
    them are the other law's silence codes (a quiet stretch in the wrong law)."""
    if len(payload) < 80:
        return False
    other = "PCMA" if codec == "PCMU" else "PCMU"
    data = np.frombuffer(payload, dtype=np.uint8)
    return bool(np.isin(data, _SILENCE[other]).mean() > 0.5)


class TelnyxLine(JsonStreamLine):
    """A :class:`~sessions.lines.base.Line` to an agent behind Telnyx media streaming."""

    name = "telnyx"
    takes = "Telnyx takes JSON"
    stream_field = "stream_id"
    stream_key = "stream_id"

    def __init__(
        self,
        url: str,
        *,
        codec: str = "PCMU",
        custom_parameters: dict[str, str] | None = None,
        playout: PlayoutBuffer | None = None,
        limits: LineLimits | None = None,
    ) -> None:
        if codec not in TELNYX_CODECS:
            raise ValueError(f"Telnyx's G.711 codec is PCMU or PCMA, not {codec!r}")
        self.stream_id = str(uuid.uuid4())
        secret_parts = format_params_removed(url, "codec")
        super().__init__(
            url, stream=self.stream_id, urls=[secret_parts], limits=limits, playout=playout
        )
        self.codec = codec
        self.audio_format = f"audio/{codec};rate={TELNYX_RATE}"
        pcma = codec == "PCMA"
        self._frames = WireFrames(TELNYX_RATE, CHUNK_BYTES, encode_alaw if pcma else encode_ulaw)
        self._in = G711In(decode_alaw if pcma else decode_ulaw, self.playout)
        self.custom_parameters = dict(custom_parameters or {})
        self.call_control_id = "v3:" + uuid.uuid4().hex
        self.call_session_id = str(uuid.uuid4())

        self._play_lock = threading.Lock()
        """Held while agent messages are acted on (reader thread, or take's late release)."""
        self.by_sequence: ReorderWindow[dict[str, Any]] = ReorderWindow()
        """The agent's messages in ``sequence_number`` order."""
        self.by_chunk: ReorderWindow[dict[str, Any]] = ReorderWindow()
        """Its media in ``media.chunk`` order, when it numbers only those."""
        self._order_said: dict[str, int] = {}

    def take(self, n: int) -> Audio:
        if self.by_sequence.holding or self.by_chunk.holding:
            now = time.monotonic()
            with self._play_lock:
                for message in self.by_sequence.due(now) + self.by_chunk.due(now):
                    self._act(message)
        return super().take(n)

    def _opened(self) -> None:
        law = _LAW[self.codec]
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Telnyx media streaming, {self.codec} ({law})"
            f" {TELNYX_RATE} Hz mono",
            {"stream_id": self.stream_id, "call_control_id": self.call_control_id},
        )
        self._format(
            f"{self.codec} ({law}) {TELNYX_RATE} Hz mono, base64 RTP payloads (stated in start)",
            self.codec,
            TELNYX_RATE,
        )

    # -- messages ------------------------------------------------------------------

    def _message(self, event: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sequence += 1
        return {
            "event": event,
            "sequence_number": str(self.sequence),
            **body,
            "stream_id": self.stream_id,
        }

    def _hello(self) -> list[dict[str, Any]]:
        start = {
            "user_id": "",
            "call_control_id": self.call_control_id,
            "call_session_id": self.call_session_id,
            "from": "",
            "to": "",
            "client_state": "",
            "custom_parameters": self.custom_parameters,
            "media_format": {"encoding": self.codec, "sample_rate": TELNYX_RATE, "channels": 1},
        }
        return [
            {"event": "connected", "version": "1.0.0"},
            self._message("start", {"start": start}),
        ]

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        media = {
            "track": "inbound",
            "chunk": str(self.chunks_sent),
            "timestamp": str((self.chunks_sent - 1) * CHUNK_MS),
            "payload": b64(chunk),
        }
        return self._message("media", {"media": media})

    def _stop(self) -> dict[str, Any]:
        return {"user_id": "", "call_control_id": self.call_control_id}

    # -- the agent's messages ------------------------------------------------------

    def _on_message(self, message: dict[str, Any], raw: str) -> None:
        event = message.get("event")
        now = time.monotonic()
        with self._play_lock:
            if event == "clear":  # at once, whatever its number: it drops what waits
                self.by_sequence.drop()
                self.by_chunk.drop()
                self._on_clear()
                return
            if event not in ("media", "mark"):
                self._act(message)
                return
            number = wire_number(message.get("sequence_number"))
            media = message.get("media")
            chunk = wire_number(media.get("chunk")) if isinstance(media, dict) else None
            if number is None and chunk is not None and event == "media":
                ready = self.by_chunk.push(chunk, message, now)
            else:
                ready = self.by_sequence.push(number, message, now)
            for item in ready:
                self._act(item)
        self._say_order()

    def _act(self, message: dict[str, Any]) -> None:
        """One agent message, in its turn (under the play lock)."""
        self._on_event(message, str(message))

    def _check_media(self, message: dict[str, Any], data: bytes) -> None:
        if looks_like_pcm16(data):
            self._once(
                "pcm16",
                NoticeKind.ERROR,
                f"the agent's media looks like 16-bit PCM, not {self.codec}; it will sound"
                " like noise",
                {"kind": "format", "expected": self.codec, "looks_like": "audio/l16"},
            )
        elif looks_like_other_law(data, self.codec):
            other = "PCMA" if self.codec == "PCMU" else "PCMU"
            self._once(
                "law",
                NoticeKind.ERROR,
                f"the agent's media looks like {other} ({_LAW[other]}), not the stream's"
                f" {self.codec}; it will sound distorted",
                {"kind": "format", "expected": self.codec, "looks_like": other},
            )

    # -- notes -----------------------------------------------------------------------

    def _say_order(self) -> None:
        """A note when the agent's numbering was off: on its first anomaly, then as the
        count reaches 10, 100, ... (bounded however long the call)."""
        for key, window, what in (
            ("sequence", self.by_sequence, "the agent's sequence_number"),
            ("chunk", self.by_chunk, "the agent's media.chunk"),
        ):
            counts = window.counts
            seen = counts.anomalies
            said = self._order_said.get(key, 0)
            if len(str(seen)) == len(str(said)) and said:
                continue
            if not seen:
                continue
            self._order_said[key] = seen
            self._notify(
                NoticeKind.AGENT_EVENT,
                f"{seen} frame order anomalies; {counts.words(what)}",
                {
                    "kind": f"order_{key}",
                    "count": seen,
                    "reordered": counts.reordered,
                    "late": counts.late,
                    "repeated": counts.repeated,
                    "missing": counts.missing,
                },
            )
