"""A loopback OpenAI Realtime server for tests: the real ``openai`` client connects to it
over a WebSocket and talks the Realtime event protocol with a small speech-to-speech
"model" made of a server VAD and espeak-ng.

    server = RealtimeServer().start()       # 127.0.0.1, a free port, its own thread
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test-not-a-key")
    ...                                     # ws://127.0.0.1:PORT/v1/realtime?model=M
    server.events("conversation.item.truncate")
    server.close()

What it does, per connection (the path must be ``/v1/realtime``):

* sends ``session.created``; answers ``session.update`` with ``session.updated`` (the
  session merged with the update, as the real API does);
* ``input_audio_buffer.append``: decodes the 24 kHz PCM16, keeps it
  (:attr:`RealtimeServer.input_audio`) and runs a *server VAD* on it: 20 ms frames,
  RMS energy with hysteresis (speech when ``start_ms`` of frames are above
  ``speech_db``, silence when below ``silence_db`` for the session's
  ``silence_duration_ms``), so espeak speech triggers it and silence or faint noise
  does not. It sends ``input_audio_buffer.speech_started`` (``audio_start_ms``
  includes the prefix padding) and ``speech_stopped``, then commits the audio as a
  user item and, with ``create_response``, answers;
* an answer is real espeak-ng speech (:data:`REPLY_SSML`: a long reply with 400 ms
  pauses), 24 kHz PCM16 streamed in ``chunk_ms`` deltas ``speed`` times faster than
  real time, with transcript deltas, ``content_part``/``output_item`` events and a
  final ``response.done``. GA event names, or the beta ones with ``beta_names``;
* caller speech during an answer: with ``yield_to_speech`` (the default) the answer is
  cancelled (``response.done`` with status ``cancelled``), unless the session's
  ``interrupt_response`` is false, in which case it only reports ``speech_started``.
  With ``yield_to_speech=False`` the model is deaf while it talks: no speech_started
  until its answer would have finished playing, so it talks over the caller;
* ``conversation.item.truncate``: checked against the audio sent for that item
  (``conversation.item.truncated``, or an ``error`` when ``audio_end_ms`` is past it);
* anything else is recorded; unknown client events get an ``error``.

Fault modes: ``reject_status`` answers the upgrade with that HTTP status;
``answer_session_update=False`` never answers the update; ``session_update_error``
answers it with an ``error`` event; ``drop_after_s`` aborts the TCP connection (no
close frame) once that much answer audio was sent; ``echo_auth="refuse"`` answers the
update with an ``error`` that quotes the request's Authorization headers (a server that
echoes credentials), ``echo_auth="call"`` sends them (and every request header) in an
event of its own just after ``session.updated``; :meth:`push_raw` sends any text
(malformed JSON, unknown events, an ``error``) to the live connection and
:meth:`hangup` closes it cleanly.

Everything received is recorded in :attr:`received` with its arrival time.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np

WIRE_RATE = 24_000
FRAME = WIRE_RATE // 50
"""One VAD frame: 20 ms at 24 kHz."""

REPLY_SSML = (
    "<speak>Thanks for waiting, I have your order open now."
    '<break time="400ms"/>I can see the delivery address we have on file, '
    "which is the Elm Street one from last year."
    '<break time="400ms"/>Before I change anything, I would like to read the order back '
    "to you, so that we are both sure it is the right one."
    '<break time="400ms"/>There are three items on it, a blue kettle, two mugs, '
    "and a set of tea towels, and it is due to ship on Thursday morning."
    '<break time="400ms"/>If the new address is in the same city, the delivery date '
    "should not move at all.</speak>"
)


@functools.lru_cache(maxsize=4)
def synthesize_reply(ssml: str = REPLY_SSML) -> tuple[bytes, str]:
    """espeak-ng speech for ``ssml`` as 24 kHz PCM16, and the words it says."""
    from sessions.speech.tts import EspeakTts
    from sessions.speech.wav import float_to_pcm16, resample

    speech = EspeakTts().speak_ssml(ssml)
    return float_to_pcm16(resample(speech.audio, 16_000, WIRE_RATE)), speech.text


def _event_id() -> str:
    return "event_" + uuid.uuid4().hex[:16]


@dataclass
class Received:
    event: dict[str, Any]
    arrived: float
    """``time.monotonic()`` on arrival."""


@dataclass
class _Answer:
    response_id: str
    item_id: str
    started: float
    samples_sent: int = 0
    duration_s: float = 0.0
    cancelled: bool = False
    done: bool = False


@dataclass
class _Vad:
    speaking: bool = False
    loud_run: int = 0
    quiet_ms: int = 0
    frames: int = 0
    item_id: str = ""
    carry: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int16))


class RealtimeServer:
    """See the module docstring. ``start()`` returns ``self``; ``close()`` stops it."""

    def __init__(
        self,
        *,
        yield_to_speech: bool = True,
        speed: float = 4.0,
        chunk_ms: int = 100,
        reply_ssml: str = REPLY_SSML,
        beta_names: bool = False,
        speech_db: float = -35.0,
        silence_db: float = -45.0,
        start_ms: int = 60,
        reject_status: int | None = None,
        answer_session_update: bool = True,
        session_update_error: bool = False,
        drop_after_s: float | None = None,
        echo_auth: str | None = None,
    ) -> None:
        self.yield_to_speech = yield_to_speech
        self.speed = speed
        self.chunk_ms = chunk_ms
        self.reply_ssml = reply_ssml
        self.beta_names = beta_names
        self.speech_db = speech_db
        self.silence_db = silence_db
        self.start_ms = start_ms
        self.reject_status = reject_status
        self.answer_session_update = answer_session_update
        self.session_update_error = session_update_error
        self.drop_after_s = drop_after_s
        self.echo_auth = echo_auth

        self.received: list[Received] = []
        self.sent: list[Received] = []
        """Every event this server sent, with the time it was sent."""
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.input_audio = bytearray()
        """All caller audio appended, 24 kHz PCM16 (the session's input buffer)."""
        self.answers: list[_Answer] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self._ws: Any = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> RealtimeServer:
        self._thread = threading.Thread(target=self._run, name="realtime-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10.0):
            raise RuntimeError("the loopback Realtime server did not start")
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=5.0)
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        finally:
            loop.close()

    async def _serve(self) -> None:
        from websockets.asyncio.server import serve

        self._stop = asyncio.Event()
        async with serve(
            self._handle,
            "127.0.0.1",
            0,
            process_request=self._process_request,
            max_size=None,
            compression=None,
        ) as server:
            self._server = server
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stop.wait()

    async def _shutdown(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        self._stop.set()

    # -- what the tests look at --------------------------------------------------------

    def events(self, kind: str) -> list[dict[str, Any]]:
        """Client events of one type, in arrival order."""
        with self._lock:
            return [r.event for r in self.received if r.event.get("type") == kind]

    def sent_events(self, kind: str) -> list[Received]:
        with self._lock:
            return [r for r in self.sent if r.event.get("type") == kind]

    def wait_for(self, kind: str, timeout_s: float = 5.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = self.events(kind)
            if found:
                return found[0]
            time.sleep(0.01)
        raise AssertionError(f"the server received no {kind} within {timeout_s} s")

    @property
    def input_seconds(self) -> float:
        return len(self.input_audio) / 2 / WIRE_RATE

    def push_raw(self, text: str) -> None:
        """Send ``text`` as one WebSocket message on the live connection."""
        self._call(self._send_text(text))

    def push(self, event: dict[str, Any]) -> None:
        self._call(self._send(event))

    def hangup(self, code: int = 1000, reason: str = "bye") -> None:
        """Close the live connection cleanly."""
        self._call(self._ws.close(code, reason))

    def _call(self, coro: Any) -> None:
        assert self._loop is not None and self._ws is not None, "no live connection"
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=5.0)

    # -- the protocol ------------------------------------------------------------------

    def _process_request(self, connection: Any, request: Any) -> Any:
        self.paths.append(request.path)
        self.headers.append({k.lower(): v for k, v in request.headers.raw_items()})
        if self.reject_status is not None:
            return connection.respond(self.reject_status, "rejected by the test\n")
        if urlsplit(request.path).path != "/v1/realtime":
            return connection.respond(404, "not a realtime path\n")
        return None

    async def _handle(self, ws: Any) -> None:
        self._ws = ws
        query = parse_qs(urlsplit(ws.request.path).query)
        self.model = query.get("model", [""])[0]
        self.session: dict[str, Any] = {
            "id": "sess_" + uuid.uuid4().hex[:12],
            "object": "realtime.session",
            "type": "realtime",
            "model": self.model,
            "output_modalities": ["audio"],
            "instructions": "You are a helpful assistant.",
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": WIRE_RATE},
                    "turn_detection": {
                        "type": "server_vad",
                        "threshold": 0.5,
                        "prefix_padding_ms": 300,
                        "silence_duration_ms": 500,
                        "create_response": True,
                        "interrupt_response": True,
                    },
                },
                "output": {"format": {"type": "audio/pcm", "rate": WIRE_RATE}, "voice": "alloy"},
            },
        }
        self._vad = _Vad(item_id=self._new_item())
        self._answer: _Answer | None = None
        self._deaf_until = 0.0
        self._items: dict[str, int] = {}
        """Assistant item id → 24 kHz samples of audio sent for it."""
        await self._send({"type": "session.created", "session": self.session})
        try:
            async for message in ws:
                await self._on_message(message)
        except Exception:  # the connection went away; the test sees it from the client
            return
        finally:
            for task in list(self._tasks):
                task.cancel()

    async def _on_message(self, message: str | bytes) -> None:
        try:
            event = json.loads(message)
        except ValueError:
            await self._error("invalid_request_error", "invalid_json", "not JSON")
            return
        with self._lock:
            self.received.append(Received(event, time.monotonic()))
        kind = event.get("type")
        if kind == "session.update":
            await self._on_session_update(event)
        elif kind == "input_audio_buffer.append":
            pcm = base64.b64decode(event["audio"])
            with self._lock:
                self.input_audio.extend(pcm)
            await self._vad_step(np.frombuffer(pcm, dtype="<i2"))
        elif kind == "conversation.item.truncate":
            await self._on_truncate(event)
        elif kind == "response.cancel":
            await self._cancel("client_cancelled")
        elif kind in ("input_audio_buffer.commit", "input_audio_buffer.clear", "response.create"):
            pass  # recorded; the tests drive turns with server VAD
        else:
            await self._error("invalid_request_error", "unknown_event", f"unknown event {kind!r}")

    async def _on_session_update(self, event: dict[str, Any]) -> None:
        if not self.answer_session_update:
            return
        if self.session_update_error:
            await self._error("invalid_request_error", "invalid_value", "scripted session error")
            return
        if self.echo_auth == "refuse":
            await self._error("invalid_request_error", "invalid_auth", self._echoed_auth())
            return
        update = event.get("session") or {}
        _merge(self.session, update)
        await self._send({"type": "session.updated", "session": self.session})
        if self.echo_auth == "call":
            headers = self._ws.request.headers
            every = json.dumps(list(headers.raw_items()))
            await self._send(
                {"type": "debug.request", "message": self._echoed_auth(), "headers": every}
            )

    def _turn_detection(self) -> dict[str, Any]:
        td = self.session.get("audio", {}).get("input", {}).get("turn_detection")
        return td if isinstance(td, dict) else {}

    async def _vad_step(self, samples: np.ndarray) -> None:
        vad = self._vad
        data = np.concatenate([vad.carry, samples])
        whole = data.size - data.size % FRAME
        vad.carry = data[whole:]
        td = self._turn_detection()
        silence_ms = int(td.get("silence_duration_ms", 500))
        padding_ms = int(td.get("prefix_padding_ms", 300))
        for start in range(0, whole, FRAME):
            frame = data[start : start + FRAME].astype(np.float64) / 32768.0
            db = 20 * np.log10(np.sqrt(np.mean(frame * frame)) + 1e-12)
            vad.frames += 1
            now_ms = vad.frames * 20
            if not vad.speaking:
                vad.loud_run = vad.loud_run + 1 if db >= self.speech_db else 0
                if vad.loud_run * 20 >= self.start_ms and not self._deaf():
                    vad.speaking = True
                    vad.quiet_ms = 0
                    begin = max(0, now_ms - vad.loud_run * 20 - padding_ms)
                    await self._send(
                        {
                            "type": "input_audio_buffer.speech_started",
                            "audio_start_ms": begin,
                            "item_id": vad.item_id,
                        }
                    )
                    if td.get("interrupt_response", True):
                        await self._cancel("turn_detected")
            else:
                vad.quiet_ms = vad.quiet_ms + 20 if db < self.silence_db else 0
                if vad.quiet_ms >= silence_ms:
                    vad.speaking = False
                    vad.loud_run = 0
                    await self._speech_stopped(now_ms, td)

    def _deaf(self) -> bool:
        return not self.yield_to_speech and time.monotonic() < self._deaf_until

    async def _speech_stopped(self, now_ms: int, td: dict[str, Any]) -> None:
        user_item = self._vad.item_id
        self._vad.item_id = self._new_item()
        await self._send(
            {
                "type": "input_audio_buffer.speech_stopped",
                "audio_end_ms": now_ms,
                "item_id": user_item,
            }
        )
        await self._send(
            {"type": "input_audio_buffer.committed", "previous_item_id": None, "item_id": user_item}
        )
        await self._send(
            {
                "type": "conversation.item.created",
                "previous_item_id": None,
                "item": {
                    "id": user_item,
                    "object": "realtime.item",
                    "type": "message",
                    "role": "user",
                    "status": "completed",
                    "content": [{"type": "input_audio", "transcript": None}],
                },
            }
        )
        if td.get("create_response", True) and (self._answer is None or self._answer.done):
            answer = _Answer("resp_" + uuid.uuid4().hex[:12], self._new_item(), time.monotonic())
            self._answer = answer
            self.answers.append(answer)
            task = asyncio.get_running_loop().create_task(self._stream_answer(answer))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _stream_answer(self, answer: _Answer) -> None:
        pcm, text = await asyncio.get_running_loop().run_in_executor(
            None, synthesize_reply, self.reply_ssml
        )
        samples = len(pcm) // 2
        answer.duration_s = samples / WIRE_RATE
        self._deaf_until = time.monotonic() + answer.duration_s
        audio_delta = "response.audio.delta" if self.beta_names else "response.output_audio.delta"
        tr = "response.audio_transcript" if self.beta_names else "response.output_audio_transcript"
        audio_done = "response.audio.done" if self.beta_names else "response.output_audio.done"
        ids = {"response_id": answer.response_id, "item_id": answer.item_id}
        where = {**ids, "output_index": 0, "content_index": 0}
        item = {
            "id": answer.item_id,
            "object": "realtime.item",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        response = {
            "id": answer.response_id,
            "object": "realtime.response",
            "status": "in_progress",
        }
        await self._send({"type": "response.created", "response": {**response, "output": []}})
        await self._send(
            {"type": "response.output_item.added", **ids, "output_index": 0, "item": item}
        )
        await self._send(
            {"type": "conversation.item.created", "previous_item_id": None, "item": item}
        )
        await self._send(
            {
                "type": "response.content_part.added",
                **where,
                "part": {"type": "audio", "transcript": ""},
            }
        )
        words = text.split()
        chunk = WIRE_RATE * self.chunk_ms // 1000
        n_chunks = max(1, -(-samples // chunk))
        said = 0
        self._items[answer.item_id] = 0
        for i in range(n_chunks):
            if answer.cancelled or self._ws is None:
                return
            piece = pcm[i * chunk * 2 : (i + 1) * chunk * 2]
            await self._send(
                {"type": audio_delta, **where, "delta": base64.b64encode(piece).decode("ascii")}
            )
            answer.samples_sent += len(piece) // 2
            self._items[answer.item_id] = answer.samples_sent
            upto = round(len(words) * (i + 1) / n_chunks)
            if upto > said:
                await self._send(
                    {"type": f"{tr}.delta", **where, "delta": " ".join(words[said:upto]) + " "}
                )
                said = upto
            if (
                self.drop_after_s is not None
                and answer.samples_sent / WIRE_RATE >= self.drop_after_s
            ):
                self._ws.transport.abort()
                return
            await asyncio.sleep(self.chunk_ms / 1000 / self.speed)
        if answer.cancelled:
            return
        await self._send({"type": audio_done, **where})
        await self._send({"type": f"{tr}.done", **where, "transcript": text})
        part = {"type": "audio", "transcript": text}
        await self._send({"type": "response.content_part.done", **where, "part": part})
        done_item = {**item, "status": "completed", "content": [part]}
        await self._send(
            {"type": "response.output_item.done", **ids, "output_index": 0, "item": done_item}
        )
        answer.done = True
        await self._send(
            {
                "type": "response.done",
                "response": {**response, "status": "completed", "output": [done_item]},
            }
        )

    async def _cancel(self, reason: str) -> None:
        answer = self._answer
        if answer is None or answer.done or answer.cancelled:
            return
        answer.cancelled = True
        answer.done = True
        self._deaf_until = 0.0
        ids = {"response_id": answer.response_id, "item_id": answer.item_id}
        item = {
            "id": answer.item_id,
            "type": "message",
            "role": "assistant",
            "status": "incomplete",
        }
        await self._send(
            {"type": "response.output_item.done", **ids, "output_index": 0, "item": item}
        )
        await self._send(
            {
                "type": "response.done",
                "response": {
                    "id": answer.response_id,
                    "object": "realtime.response",
                    "status": "cancelled",
                    "status_details": {"type": "cancelled", "reason": reason},
                    "output": [item],
                },
            }
        )

    async def _on_truncate(self, event: dict[str, Any]) -> None:
        item_id = event.get("item_id")
        end_ms = event.get("audio_end_ms")
        if item_id not in self._items:
            await self._error("invalid_request_error", "item_not_found", f"no item {item_id!r}")
            return
        sent_ms = self._items[item_id] * 1000 / WIRE_RATE
        if not isinstance(end_ms, int) or end_ms < 0 or end_ms > sent_ms:
            await self._error(
                "invalid_request_error",
                "invalid_value",
                f"audio_end_ms {end_ms} is past the item's {sent_ms:.0f} ms of audio",
            )
            return
        await self._send(
            {
                "type": "conversation.item.truncated",
                "item_id": item_id,
                "content_index": event.get("content_index", 0),
                "audio_end_ms": end_ms,
            }
        )

    async def _error(self, kind: str, code: str, message: str) -> None:
        await self._send(
            {"type": "error", "error": {"type": kind, "code": code, "message": message}}
        )

    def _echoed_auth(self) -> str:
        """What a misbehaving server says: the Authorization headers it got, raw and
        percent-encoded."""
        auth = "; ".join(self._ws.request.headers.get_all("Authorization"))
        return f"not authorized: got {auth} (sent as {quote(auth, safe='')})"

    async def _send(self, event: dict[str, Any]) -> None:
        event = {"event_id": _event_id(), **event}
        with self._lock:
            self.sent.append(Received(event, time.monotonic()))
        with contextlib.suppress(Exception):
            await self._ws.send(json.dumps(event))

    async def _send_text(self, text: str) -> None:
        await self._ws.send(text)

    @staticmethod
    def _new_item() -> str:
        return "item_" + uuid.uuid4().hex[:12]


def _merge(into: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
