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
:class:`~sessions.lines.socket_line.SocketLine`'s, the media stream's mechanics (JSON,
base64 audio, marks) :class:`~sessions.lines.json_stream.JsonStreamLine`'s, the PCM16
plumbing :mod:`sessions.lines.wire_audio`'s; this module is the protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sessions.lines.base import LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.json_stream import JsonStreamLine, b64, new_sid, wire_number
from sessions.lines.wire_audio import Pcm16In, WireFrames, frame_bytes

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
    assert spec.url is not None
    return ExotelLine(spec.url, rate=spec.rate)


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


class ExotelLine(JsonStreamLine):
    """A :class:`~sessions.lines.base.Line` to an agent behind Exotel's Voicebot applet."""

    name = "exotel"
    takes = "Exotel sends text"
    stream_field = "stream_sid"
    stream_key = "stream_sid"
    unknown_key = "unknown_event"

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
        self.stream_sid = new_sid("MZ")
        super().__init__(url, stream=self.stream_sid, urls=[url], limits=limits, playout=playout)
        self.rate = rate
        self.audio_format = f"audio/pcm;rate={rate}"
        self.chunk_bytes = frame_bytes(rate, CHUNK_MS)
        self.custom_parameters = dict(custom_parameters or {})
        self.call_sid = new_sid("CA")
        self.account_sid = new_sid("AC")
        self._frames = WireFrames(rate, self.chunk_bytes)
        self._in = Pcm16In(rate, self.playout, carry=False)
        self._numbers = SequenceCheck("the agent's sequence_number")
        self._chunks = SequenceCheck("the agent's media.chunk")
        self.off_size_chunks = 0
        """Agent media payloads that were not a whole multiple of 320 bytes."""

    def _opened(self) -> None:
        self._notify(
            NoticeKind.OPEN,
            f"connected to {self.target}; Exotel voice streaming, PCM16 {self.rate} Hz mono",
            {"stream_sid": self.stream_sid, "call_sid": self.call_sid},
        )
        self._format(
            f"PCM16 little-endian {self.rate} Hz mono, base64 (stated in start)", "pcm16", self.rate
        )

    # -- messages ------------------------------------------------------------------

    def _message(self, event: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sequence += 1
        return {
            "event": event,
            "sequence_number": str(self.sequence),
            "stream_sid": self.stream_sid,
            **body,
        }

    def _hello(self) -> list[dict[str, Any]]:
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
        return [{"event": "connected"}, self._message("start", {"start": start})]

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        media = {
            "chunk": str(self.chunks_sent),
            "timestamp": str((self.chunks_sent - 1) * CHUNK_MS),
            "payload": b64(chunk),
        }
        return self._message("media", {"media": media})

    def _stop(self) -> dict[str, Any]:
        return {"call_sid": self.call_sid, "account_sid": self.account_sid, "reason": "callended"}

    # -- the agent's messages ------------------------------------------------------

    def _on_message(self, message: dict[str, Any], raw: str) -> None:
        number = wire_number(message.get("sequence_number"))
        if number is not None:
            self._check(self._numbers, number)
        self._on_event(message, raw)

    def _check_media(self, message: dict[str, Any], data: bytes) -> None:
        chunk = wire_number(message["media"].get("chunk"))
        if chunk is not None:
            self._check(self._chunks, chunk)
        if len(data) % CHUNK_UNIT:
            self.off_size_chunks += 1
            self._counted(
                "chunk_size",
                self.off_size_chunks,
                f"{self.off_size_chunks} media payloads not a multiple of {CHUNK_UNIT} bytes"
                f" (Exotel would play a gap after each); the last was {len(data)} bytes",
            )

    def _split_sample(self, data: bytes) -> None:
        self._error(
            "odd_bytes",
            f"a media payload of {len(data)} bytes: its last byte is half a 16-bit"
            " sample (dropped)",
            {"bytes": len(data)},
        )

    # -- notes -----------------------------------------------------------------------

    def _check(self, check: SequenceCheck, n: int) -> None:
        if check.see(n) is not None:
            count = check.anomalies
            self._counted("sequence", count, f"{count} numbering anomalies; {check.summary()}")
