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
:class:`~sessions.lines.socket_line.SocketLine`'s; this module is the protocol.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

import numpy as np

from sessions.lines.base import LINE_RATE, Audio, LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.codec import (
    StreamResampler,
    decode_alaw,
    decode_ulaw,
    encode_alaw,
    encode_ulaw,
)
from sessions.lines.notices import check_ws_url
from sessions.lines.pcm import PlayedMarks
from sessions.lines.reorder import ReorderWindow
from sessions.lines.socket_line import SocketLine
from sessions.lines.stream_query import TELNYX_CODECS, format_params_removed, telnyx_codec
from sessions.lines.twilio import looks_like_pcm16
from sessions.redact import redact_url

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["TelnyxLine", "looks_like_other_law", "make_line"]

TELNYX_RATE = 8000
CHUNK_BYTES = 160
"""One media message: 20 ms of 8 kHz G.711."""
CHUNK_MS = 20
MAX_MARK_CHARS = 1024
"""A longer mark name is refused (an agent gone wrong), not echoed."""
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


def _number(value: Any) -> int | None:
    """A message number as Telnyx writes it (a digit string, or an int), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 10**15 else None
    if isinstance(value, str) and value.isdigit() and len(value) < 16:
        return int(value)
    return None


class TelnyxLine(SocketLine):
    """A :class:`~sessions.lines.base.Line` to an agent behind Telnyx media streaming."""

    name = "telnyx"

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
        secret_parts = format_params_removed(url, "codec")
        super().__init__(redact_url(url), urls=[secret_parts], limits=limits, playout=playout)
        self._url = url
        self.codec = codec
        self.audio_format = f"audio/{codec};rate={TELNYX_RATE}"
        self._encode = encode_alaw if codec == "PCMA" else encode_ulaw
        self._decode = decode_alaw if codec == "PCMA" else decode_ulaw
        self.custom_parameters = dict(custom_parameters or {})
        self.stream_id = str(uuid.uuid4())
        self.call_control_id = "v3:" + uuid.uuid4().hex
        self.call_session_id = str(uuid.uuid4())

        self._send_lock = threading.Lock()
        self._down = StreamResampler(LINE_RATE, TELNYX_RATE)
        self._pending = bytearray()
        self._play_lock = threading.Lock()
        """Held while agent messages are acted on (reader thread, or take's late release)."""
        self._up = StreamResampler(TELNYX_RATE, LINE_RATE)
        self._marks: PlayedMarks[str] = PlayedMarks(self.playout)
        self.by_sequence: ReorderWindow[dict[str, Any]] = ReorderWindow()
        """The agent's messages in ``sequence_number`` order."""
        self.by_chunk: ReorderWindow[dict[str, Any]] = ReorderWindow()
        """Its media in ``media.chunk`` order, when it numbers only those."""

        self._order_said: dict[str, int] = {}

        self.sequence = 0
        """The last ``sequence_number`` sent."""
        self.chunks_sent = 0
        self.media_received = 0
        self.bytes_received = 0

    # -- the Line protocol -------------------------------------------------------

    def send(self, samples: Audio) -> None:
        if not self.is_open:
            return
        with self._send_lock:
            self._pending += self._encode(self._down.process(samples))
            whole = len(self._pending) - len(self._pending) % CHUNK_BYTES
            if whole == 0:
                return
            chunks = [
                bytes(self._pending[i : i + CHUNK_BYTES]) for i in range(0, whole, CHUNK_BYTES)
            ]
            del self._pending[:whole]
            self._post(("media", chunks))  # under the lock: chunks leave in audio order

    def take(self, n: int) -> Audio:
        if self.by_sequence.holding or self.by_chunk.holding:
            now = time.monotonic()
            with self._play_lock:
                for message in self.by_sequence.due(now) + self.by_chunk.due(now):
                    self._act(message)
        out = self.playout.take(n)
        if self._marks:
            self._echo_marks()
        return out

    # -- SocketLine hooks ----------------------------------------------------------

    def _connect(self, timeout_s: float) -> Any:
        check_ws_url(self._url, self.name, self.target)
        from websockets.sync.client import connect

        conn = connect(self._url, close_timeout=2.0, **self.socket_options(timeout_s))
        return conn.__enter__()  # the line closes it itself

    def _handshake(self, deadline: float, timeout_s: float) -> None:
        self._conn.send(json.dumps({"event": "connected", "version": "1.0.0"}))
        self._conn.send(json.dumps(self._start_message()))
        self._ready.set()  # Telnyx speaks first and waits for nothing

    def _opened(self) -> None:
        law = _LAW[self.codec]
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Telnyx media streaming, {self.codec} ({law})"
            f" {TELNYX_RATE} Hz mono",
            {"stream_id": self.stream_id, "call_control_id": self.call_control_id},
        )
        self._notify(
            NoticeKind.FORMAT,
            f"{self.codec} ({law}) {TELNYX_RATE} Hz mono, base64 RTP payloads (stated in start)",
            {"encoding": self.codec, "rate": TELNYX_RATE, "channels": 1, "stated": True},
        )

    def _hangup(self) -> None:
        self._post(("stop", None))
        self._post_stop()

    def _ended(self) -> None:
        self._marks.drop()

    def _write(self, item: tuple[str, Any]) -> None:
        kind, payload = item
        if kind == "media":
            for chunk in payload:
                self._conn.send(json.dumps(self._media_message(chunk)))
        elif kind == "mark":
            self._conn.send(json.dumps(self._message("mark", {"mark": {"name": payload}})))
        elif kind == "stop":
            stop = {"user_id": "", "call_control_id": self.call_control_id}
            self._conn.send(json.dumps(self._message("stop", {"stop": stop})))
            self._conn.close(1000, "call ended")

    # -- messages ------------------------------------------------------------------

    def _message(self, event: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sequence += 1
        return {
            "event": event,
            "sequence_number": str(self.sequence),
            **body,
            "stream_id": self.stream_id,
        }

    def _start_message(self) -> dict[str, Any]:
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
        return self._message("start", {"start": start})

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        self.chunks_sent += 1
        media = {
            "track": "inbound",
            "chunk": str(self.chunks_sent),
            "timestamp": str((self.chunks_sent - 1) * CHUNK_MS),
            "payload": base64.b64encode(chunk).decode("ascii"),
        }
        return self._message("media", {"media": media})

    def _handle(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            self._error("binary", f"a binary message of {len(raw)} bytes (Telnyx takes JSON)")
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
        sid = message.get("stream_id")
        if sid is not None and sid != self.stream_id and event in ("media", "mark", "clear"):
            self._once(
                "stream_id",
                NoticeKind.ERROR,
                f"the agent's stream_id {str(sid)[:40]!r} is not this stream's",
                {"kind": "stream_id", "got": str(sid)[:40]},
            )
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
            number = _number(message.get("sequence_number"))
            media = message.get("media")
            chunk = _number(media.get("chunk")) if isinstance(media, dict) else None
            if number is None and chunk is not None and event == "media":
                ready = self.by_chunk.push(chunk, message, now)
            else:
                ready = self.by_sequence.push(number, message, now)
            for item in ready:
                self._act(item)
        self._say_order()

    def _act(self, message: dict[str, Any]) -> None:
        """One agent message, in its turn (under the play lock)."""
        event = message.get("event")
        if event == "media":
            self._on_media(message)
        elif event == "mark":
            self._on_mark(message)
        elif isinstance(event, str):
            self._error(f"event:{event[:30]}", f"an unknown event {event[:30]!r}", {"event": event})
        else:
            self._error("no_event", f"a message without an event: {str(message)[:60]!r}")

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
        self._check_format(data)
        self.media_received += 1
        self.bytes_received += len(data)
        self.playout.push(self._up.process(self._decode(data)))
        if self._marks:
            self._echo_marks()

    def _check_format(self, data: bytes) -> None:
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

    def _on_clear(self) -> None:
        dropped = self.playout.clear()
        self._up.reset()
        seconds = dropped / LINE_RATE
        self._notify(
            NoticeKind.CLEAR,
            f"the agent cleared {seconds:.2f} s of queued audio",
            {"dropped_s": seconds, "dropped_samples": dropped},
        )
        self._echo_marks(cleared=True)

    def _on_mark(self, message: dict[str, Any]) -> None:
        mark = message.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        if not isinstance(name, str):
            self._error("mark_no_name", "a mark message without mark.name")
            return
        if len(name) > MAX_MARK_CHARS:
            self._error(
                "mark_too_long",
                f"a mark name of {len(name)} characters (over {MAX_MARK_CHARS}); not echoed",
                {"length": len(name)},
            )
            return
        if not self._marks.add(name):
            self._error("mark_limit", "over 256 marks wait for their audio; this one is dropped")
            return
        self._echo_marks()

    def _echo_marks(self, *, cleared: bool = False) -> None:
        for name in self._marks.due(cleared=cleared):
            self._post(("mark", name))
            how = "cleared" if cleared else "played"
            self._notify(
                NoticeKind.MARK,
                f"mark {name[:80]!r} {how}",
                {"name": name[:200], "cleared": cleared},
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
