"""Exotel voice streaming (the Voicebot applet), with cutin as Exotel's side of the call.

``--agent exotel:ws://HOST:PORT/PATH[?sample-rate=8000]`` dials the agent as Exotel's
bidirectional stream does. The rate is Exotel's own URL parameter: 8000 (its default),
16000 or 24000; the URL is dialled as written, so the agent sees it too. All messages
are JSON text with snake_case fields and a ``sequence_number`` (a string, 1 for
``start``, one more for each message after it):

- ``{"event": "connected"}``, then ``start`` (``stream_sid``, ``call_sid``,
  ``account_sid``, ``from``, ``to``, ``custom_parameters`` and ``media_format``:
  raw 16-bit PCM at the rate), both at once, waiting for nothing;
- the caller's audio as ``media`` every 100 ms (``chunk`` from 1, ``timestamp`` in ms
  from the stream's start, ``payload``: base64 of little-endian mono PCM16; 1600 bytes
  at 8 kHz, 3200 at 16 kHz, 4800 at 24 kHz, multiples of 320 bytes as Exotel's are);
- ``stop`` (``reason`` ``callended``) and a close (code 1000) when cutin hangs up.

From the agent it takes ``media`` (decoded and played as it comes; chunks that are not
a multiple of 320 bytes, which Exotel plays with a gap, are noted and counted; an odd
last byte is dropped and reported),
``clear`` (the playout buffer is emptied at once, as Exotel stops playback; every
waiting mark goes back) and ``mark`` (sent back once the audio before it has played).
Where the agent numbers its messages (``sequence_number``, ``media.chunk``), cutin
checks the numbers: repeats, steps back and gaps are counted in a logged note (the
audio is still played in the order it came, as Exotel plays it). Anything else is
reported (bounded), never a crash.

Threads, states, limits and the wording of failures are
:class:`~sessions.lines.socket_line.SocketLine`'s, the PCM16 plumbing
:mod:`sessions.lines.pcm`'s; this module is the protocol.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import threading
import uuid
from typing import TYPE_CHECKING, Any

from sessions.lines.base import LINE_RATE, Audio, LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.notices import check_ws_url
from sessions.lines.pcm import Pcm16In, Pcm16Out, PlayedMarks, frame_bytes
from sessions.lines.socket_line import SocketLine
from sessions.redact import redact_url

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["EXOTEL_RATES", "ExotelLine", "SequenceCheck", "make_line"]

EXOTEL_RATES = (8000, 16000, 24000)
"""What Exotel streams (``?sample-rate=``); the first is its default."""
CHUNK_MS = 100
CHUNK_UNIT = 320
"""Exotel's chunks are whole multiples of this many bytes."""


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``exotel:ws://HOST:PORT/PATH[?sample-rate=8000]``."""
    from sessions.lines.registry import transport

    assert spec.url is not None
    return ExotelLine(spec.url, rate=transport(spec.kind).rate_of(spec.url))


def _sid(prefix: str) -> str:
    return prefix + uuid.uuid4().hex


def _number(value: Any) -> int | None:
    """A sequence number as Exotel writes it (a digit string, or an int); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 10**15 else None
    if isinstance(value, str) and value.isdigit() and len(value) < 16:
        return int(value)
    return None


class SequenceCheck:
    """The agent's message numbers, checked as they come: repeats, steps back, gaps.

    The first number seen sets the start; each later one should be one more than the
    highest so far. Counts only: the audio is played in the order it came.
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.highest: int | None = None
        self.repeated = 0
        self.back = 0
        self.gaps = 0
        """Times a number was skipped over."""
        self.missing = 0
        """Numbers skipped (a jump from 4 to 7 misses two)."""

    @property
    def anomalies(self) -> int:
        return self.repeated + self.back + self.gaps

    def see(self, n: int) -> str | None:
        """Take one number; what was wrong with it ("repeated", "back", "gap"), if anything."""
        highest = self.highest
        if highest is None or n == highest + 1:
            self.highest = n
            return None
        if n == highest:
            self.repeated += 1
            return "repeated"
        if n < highest:
            self.back += 1
            return "back"
        self.gaps += 1
        self.missing += n - highest - 1
        self.highest = n
        return "gap"

    def summary(self) -> str:
        return (
            f"{self.what}: {self.back} out of order, {self.repeated} repeated,"
            f" {self.missing} missing"
        )


