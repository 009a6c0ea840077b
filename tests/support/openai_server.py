"""A loopback OpenAI-compatible HTTP server for tests: the real ``openai`` client talks
to it over HTTP, and the test scripts what it answers and inspects what it received.

Start it directly or through the ``openai_server`` fixture (tests/support/fixtures.py)::

    server = OpenAIServer().start()          # 127.0.0.1, a free port
    client = openai.OpenAI(base_url=server.base_url, api_key="not-needed")
    server.enqueue(Reply("Hello there."), Error(429, retry_after=0.05), Reply("Second."))
    ...
    server.chat_bodies()                     # every chat request body, in arrival order
    server.close()

Endpoints

* ``POST /v1/chat/completions`` — plain JSON, or Server-Sent Events when the body has
  ``"stream": true`` (``data: {chunk}\\n\\n`` lines and a final ``data: [DONE]``; a usage
  chunk with empty ``choices`` is sent when ``stream_options.include_usage`` is true,
  as OpenAI does). Non-streamed replies always carry ``usage``.
* ``POST /v1/audio/speech`` — raw 16-bit little-endian mono PCM at 24 kHz (what OpenAI
  returns for ``response_format="pcm"``): a sine tone or silence, per :class:`Speech`.
* ``GET /v1/models`` — one model, ``test-model``.

Scripting. What a chat request gets is decided, in order, by:

1. ``server.responder`` if set: a callable ``(RecordedRequest) -> Response``, called on
   the handler thread (so it may block, e.g. on a barrier, to test parallel callers);
2. the next item of the chat queue (``enqueue``), consumed one per request;
3. ``server.default`` (``Reply("OK")`` unless changed).

A response is one of :class:`Reply` (text; streamed in ``chunks`` if given, else split
at spaces; ``usage`` tokens; ``chunk_delay_s`` between chunks), :class:`Error` (status,
optional ``Retry-After`` seconds, JSON error body), :class:`Hang` (wait ``seconds``
before answering with ``then``, or never answer when ``then`` is None), or
:class:`Malformed` (a stream whose ``bad_line`` is not JSON, or, with
``truncate=True``, a connection closed mid-stream with no end). ``/v1/audio/speech``
has its own queue (``enqueue_speech``) of :class:`Speech` or :class:`Error`, default
``server.default_speech``.

Every request (any path) is recorded as a :class:`RecordedRequest` in
``server.requests`` *before* it is answered, with the parsed JSON body, the headers and
the arrival time (``time.monotonic()``). ``close()`` wakes every hanging handler.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import struct
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SPEECH_SAMPLE_RATE = 24_000


@dataclass(frozen=True)
class Reply:
    """A successful completion."""

    text: str = "OK"
    chunks: list[str] | None = None
    """Streamed pieces (joined they should equal ``text``); default: split at spaces."""
    prompt_tokens: int = 11
    completion_tokens: int = 7
    chunk_delay_s: float = 0.0
    finish_reason: str = "stop"

    def stream_pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        words = self.text.split(" ")
        return [w if i == len(words) - 1 else w + " " for i, w in enumerate(words)]


@dataclass(frozen=True)
class Error:
    """An HTTP error response (429, 500, ...)."""

    status: int = 500
    message: str = "scripted error"
    retry_after: float | None = None
    """Seconds, sent as both ``Retry-After`` and ``retry-after-ms``."""


@dataclass(frozen=True)
class Hang:
    """Wait ``seconds`` (or until the server closes) before answering with ``then``."""

    seconds: float = 60.0
    then: Reply | Error | None = None


@dataclass(frozen=True)
class Malformed:
    """A broken stream: some good chunks, then a non-JSON line or a cut connection."""

    good_chunks: list[str] = field(default_factory=lambda: ["Hello "])
    bad_line: str = "data: {this is not json\n\n"
    truncate: bool = False
    """Close the connection after the good chunks instead of sending ``bad_line``."""


@dataclass(frozen=True)
class Speech:
    """PCM for ``/v1/audio/speech``: ``seconds`` of a sine at ``frequency_hz`` (None: silence)."""

    seconds: float = 0.5
    frequency_hz: float | None = 440.0
    amplitude: float = 0.3

    def pcm(self) -> bytes:
        n = round(self.seconds * SPEECH_SAMPLE_RATE)
        if self.frequency_hz is None:
            return b"\x00\x00" * n
        peak = int(self.amplitude * 32767)
        step = 2 * math.pi * self.frequency_hz / SPEECH_SAMPLE_RATE
        return struct.pack(f"<{n}h", *(int(peak * math.sin(step * i)) for i in range(n)))


Response = Reply | Error | Hang | Malformed
SpeechResponse = Speech | Error


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    body: Any
    """Parsed JSON body (``None`` when empty or not JSON)."""
    headers: dict[str, str]
    arrived_at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat ``messages`` of the body (empty for other requests)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return list(self.body["messages"])
        return []

    @property
    def text(self) -> str:
        """All message contents joined, for quick ``in`` checks."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-connection (a cancelled stream, a call ended) is
    normal for this server, not an error worth a traceback in the test output."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class OpenAIServer:
    """The server; see the module docstring for the scripting API."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._lock = threading.Lock()
        self._chat_queue: deque[Response] = deque()
        self._speech_queue: deque[SpeechResponse] = deque()
        self.requests: list[RecordedRequest] = []
        self.responder: Callable[[RecordedRequest], Response] | None = None
        self.default: Response = Reply("OK")
        self.default_speech: SpeechResponse = Speech()
        self.closing = threading.Event()
        self._connections: set[Any] = set()
        self._httpd = _QuietServer((host, port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # lifecycle -----------------------------------------------------------------
    def start(self) -> OpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="openai-test-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self.closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:  # end idle keep-alive connections so no handler thread lingers
            connections, self._connections = set(self._connections), set()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What to pass as the client's ``base_url`` (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # scripting -----------------------------------------------------------------
    def enqueue(self, *responses: Response) -> None:
        """Answer the next chat requests with these, in order."""
        with self._lock:
            self._chat_queue.extend(responses)

    def enqueue_speech(self, *responses: SpeechResponse) -> None:
        """Answer the next speech requests with these, in order."""
        with self._lock:
            self._speech_queue.extend(responses)

    def pending(self) -> int:
        """Chat responses still queued."""
        with self._lock:
            return len(self._chat_queue)

    # inspection ----------------------------------------------------------------
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if _route(r.path).endswith("/chat/completions")]

    def chat_bodies(self) -> list[Any]:
        """Bodies of every chat request, in arrival order."""
        return [r.body for r in self.chat_requests()]

    def speech_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if _route(r.path).endswith("/audio/speech")]

    # used by the handler -------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_chat(self, request: RecordedRequest) -> Response:
        if self.responder is not None:
            return self.responder(request)
        with self._lock:
            return self._chat_queue.popleft() if self._chat_queue else self.default

    def _next_speech(self) -> SpeechResponse:
        with self._lock:
            return self._speech_queue.popleft() if self._speech_queue else self.default_speech


def _route(path: str) -> str:
    """The request path without its query (an endpoint may carry ``?api_key=``)."""
    return path.partition("?")[0]


def _make_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def setup(self) -> None:
            super().setup()
            # Headers and body go out as separate writes; without this, Nagle plus the
            # client's delayed ACK add ~40 ms to every plain JSON reply.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with server._lock:
                server._connections.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def do_GET(self) -> None:
            self._record(None)
            if _route(self.path).rstrip("/").endswith("/models"):
                self._json(
                    200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]}
                )
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = self._record(body)
            try:
                if _route(self.path).endswith("/chat/completions"):
                    self._chat(request, server._next_chat(request))
                elif _route(self.path).endswith("/audio/speech"):
                    self._speech(server._next_speech())
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing to answer

        # responses ---------------------------------------------------------------
        def _record(self, body: Any) -> RecordedRequest:
            request = RecordedRequest(
                method=self.command,
                path=self.path,
                body=body,
                headers={k.lower(): v for k, v in self.headers.items()},
                arrived_at=time.monotonic(),
            )
            server._record(request)
            return request

        def _chat(self, request: RecordedRequest, response: Response) -> None:
            if isinstance(response, Hang):
                server.closing.wait(response.seconds)
                if response.then is None or server.closing.is_set():
                    self.close_connection = True
                    return
                response = response.then
            if isinstance(response, Error):
                self._error(response)
                return
            body = request.body if isinstance(request.body, dict) else {}
            model = str(body.get("model", "test-model"))
            if isinstance(response, Malformed):
                self._malformed(model, response)
            elif body.get("stream"):
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(model, response, include_usage)
            else:
                self._json(200, _completion(model, response))

        def _error(self, error: Error) -> None:
            headers = {}
            if error.retry_after is not None:
                headers["Retry-After"] = f"{error.retry_after:g}"
                headers["retry-after-ms"] = str(int(error.retry_after * 1000))
            payload = {"error": {"message": error.message, "type": "test", "code": error.status}}
            self._json(error.status, payload, headers)

        def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _start_sse(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

        def _send_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _event(self, payload: Any) -> None:
            self._send_chunk(f"data: {json.dumps(payload)}\n\n".encode())

        def _end_chunks(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _stream(self, model: str, reply: Reply, include_usage: bool) -> None:
            cid = _new_id()
            self._start_sse()
            self._event(_chunk(cid, model, {"role": "assistant", "content": ""}, None))
            for piece in reply.stream_pieces():
                if reply.chunk_delay_s and server.closing.wait(reply.chunk_delay_s):
                    self.close_connection = True
                    return
                self._event(_chunk(cid, model, {"content": piece}, None))
            self._event(_chunk(cid, model, {}, reply.finish_reason))
            if include_usage:
                usage_chunk = _chunk(cid, model, {}, None)
                usage_chunk["choices"] = []
                usage_chunk["usage"] = _usage(reply)
                self._event(usage_chunk)
            self._send_chunk(b"data: [DONE]\n\n")
            self._end_chunks()

        def _malformed(self, model: str, bad: Malformed) -> None:
            cid = _new_id()
            self._start_sse()
            for piece in bad.good_chunks:
                self._event(_chunk(cid, model, {"content": piece}, None))
            if bad.truncate:
                self.close_connection = True
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)  # cut mid-body: no terminating chunk
                return
            self._send_chunk(bad.bad_line.encode())
            self._send_chunk(b"data: [DONE]\n\n")
            self._end_chunks()

        def _speech(self, response: SpeechResponse) -> None:
            if isinstance(response, Error):
                self._error(response)
                return
            data = response.pcm()
            self.send_response(200)
            self.send_header("Content-Type", "audio/pcm")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _new_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:12]}"


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }


def _chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _completion(model: str, reply: Reply) -> dict[str, Any]:
    return {
        "id": _new_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": _usage(reply),
    }
