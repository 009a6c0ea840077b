"""OpenAI Realtime as a line: a speech-to-speech model is the agent, cutin the client app.

cutin connects with the real ``openai`` client (``client.realtime.connect``, the sync
WebSocket API, ``ws(s)://BASE/realtime?model=M``), sends one ``session.update`` (PCM16
at 24 kHz both ways, server VAD turn detection, the instructions and voice) and waits
for ``session.updated``. After that two threads of its own carry the call:

- the *reader* turns server events into playout and notices: audio deltas
  (``response.output_audio.delta``, or the beta ``response.audio.delta``) are decoded,
  resampled 24 → 16 kHz and pushed into the :class:`PlayoutBuffer`; transcripts and
  the rest of the protocol become ``AGENT_EVENT`` notices, ``error`` events and
  unparsable messages ``ERROR`` notices; a closed socket ends the line (CLOSED when
  closed cleanly, FAILED otherwise) and is never reconnected;
- the *writer* sends what :meth:`RealtimeLine.send` queued: caller audio resampled
  16 → 24 kHz, as ``input_audio_buffer.append`` batches of ``append_ms``.

Barge-in is what a client app does: on ``input_audio_buffer.speech_started`` the queued
agent audio is flushed (a ``CLEAR`` notice with the seconds dropped) and every agent
item still playing is truncated (``conversation.item.truncate``) at the audio that was
actually played. Whether the model then stops is up to the agent: audio it still sends
for a truncated item is dropped and reported as an ``AGENT_EVENT`` (the seconds it
talked on), a new response plays as usual, and a server that never signals the
caller's speech simply keeps talking over them, which the caller hears.

The API key comes from ``api_key`` or ``OPENAI_API_KEY``. Neither it nor the user
info or query values of ``base_url`` appear in any notice, message or
:attr:`RealtimeLine.target` (see :mod:`sessions.redact`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from sessions.lines.base import (
    LINE_RATE,
    Audio,
    LineError,
    LineNotice,
    LineState,
    NoticeKind,
    PlayoutBuffer,
)
from sessions.lines.codec import StreamResampler
from sessions.llm_client import PLACEHOLDER_KEY, split_query
from sessions.redact import Redactor, public_url
from sessions.speech.wav import float_to_pcm16, pcm16_to_float

if TYPE_CHECKING:
    from websockets.exceptions import ConnectionClosed

WIRE_RATE = 24_000
"""The only PCM rate the Realtime API speaks."""
AUDIO_FORMAT = "audio/pcm;rate=24000"
DEFAULT_MODEL = "gpt-realtime-1.5"
"""A current, non-reasoning Realtime model (the bare ``gpt-realtime`` is deprecated)."""

AUDIO_DELTA = frozenset({"response.output_audio.delta", "response.audio.delta"})
TRANSCRIPT_EVENTS = frozenset(
    {
        "response.output_audio_transcript.delta",
        "response.output_audio_transcript.done",
        "response.audio_transcript.delta",
        "response.audio_transcript.done",
    }
)
KNOWN_EVENTS = frozenset(
    {
        "session.created",
        "session.updated",
        "conversation.created",
        "conversation.item.created",
        "conversation.item.added",
        "conversation.item.done",
        "conversation.item.retrieved",
        "conversation.item.truncated",
        "conversation.item.deleted",
        "conversation.item.input_audio_transcription.delta",
        "conversation.item.input_audio_transcription.completed",
        "conversation.item.input_audio_transcription.failed",
        "conversation.item.input_audio_transcription.segment",
        "input_audio_buffer.committed",
        "input_audio_buffer.cleared",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.timeout_triggered",
        "output_audio_buffer.started",
        "output_audio_buffer.stopped",
        "output_audio_buffer.cleared",
        "response.created",
        "response.done",
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_audio.done",
        "response.audio.done",
        "response.output_text.delta",
        "response.output_text.done",
        "response.text.delta",
        "response.text.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "rate_limits.updated",
        "error",
    }
    | AUDIO_DELTA
    | TRANSCRIPT_EVENTS
)
QUIET_EVENTS = frozenset({"conversation.item.added", "conversation.item.done"})
"""Known events not worth a notice (the same item is announced by ``created``/``output_item``)."""

_SCALARS = (str, int, float, bool, type(None))
_MAX_TEXT = 500


@dataclass
class _Segment:
    start: int
    """Position of its first sample in the playout timeline (samples ever queued)."""
    end: int
    offset: int
    """Where its first sample lies in the item's own audio (16 kHz samples)."""