class ExotelLine(SocketLine):
    """A :class:`~sessions.lines.base.Line` to an agent behind Exotel's Voicebot applet."""

    name = "exotel"

    def __init__(
        self,
        url: str,
        *,
        rate: int = EXOTEL_RATES[0],
        custom_parameters: dict[str, str] | None = None,
        playout: PlayoutBuffer | None = None,
        limits: LineLimits | None = None,
    ) -> None:
        if rate not in EXOTEL_RATES:
            raise ValueError(f"Exotel streams at 8000, 16000 or 24000 Hz, not {rate}")
        super().__init__(redact_url(url), urls=[url], limits=limits, playout=playout)
        self._url = url
        self.rate = rate
        self.audio_format = f"audio/pcm;rate={rate}"
        self.chunk_bytes = frame_bytes(rate, CHUNK_MS)
        self.custom_parameters = dict(custom_parameters or {})
        self.stream_sid = _sid("MZ")
        self.call_sid = _sid("CA")
        self.account_sid = _sid("AC")

        self._send_lock = threading.Lock()
        self._out = Pcm16Out(rate, self.chunk_bytes)
        self._in = Pcm16In(rate, self.playout, carry=False)
        self._marks: PlayedMarks[str] = PlayedMarks(self.playout)
        self._numbers = SequenceCheck("the agent's sequence_number")
        self._chunks = SequenceCheck("the agent's media.chunk")

        self.sequence = 0
        """The last ``sequence_number`` sent."""
        self.chunks_sent = 0
        self.media_received = 0
        self.off_size_chunks = 0
        """Agent media payloads that were not a whole multiple of 320 bytes."""

    @property
    def bytes_received(self) -> int:
        return self._in.bytes_received

    # -- the Line protocol -------------------------------------------------------

    def send(self, samples: Audio) -> None:
        if not self.is_open:
            return
        with self._send_lock:
            chunks = self._out.frames(samples)
            if chunks:
                self._post(("media", chunks))  # under the lock: chunks leave in order

    def take(self, n: int) -> Audio:
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
        self._conn.send(json.dumps({"event": "connected"}))
        self._conn.send(json.dumps(self._start_message()))
        self._ready.set()  # Exotel speaks first and waits for nothing

    def _opened(self) -> None:
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Exotel voice streaming, PCM16 {self.rate} Hz mono",
            {"stream_sid": self.stream_sid, "call_sid": self.call_sid},
        )
        self._notify(
            NoticeKind.FORMAT,
            f"PCM16 little-endian {self.rate} Hz mono, base64 (stated in start)",
            {"encoding": "pcm16", "rate": self.rate, "channels": 1, "stated": True},
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
            stop = {"call_sid": self.call_sid, "account_sid": self.account_sid}
            self._conn.send(
                json.dumps(self._message("stop", {"stop": {**stop, "reason": "callended"}}))
            )
            self._conn.close(1000, "call ended")

    # -- messages ------------------------------------------------------------------

    def _message(self, event: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sequence += 1
        return {
            "event": event,
            "sequence_number": str(self.sequence),
            "stream_sid": self.stream_sid,
            **body,
        }

    def _start_message(self) -> dict[str, Any]:
        start = {
            "stream_sid": self.stream_sid,
            "call_sid": self.call_sid,
            "account_sid": self.account_sid,
            "from": "",
            "to": "",
            "custom_parameters": self.custom_parameters,
            "media_format": {
                "encoding": "base64",
                "sample_rate": str(self.rate),
                "bit_rate": "16",
            },
        }
        return self._message("start", {"start": start})

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        self.chunks_sent += 1
        media = {
            "chunk": str(self.chunks_sent),
            "timestamp": str((self.chunks_sent - 1) * CHUNK_MS),
            "payload": base64.b64encode(chunk).decode("ascii"),
        }
        return self._message("media", {"media": media})

    def _handle(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            self._error("binary", f"a binary message of {len(raw)} bytes (Exotel sends text)")
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
        sid = message.get("stream_sid")
        if sid is not None and sid != self.stream_sid and event in ("media", "mark", "clear"):
            self._once(
                "stream_sid",
                NoticeKind.ERROR,
                f"the agent's stream_sid {str(sid)[:40]!r} is not this stream's",
                {"kind": "stream_sid", "got": str(sid)[:40]},
            )
        number = _number(message.get("sequence_number"))
        if number is not None:
            self._check(self._numbers, number)
        if event == "media":
            self._on_media(message)
        elif event == "clear":
            self._on_clear()
        elif event == "mark":
            self._on_mark(message)
        elif isinstance(event, str):
            self._error("unknown_event", f"an unknown event {event[:30]!r}", {"event": event})
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
        assert isinstance(media, dict)
        chunk = _number(media.get("chunk"))
        if chunk is not None:
            self._check(self._chunks, chunk)
        if len(data) % CHUNK_UNIT:
            self.off_size_chunks += 1
            self._counted(
                "chunk_size",
                self.off_size_chunks,
                f"media payloads not a multiple of {CHUNK_UNIT} bytes (Exotel would play"
                f" a gap after each); the last was {len(data)} bytes",
            )
        self.media_received += 1
        if not self._in.play(data):
            self._error(
                "odd_bytes",
                f"a media payload of {len(data)} bytes: its last byte is half a 16-bit"
                " sample (dropped)",
                {"bytes": len(data)},
            )
        if self._marks:
            self._echo_marks()

    def _on_clear(self) -> None:
        seconds = self._in.clear() / LINE_RATE
        self._notify(
            NoticeKind.CLEAR,
            f"the agent cleared {seconds:.2f} s of queued audio",
            {"dropped_s": seconds, "dropped_samples": round(seconds * LINE_RATE)},
        )
        self._echo_marks(cleared=True)

    def _on_mark(self, message: dict[str, Any]) -> None:
        mark = message.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        if not isinstance(name, str):
            self._error("mark_no_name", "a mark message without mark.name")
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

    def _check(self, check: SequenceCheck, n: int) -> None:
        wrong = check.see(n)
        if wrong is not None:
            self._counted("sequence", check.anomalies, f"numbering anomalies; {check.summary()}")

    def _counted(self, key: str, count: int, words: str) -> None:
        """A note on the 1st, 10th, 100th... time (bounded however long the call)."""
        if count == 1 or math.log10(count).is_integer():
            self._notify(
                NoticeKind.AGENT_EVENT,
                f"{count} {words}",
                {"kind": key, "count": count},
            )
