"""Twilio Media Streams over a WebSocket, with cutin as Twilio's side of the call.

cutin connects to the agent's ``ws://`` / ``wss://`` URL as Twilio would, says
``connected`` and ``start`` (8 kHz μ-law, one inbound track), then streams the
caller's audio as ``media`` messages of 20 ms (160 μ-law bytes) with increasing
``sequenceNumber``, ``chunk`` and ``timestamp``. From the agent it takes ``media``
(decoded, resampled to 16 kHz and queued in a :class:`PlayoutBuffer`), ``clear``
(the queue is emptied, as Twilio stops playback) and ``mark`` (echoed back once the
audio queued before it has been played, or cleared, as Twilio does). ``close()``
says ``stop`` and closes the socket.

The socket lives on its own thread with its own asyncio loop; :meth:`TwilioLine.send`
only encodes and hands chunks over, so the call loop can call it every frame. Nothing
leaves that thread as an exception: malformed or unexpected messages become ERROR
notices, the socket ending becomes a CLOSED (the agent closed it, with its code) or
FAILED (dropped) notice and state. A line is never reconnected.

The wire format is fixed by Twilio: ``audio/x-mulaw`` at 8000 Hz, mono. An agent
sending something else (16-bit PCM, say) is told apart by how its bytes decode, and
reported once.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import contextlib
import json
import socket
import ssl
import threading
import time
import uuid
from collections import deque
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import websockets
from websockets.asyncio.client import ClientConnection, connect

from sessions.lines.base import (
    LINE_RATE,
    Audio,
    LineError,
    LineNotice,
    LineState,
    NoticeKind,
    PlayoutBuffer,
)
from sessions.lines.codec import StreamResampler, decode_ulaw, encode_ulaw
from sessions.redact import redact_url

TWILIO_RATE = 8000
CHUNK_BYTES = 160
"""One Twilio media message: 20 ms of 8 kHz μ-law."""
CHUNK_MS = 20
AUDIO_FORMAT = "audio/x-mulaw;rate=8000"
MEDIA_FORMAT = {"encoding": "audio/x-mulaw", "sampleRate": TWILIO_RATE, "channels": 1}
_ERRORS_PER_KIND = 3
"""How many ERROR notices of one kind are shown before the rest are only counted."""


def _secrets_of(url: str) -> list[str]:
    """The parts of ``url`` that may hold credentials (user info, query), longest first."""
    parts = urlsplit(url)
    found = [url, parts.query, parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""]
    found += [v for _, v in parse_qsl(parts.query, keep_blank_values=True) if len(v) >= 3]
    userinfo = found[2]
    found += [piece for piece in userinfo.split(":") if len(piece) >= 3]
    return sorted({f for f in found if f}, key=len, reverse=True)


def _valid_ws_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return False
    return parts.scheme.lower() in ("ws", "wss") and bool(parts.hostname)


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


class TwilioLine:
    """A :class:`~sessions.lines.base.Line` to an agent that speaks Twilio Media Streams."""

    name = "twilio"
    audio_format = AUDIO_FORMAT

    def __init__(
        self,
        url: str,
        *,
        custom_parameters: dict[str, str] | None = None,
        playout: PlayoutBuffer | None = None,
    ) -> None:
        self._url = url
        self.target = redact_url(url)
        self._secrets = _secrets_of(url)
        self.custom_parameters = dict(custom_parameters or {})
        self.stream_sid = _sid("MZ")
        self.call_sid = _sid("CA")
        self.account_sid = _sid("AC")
        self.playout = playout if playout is not None else PlayoutBuffer()

        self._state = LineState.CONNECTING
        self._state_lock = threading.Lock()
        self._notices: deque[LineNotice] = deque()
        self._error_counts: dict[str, int] = {}
        self._said_once: set[str] = set()

        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._out: asyncio.Queue[tuple[str, Any]] | None = None
        self._ws: ClientConnection | None = None
        self._closing = False
        self._opened = False

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

    @property
    def state(self) -> LineState:
        return self._state

    def open(self, timeout_s: float = 10.0) -> None:
        if self._thread is not None:
            raise LineError(f"twilio: the line to {self.target} was already opened")
        scheme = urlsplit(self._url).scheme.lower() if "://" in self._url else ""
        if scheme not in ("ws", "wss"):
            self._set_state(LineState.FAILED)
            raise LineError(
                f"twilio: the agent URL must start with ws:// or wss:// (got {self.target})"
            )
        if not _valid_ws_url(self._url):
            self._set_state(LineState.FAILED)
            raise LineError(f"twilio: {self.target} is not a valid WebSocket URL (host, port?)")
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._run, args=(ready, timeout_s), name="cutin-twilio-line", daemon=True
        )
        self._thread.start()
        try:
            ready.result(timeout=timeout_s + 5.0)
        except LineError:
            self._set_state(LineState.FAILED)
            self._thread.join(timeout=2.0)
            raise
        except concurrent.futures.TimeoutError:
            self._set_state(LineState.FAILED)
            raise LineError(
                f"twilio: cannot connect to {self.target} (no answer within {timeout_s:g} s)"
            ) from None

    def send(self, samples: Audio) -> None:
        if self._state is not LineState.OPEN or self._loop is None or self._out is None:
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
        self._to_socket("media", chunks)

    def take(self, n: int) -> Audio:
        out = self.playout.take(n)
        if self._marks:
            self._echo_played_marks()
        return out

    def notices(self) -> list[LineNotice]:
        out: list[LineNotice] = []
        while self._notices:
            out.append(self._notices.popleft())
        return out

    def close(self) -> None:
        with self._state_lock:
            if self._closing:
                return
            self._closing = True
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop has just finished
                loop.call_soon_threadsafe(self._begin_hangup)
            thread.join(timeout=5.0)
        if self._state in (LineState.CONNECTING, LineState.OPEN):
            self._set_state(LineState.CLOSED)
            if self._opened:
                self._notice(NoticeKind.CLOSED, "hung up", {"by": "cutin", "code": None})

    # -- helpers for the calling thread --------------------------------------------

    def _to_socket(self, kind: str, payload: Any) -> None:
        loop, out = self._loop, self._out
        if loop is None or out is None:
            return
        with contextlib.suppress(RuntimeError):  # the socket thread has ended
            loop.call_soon_threadsafe(out.put_nowait, (kind, payload))

    def _notice(self, kind: NoticeKind, detail: str, data: dict[str, Any] | None = None) -> None:
        self._notices.append(LineNotice(kind, detail, dict(data or {}), time.monotonic()))

    def _error(self, key: str, detail: str, data: dict[str, Any] | None = None) -> None:
        count = self._error_counts.get(key, 0) + 1
        self._error_counts[key] = count
        if count <= _ERRORS_PER_KIND:
            self._notice(NoticeKind.ERROR, detail, {"kind": key, **(data or {})})
        elif count == _ERRORS_PER_KIND + 1:
            self._notice(
                NoticeKind.ERROR,
                f"more of the same ({key}); further ones are only counted",
                {"kind": key, "suppressed": True},
            )

    def _once(self, key: str, kind: NoticeKind, detail: str, data: dict[str, Any]) -> None:
        if key not in self._said_once:
            self._said_once.add(key)
            self._notice(kind, detail, data)

    def _set_state(self, state: LineState) -> None:
        with self._state_lock:
            self._state = state

    def _position(self) -> int:
        """Samples that have entered the playout buffer so far."""
        return self.playout.received - self.playout.dropped

    def _echo_played_marks(self, *, cleared: bool = False) -> None:
        done = self.playout.played + self.playout.cleared
        echoed: list[str] = []
        with self._marks_lock:
            while self._marks and (cleared or self._marks[0][0] <= done):
                echoed.append(self._marks.popleft()[1])
        for name in echoed:
            self._to_socket("mark", name)
            how = "cleared" if cleared else "played"
            self._notice(
                NoticeKind.MARK, f"mark {name!r} {how}", {"name": name, "cleared": cleared}
            )

    # -- the socket thread ---------------------------------------------------------

    def _run(self, ready: concurrent.futures.Future[None], timeout_s: float) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._session(ready, timeout_s))
        except Exception as exc:  # never out of the thread
            if not ready.done():
                ready.set_exception(LineError(f"twilio: {self.target}: {self._scrub(exc)}"))
            elif self._state is LineState.OPEN:
                self._set_state(LineState.FAILED)
                self._notice(NoticeKind.FAILED, f"line broke: {self._scrub(exc)}", {})
        finally:
            loop.close()

    async def _session(self, ready: concurrent.futures.Future[None], timeout_s: float) -> None:
        self._out = asyncio.Queue()
        try:
            ws = await asyncio.wait_for(
                connect(self._url, open_timeout=timeout_s, close_timeout=2.0, max_size=2**22),
                timeout_s + 1.0,
            )
        except Exception as exc:
            ready.set_exception(LineError(self._connect_error(exc, timeout_s)))
            return
        self._ws = ws
        try:
            await ws.send(
                json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"})
            )
            await ws.send(json.dumps(self._start_message()))
        except websockets.ConnectionClosed as exc:
            await ws.close()
            ready.set_exception(
                LineError(
                    f"twilio: {self.target} closed the connection during the handshake"
                    f" (code {exc.rcvd.code if exc.rcvd else 1006})"
                )
            )
            return
        self._opened = True
        self._set_state(LineState.OPEN)
        self._notice(
            NoticeKind.OPEN,
            f"connected to {self.target}; Twilio Media Streams, {AUDIO_FORMAT} mono",
            {"stream_sid": self.stream_sid, "call_sid": self.call_sid},
        )
        self._notice(
            NoticeKind.FORMAT,
            "audio/x-mulaw 8000 Hz mono (stated: Twilio's format is fixed)",
            {"encoding": "audio/x-mulaw", "rate": TWILIO_RATE, "channels": 1, "stated": True},
        )
        ready.set_result(None)
        if self._closing:  # close() came while we were connecting
            self._begin_hangup()
        sender = asyncio.ensure_future(self._sender(ws))
        try:
            await self._receiver(ws)
        finally:
            if not sender.done():
                sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
        self._finish(ws)

    def _begin_hangup(self) -> None:
        if self._out is not None:
            self._out.put_nowait(("stop", None))

    async def _sender(self, ws: ClientConnection) -> None:
        assert self._out is not None
        try:
            while True:
                kind, payload = await self._out.get()
                if kind == "media":
                    for chunk in payload:
                        await ws.send(json.dumps(self._media_message(chunk)))
                elif kind == "mark":
                    self.sequence += 1
                    await ws.send(
                        json.dumps(
                            {
                                "event": "mark",
                                "sequenceNumber": str(self.sequence),
                                "streamSid": self.stream_sid,
                                "mark": {"name": payload},
                            }
                        )
                    )
                elif kind == "stop":
                    self.sequence += 1
                    stop = {
                        "event": "stop",
                        "sequenceNumber": str(self.sequence),
                        "streamSid": self.stream_sid,
                        "stop": {"accountSid": self.account_sid, "callSid": self.call_sid},
                    }
                    await ws.send(json.dumps(stop))
                    await ws.close(1000, "call ended")
                    return
        except websockets.ConnectionClosed:
            return  # the receiver reports how it ended

    async def _receiver(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                try:
                    self._handle(raw)
                except Exception as exc:  # one bad message never ends the line
                    self._error("unhandled", f"a message cutin could not handle: {exc!r:.80}")
        except websockets.ConnectionClosed:
            pass

    def _finish(self, ws: ClientConnection) -> None:
        rcvd = ws.protocol.close_rcvd
        if self._closing:
            self._set_state(LineState.CLOSED)
            self._notice(NoticeKind.CLOSED, "hung up", {"by": "cutin", "code": 1000})
        elif rcvd is not None:
            self._set_state(LineState.CLOSED)
            reason = f": {rcvd.reason}" if rcvd.reason else ""
            self._notice(
                NoticeKind.CLOSED,
                f"the agent closed the line (code {rcvd.code}{reason})",
                {"by": "agent", "code": rcvd.code, "reason": rcvd.reason},
            )
        else:
            self._set_state(LineState.FAILED)
            self._notice(
                NoticeKind.FAILED,
                f"the connection to {self.target} dropped without a close frame",
                {"code": 1006},
            )
        with self._marks_lock:
            self._marks.clear()

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
        except ValueError:
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
        self._notice(
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
            self._marks.append((self._position(), name))
        self._echo_played_marks()

    # -- errors, without secrets ---------------------------------------------------

    def _scrub(self, exc: BaseException) -> str:
        text = str(exc) or type(exc).__name__
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text.splitlines()[0] if text else type(exc).__name__

    def _connect_error(self, exc: BaseException, timeout_s: float) -> str:
        where = f"twilio: cannot connect to {self.target}"
        if isinstance(exc, websockets.InvalidStatus):
            status = exc.response.status_code
            return f"{where} (HTTP {status}: the agent refused the WebSocket upgrade)"
        if isinstance(exc, websockets.InvalidURI):
            return f"twilio: {self.target} is not a valid WebSocket URL"
        if isinstance(exc, TimeoutError):
            return f"{where} (no answer within {timeout_s:g} s)"
        if isinstance(exc, socket.gaierror):
            return f"{where} (host {urlsplit(self._url).hostname!r} not found)"
        if isinstance(exc, ConnectionRefusedError):
            return f"{where} (connection refused: nothing listens there)"
        if isinstance(exc, ssl.SSLError):
            return f"{where} (TLS failed: {self._scrub(exc)})"
        if isinstance(exc, websockets.InvalidHandshake):
            return f"{where} (not a WebSocket server: {self._scrub(exc)})"
        if isinstance(exc, OSError):
            return f"{where} ({exc.strerror or self._scrub(exc)})"
        return f"{where} ({type(exc).__name__}: {self._scrub(exc)})"