@dataclass
class _Item:
    """An agent item with audio: where its samples went in the playout timeline."""

    item_id: str
    content_index: int
    response_id: str
    received: int = 0
    """16 kHz samples decoded for this item (queued or refused by a full buffer)."""
    segments: list[_Segment] = field(default_factory=list)
    active: bool = True
    """Its response is still in progress (more audio may come)."""
    truncated_ms: int | None = None
    """Where cutin truncated it (``audio_end_ms``), once it has."""
    late: int = 0
    """16 kHz samples of its audio that arrived after the truncate."""
    late_reported: bool = False

    def add(self, start: int, accepted: int, total: int) -> None:
        if accepted > 0:
            last = self.segments[-1] if self.segments else None
            if (
                last is not None
                and last.end == start
                and last.offset + (last.end - last.start) == self.received
            ):
                last.end += accepted
            else:
                self.segments.append(_Segment(start, start + accepted, self.received))
        self.received += total

    def heard_at(self, head: int) -> int:
        """How far into this item's audio playback was when the timeline reached ``head``."""
        heard = 0
        for seg in self.segments:
            if seg.start < head:
                heard = max(heard, seg.offset + min(head, seg.end) - seg.start)
        return heard

    def unplayed(self, head: int) -> bool:
        return any(seg.end > head for seg in self.segments)

    def cut(self, head: int) -> None:
        for seg in self.segments:
            seg.end = max(seg.start, min(seg.end, head))


class RealtimeLine:
    """A line to an OpenAI Realtime (or compatible) speech-to-speech session.

    ``base_url`` is the API base (``http://127.0.0.1:8000/v1`` for a local server; none:
    the ``openai`` client's default); the socket goes to ``BASE/realtime?model=MODEL``.
    ``instructions`` (the scenario's system prompt or ``--agent-prompt``) and ``voice``
    go into the ``session.update``; ``silence_duration_ms``, ``vad_threshold`` and
    ``prefix_padding_ms`` configure the server's VAD, ``interrupt_response`` whether it
    may cancel a response when the caller starts speaking. Audio the agent still sends
    for an item after cutin truncated it is dropped, as client apps do, and reported
    (``agent audio after truncate``, then ``agent talked on after truncate`` with the
    seconds); ``play_after_truncate`` plays it instead.

    ``append_ms`` batches caller audio into ``input_audio_buffer.append`` events of at
    least that much. The default sends every 32 ms frame at once: a batch delays the
    server's VAD, and so the barge-in cutin measures, by up to its length (on loopback
    the caller's onset → CLEAR took 65 ms with 32 ms batches, 130 ms with 100 ms ones).
    """

    name = "realtime"
    audio_format = AUDIO_FORMAT

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        instructions: str | None = None,
        voice: str = "alloy",
        silence_duration_ms: int = 500,
        vad_threshold: float = 0.5,
        prefix_padding_ms: int = 300,
        interrupt_response: bool = True,
        play_after_truncate: bool = False,
        append_ms: float = 32.0,
        playout_max_s: float = 120.0,
    ) -> None:
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None and base_url is None:
            raise LineError(
                "the Realtime line needs OPENAI_API_KEY (or --base-url for a local server)"
            )
        self._key = key or PLACEHOLDER_KEY
        self._redactor = Redactor(secrets=[key], urls=[base_url])
        self.model = model
        self.instructions = instructions
        self.voice = voice
        self.play_after_truncate = play_after_truncate
        self.turn_detection: dict[str, Any] = {
            "type": "server_vad",
            "threshold": vad_threshold,
            "prefix_padding_ms": prefix_padding_ms,
            "silence_duration_ms": silence_duration_ms,
            "create_response": True,
            "interrupt_response": interrupt_response,
        }
        import openai  # heavy: loaded when a line is made, not when the module is imported

        try:
            base, query = split_query(base_url)
            self._client = openai.OpenAI(
                api_key=self._key, base_url=base, default_query=query or None, max_retries=0
            )
            self.target = self._websocket_url()
        except Exception as exc:  # a malformed base URL
            raise LineError(self._clean(f"bad Realtime base URL {base_url}: {exc}")) from None
        self._redactor = Redactor(secrets=[key], urls=[base_url], shown=[self.target])
        self.playout = PlayoutBuffer(playout_max_s)
        self._append_n = max(1, round(append_ms / 1000.0 * WIRE_RATE))

        self._lock = threading.Lock()
        self._state = LineState.CONNECTING
        self._opened = False
        self._closing = False
        self._notices: list[LineNotice] = []
        self._conn: Any = None
        self._outbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._ready = threading.Event()
        self._handshake_error: str | None = None

        self._send_lock = threading.Lock()
        self._up = StreamResampler(LINE_RATE, WIRE_RATE)
        self._pending: list[Audio] = []
        self._pending_n = 0
        self.sent_samples = 0
        """Caller samples (16 kHz) handed to :meth:`send` while open."""

        # Reader-thread state.
        self._down = StreamResampler(WIRE_RATE, LINE_RATE)
        self._down_item: str | None = None
        self._queued = 0
        """Samples ever accepted into the playout buffer (its timeline's end)."""
        self._items: dict[str, _Item] = {}
        self.session: dict[str, Any] = {}
        """The session as the server last described it (``session.created``/``updated``)."""

    # -- the Line protocol -------------------------------------------------------------

    @property
    def state(self) -> LineState:
        with self._lock:
            return self._state

    def open(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            if self._opened or self._closing:
                raise LineError(f"the Realtime line to {self.target} was already used")
            self._opened = True
        deadline = time.monotonic() + timeout_s
        try:
            manager = self._client.realtime.connect(
                model=self.model,
                websocket_connection_options=cast(Any, {"open_timeout": timeout_s}),
            )
            conn = manager.enter()
        except Exception as exc:  # every failure becomes one line
            message = self._clean(self._connect_failure(exc, timeout_s))
            self._end(LineState.FAILED, message, {"stage": "connect"})
            raise LineError(message) from None
        self._conn = conn
        reader = threading.Thread(target=self._read_loop, name="realtime-reader", daemon=True)
        self._threads.append(reader)
        reader.start()
        try:
            conn.send(cast(Any, self.session_update()))
        except Exception as exc:
            self._abort_open(
                f"could not send session.update to {self.target}: {type(exc).__name__}"
            )
        if not self._ready.wait(max(0.0, deadline - time.monotonic())):
            self._abort_open(f"no session.updated from {self.target} within {timeout_s:g} s")
        if self._handshake_error is not None:
            self._abort_open(self._handshake_error)
        writer = threading.Thread(target=self._write_loop, name="realtime-writer", daemon=True)
        self._threads.append(writer)
        with self._lock:
            if self._state is not LineState.CONNECTING:
                raise LineError(f"the Realtime line to {self.target} ended during the handshake")
            self._state = LineState.OPEN
        writer.start()
        self._notify(
            NoticeKind.OPEN, f"realtime {self.model}: {AUDIO_FORMAT}", {"target": self.target}
        )
        self._notify(
            NoticeKind.FORMAT,
            AUDIO_FORMAT,
            {
                "encoding": "pcm16",
                "rate": WIRE_RATE,
                "channels": 1,
                "session": self._format_of_session(),
            },
        )

    def send(self, samples: Audio) -> None:
        if self.state is not LineState.OPEN:
            return
        with self._send_lock:
            chunk = np.asarray(samples, dtype=np.float32).reshape(-1)
            self.sent_samples += chunk.size
            wire = self._up.process(chunk)
            if wire.size:
                self._pending.append(wire)
                self._pending_n += wire.size
            if self._pending_n < self._append_n:
                return
            batch = np.concatenate(self._pending)
            self._pending = []
            self._pending_n = 0
        audio = base64.b64encode(float_to_pcm16(batch)).decode("ascii")
        self._outbox.put({"type": "input_audio_buffer.append", "audio": audio})

    def take(self, n: int) -> Audio:
        return self.playout.take(n)

    def notices(self) -> list[LineNotice]:
        with self._lock:
            out, self._notices = self._notices, []
        return out

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
        self._outbox.put(None)
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        self._end(LineState.CLOSED, f"hung up on {self.target}", {"by": "cutin", "code": 1000})
        current = threading.current_thread()
        for thread in self._threads:
            if thread is not current and thread.is_alive():
                thread.join(timeout=2.0)

    # -- what goes out -----------------------------------------------------------------

    def session_update(self) -> dict[str, Any]:
        """The ``session.update`` event sent on open (GA shape)."""
        pcm = {"type": "audio/pcm", "rate": WIRE_RATE}
        session: dict[str, Any] = {
            "type": "realtime",
            "output_modalities": ["audio"],
            "audio": {
                "input": {"format": dict(pcm), "turn_detection": dict(self.turn_detection)},
                "output": {"format": dict(pcm), "voice": self.voice},
            },
        }
        if self.instructions:
            session["instructions"] = self.instructions
        return {"type": "session.update", "session": session}

    def _write_loop(self) -> None:
        from websockets.exceptions import ConnectionClosed

        conn = self._conn
        while True:
            event = self._outbox.get()
            if event is None:
                return
            try:
                conn.send(cast(Any, event))
            except ConnectionClosed:
                return  # the reader reports how it ended
            except Exception as exc:  # never raise out of the thread
                if self.state is not LineState.OPEN:
                    return
                self._notify(
                    NoticeKind.ERROR,
                    self._clean(f"could not send {event.get('type')}: {type(exc).__name__}: {exc}"),
                    {"type": event.get("type")},
                )

    # -- what comes in -----------------------------------------------------------------

    def _read_loop(self) -> None:
        from websockets.exceptions import ConnectionClosed

        conn = self._conn
        try:
            while True:
                try:
                    raw = conn.recv_bytes()
                except ConnectionClosed as exc:
                    self._closed_by_agent(exc)
                    return
                self._handle_raw(raw)
        except Exception as exc:  # never raise out of the thread
            if not self._closing:
                self._handshake_error = self._handshake_error or self._clean(
                    f"the Realtime line to {self.target} broke: {type(exc).__name__}: {exc}"
                )
                self._end(LineState.FAILED, self._handshake_error, {"by": "cutin"})
                self._ready.set()

    def _closed_by_agent(self, exc: ConnectionClosed) -> None:
        from websockets.exceptions import ConnectionClosedOK

        if self._closing:
            return
        code = exc.rcvd.code if exc.rcvd is not None else None
        reason = exc.rcvd.reason if exc.rcvd is not None else ""
        if isinstance(exc, ConnectionClosedOK):
            detail = f"{self.target} closed the line (code {code}{': ' + reason if reason else ''})"
            self._end(LineState.CLOSED, self._clean(detail), {"by": "agent", "code": code})
        elif code is None:
            detail = f"connection to {self.target} lost (no close frame)"
            self._end(LineState.FAILED, detail, {"by": "agent", "code": None})
        else:
            detail = (
                f"connection to {self.target} failed (code {code}{': ' + reason if reason else ''})"
            )
            self._end(LineState.FAILED, self._clean(detail), {"by": "agent", "code": code})
        if not self._ready.is_set():
            self._handshake_error = detail
            self._ready.set()

    def _handle_raw(self, raw: bytes | str) -> None:
        try:
            event = json.loads(raw)
        except (ValueError, RecursionError):
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            self._notify(
                NoticeKind.ERROR,
                "malformed event from the agent (not JSON)",
                {"raw": self._clean(text[:200])},
            )
            return
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            self._notify(
                NoticeKind.ERROR,
                "malformed event from the agent (no type)",
                {"raw": self._clean(json.dumps(event)[:200])},
            )
            return
        try:
            self._handle(event)
        except Exception as exc:  # one bad event never ends the line
            self._notify(
                NoticeKind.ERROR,
                self._clean(f"malformed {event['type']} event: {type(exc).__name__}: {exc}"),
                {"type": event["type"]},
            )

    def _handle(self, event: dict[str, Any]) -> None:
        kind: str = event["type"]
        if kind in AUDIO_DELTA:
            self._on_audio(event)
            return
        if kind == "input_audio_buffer.speech_started":
            self._notify(NoticeKind.AGENT_EVENT, kind, _summary(event))
            self._barge_in(event)
            return
        if kind == "error":
            error = event.get("error")
            error = error if isinstance(error, dict) else {"message": str(error)}
            detail = self._clean(
                "agent error"
                + "".join(f" {error[k]}" for k in ("type", "code") if error.get(k))
                + f": {error.get('message', '')}"
            )
            self._notify(NoticeKind.ERROR, detail, _summary(event))
            if not self._ready.is_set():
                self._handshake_error = f"{self.target} refused the session: {detail}"
                self._ready.set()
            return
        if kind in ("session.created", "session.updated"):
            session = event.get("session")
            if isinstance(session, dict):
                self.session = session
            if kind == "session.updated":
                self._ready.set()
        elif kind in ("response.done", "response.output_item.done"):
            self._finish(event)
        if kind in QUIET_EVENTS:
            return
        data = _summary(event)
        if kind not in KNOWN_EVENTS:
            data["unknown"] = True
        self._notify(NoticeKind.AGENT_EVENT, kind, data)

    def _on_audio(self, event: dict[str, Any]) -> None:
        pcm = base64.b64decode(event["delta"], validate=True)
        item_id = str(event.get("item_id", ""))
        item = self._items.get(item_id)
        first = item is None
        if item is None:
            item = _Item(
                item_id, int(event.get("content_index", 0)), str(event.get("response_id", ""))
            )
            self._items[item_id] = item
            self._prune()
        if item.truncated_ms is not None:
            first_late = item.late == 0
            item.late += len(pcm) // 2 * LINE_RATE // WIRE_RATE
            if first_late:
                self._notify(
                    NoticeKind.AGENT_EVENT,
                    "agent audio after truncate",
                    {"item_id": item_id, "audio_end_ms": item.truncated_ms},
                )
            if not self.play_after_truncate:
                return
        if self._down_item != item_id:
            self._down.reset()
            self._down_item = item_id
        audio = self._down.process(pcm16_to_float(pcm))
        before = self.playout.dropped
        self.playout.push(audio)
        accepted = audio.size - (self.playout.dropped - before)
        item.add(self._queued, accepted, audio.size)
        self._queued += accepted
        if first:
            self._notify(
                NoticeKind.AGENT_EVENT,
                "agent audio started",
                {
                    "type": event["type"],
                    "item_id": item_id,
                    "response_id": item.response_id,
                    "first": True,
                },
            )

    def _barge_in(self, event: dict[str, Any]) -> None:
        """The caller started speaking: flush the playout and truncate what was not heard."""
        dropped = self.playout.clear()
        head = self._queued - dropped
        truncated: list[dict[str, Any]] = []
        for item in self._items.values():
            if not (item.active or item.unplayed(head)):
                continue
            if item.truncated_ms is not None and not self.play_after_truncate:
                continue  # cut before, and nothing of it has played since
            end_ms = item.heard_at(head) * 1000 // LINE_RATE
            item.cut(head)
            item.truncated_ms = end_ms
            self._outbox.put(
                {
                    "type": "conversation.item.truncate",
                    "item_id": item.item_id,
                    "content_index": item.content_index,
                    "audio_end_ms": end_ms,
                }
            )
            truncated.append({"item_id": item.item_id, "audio_end_ms": end_ms})
        if dropped or truncated:
            self._notify(
                NoticeKind.CLEAR,
                f"agent audio flushed at caller speech ({dropped / LINE_RATE:.2f} s unplayed)",
                {
                    "dropped_s": dropped / LINE_RATE,
                    "truncated": truncated,
                    "audio_start_ms": event.get("audio_start_ms"),
                },
            )

    def _finish(self, event: dict[str, Any]) -> None:
        if event["type"] == "response.output_item.done":
            done = event.get("item")
            ended = (
                [self._items[done["id"]]]
                if isinstance(done, dict) and done.get("id") in self._items
                else []
            )
        else:
            response = event.get("response")
            response_id = response.get("id") if isinstance(response, dict) else None
            ended = [i for i in self._items.values() if response_id in (None, i.response_id)]
        for item in ended:
            item.active = False
            if item.late and not item.late_reported:
                item.late_reported = True
                self._notify(
                    NoticeKind.AGENT_EVENT,
                    "agent talked on after truncate",
                    {
                        "item_id": item.item_id,
                        "audio_end_ms": item.truncated_ms,
                        "late_s": item.late / LINE_RATE,
                        "played": self.play_after_truncate,
                    },
                )

    def _prune(self, keep: int = 8) -> None:
        while len(self._items) > keep:
            oldest = next(iter(self._items))
            del self._items[oldest]

    # -- bookkeeping -------------------------------------------------------------------

    def _notify(
        self, kind: NoticeKind, detail: str = "", data: dict[str, Any] | None = None
    ) -> None:
        notice = LineNotice(kind, self._clean(detail), self._scrub(data or {}))
        with self._lock:
            self._notices.append(notice)

    def _end(self, state: LineState, detail: str, data: dict[str, Any]) -> None:
        """Move to a final state once; the first cause is the one reported."""
        with self._lock:
            if self._state in (LineState.CLOSED, LineState.FAILED):
                return
            self._state = state
            kind = NoticeKind.CLOSED if state is LineState.CLOSED else NoticeKind.FAILED
            self._notices.append(LineNotice(kind, detail, data))
        self._outbox.put(None)

    def _abort_open(self, message: str) -> None:
        message = self._clean(message)
        self._end(LineState.FAILED, message, {"stage": "handshake"})
        with self._lock:
            self._closing = True
        with contextlib.suppress(Exception):
            self._conn.close()
        raise LineError(message) from None

    def _clean(self, text: str) -> str:
        """One line, bounded, with the key blanked wherever it might have crept in."""
        return self._blank(" ".join(str(text).split()))[:_MAX_TEXT]

    def _blank(self, text: str) -> str:
        return self._redactor(text)

    def _scrub(self, value: Any) -> Any:
        """``value`` (an event's summary) with the key blanked in every string in it."""
        if isinstance(value, str):
            return self._blank(value)
        if isinstance(value, dict):
            return {k: self._scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._scrub(v) for v in value]
        return value

    def _websocket_url(self) -> str:
        base = str(self._client.websocket_base_url or self._client.base_url)
        for http, ws in (("https://", "wss://"), ("http://", "ws://")):
            if base.startswith(http):
                base = ws + base[len(http) :]
        # Shown and logged: no user info or query of the base URL (the model is cutin's).
        return f"{public_url(base).rstrip('/')}/realtime?model={self.model}"

    def _connect_failure(self, exc: BaseException, timeout_s: float) -> str:
        from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

        where = self.target
        if isinstance(exc, InvalidStatus):
            status = exc.response.status_code
            hint = " (check OPENAI_API_KEY)" if status in (401, 403) else ""
            return f"{where} refused the WebSocket: HTTP {status}{hint}"
        if isinstance(exc, ConnectionRefusedError):
            return f"cannot connect to {where}: connection refused"
        if isinstance(exc, socket.gaierror):
            return f"cannot connect to {where}: host not found"
        if isinstance(exc, TimeoutError):
            return f"cannot connect to {where}: no answer within {timeout_s:g} s"
        if isinstance(exc, InvalidURI):
            return f"{where} is not a WebSocket URL"
        if isinstance(exc, InvalidHandshake):
            return f"{where} did not complete the WebSocket handshake: {exc}"
        if isinstance(exc, OSError):
            return f"cannot connect to {where}: {exc.strerror or type(exc).__name__}"
        return f"cannot connect to {where}: {type(exc).__name__}: {exc}"

    def _format_of_session(self) -> Any:
        audio = self.session.get("audio")
        if isinstance(audio, dict) and isinstance(audio.get("output"), dict):
            return audio["output"].get("format")
        return self.session.get("output_audio_format")


def _summary(event: dict[str, Any]) -> dict[str, Any]:
    """The loggable part of a server event: its scalars and the ids of what it carries."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if isinstance(value, str):
            out[key] = value[:_MAX_TEXT]
        elif isinstance(value, _SCALARS):
            out[key] = value
    for key in ("response", "item", "error", "part"):
        value = event.get(key)
        if isinstance(value, dict):
            out[key] = {
                k: (v[:_MAX_TEXT] if isinstance(v, str) else v)
                for k, v in value.items()
                if isinstance(v, _SCALARS) or k == "status_details"
            }
    return out
