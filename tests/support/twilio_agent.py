"""A tiny scripted Twilio Media Streams agent for tests: a real ``websockets`` server
on 127.0.0.1 (its own thread and loop) that records what the line sends and does
what the test's script says.

    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        await call.send({"event": "media", "streamSid": start["streamSid"], ...})
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url); line.open(); ...
        agent.calls[0].received   # every message, parsed, in order

``TwilioAgent(reject_status=403)`` refuses the WebSocket upgrade with that HTTP status.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

Script = Callable[["AgentCall"], Awaitable[None]]


@dataclass
class Received:
    message: dict[str, Any]
    mono: float


@dataclass
class AgentCall:
    """One connection to the agent, as the script sees it."""

    ws: ServerConnection
    received: list[Received] = field(default_factory=list)
    closed_by_line: bool = False
    _inbox: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)

    def events(self, name: str) -> list[dict[str, Any]]:
        return [r.message for r in self.received if r.message.get("event") == name]

    async def expect(self, name: str, timeout: float = 5.0) -> dict[str, Any]:
        """The next message of event ``name`` (others in between are skipped, still recorded)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            message = await asyncio.wait_for(self._inbox.get(), max(left, 0.001))
            if message.get("event") == name:
                return message

    async def send(self, message: dict[str, Any] | str | bytes) -> None:
        await self.ws.send(message if isinstance(message, str | bytes) else json.dumps(message))

    async def send_media(self, stream_sid: str, ulaw: bytes, chunk_bytes: int = 320) -> None:
        for i in range(0, len(ulaw), chunk_bytes):
            payload = base64.b64encode(ulaw[i : i + chunk_bytes]).decode("ascii")
            await self.send(
                {"event": "media", "streamSid": stream_sid, "media": {"payload": payload}}
            )

    async def wait_closed(self, timeout: float = 10.0) -> None:
        await asyncio.wait_for(self.ws.wait_closed(), timeout)


async def _hold_until_closed(call: AgentCall) -> None:
    await call.wait_closed(timeout=60.0)


class TwilioAgent:
    def __init__(self, script: Script | None = None, *, reject_status: int | None = None) -> None:
        self.script = script or _hold_until_closed
        self.reject_status = reject_status
        self.calls: list[AgentCall] = []
        self.errors: list[BaseException] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/media"

    def __enter__(self) -> TwilioAgent:
        self._thread = threading.Thread(target=self._run, name="twilio-agent", daemon=True)
        self._thread.start()
        if not self._ready.wait(5.0):
            raise RuntimeError("the test agent did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(5.0)
        if self.errors and exc[0] is None:
            raise AssertionError(f"the test agent's script failed: {self.errors[0]!r}")

    def _run(self) -> None:
        asyncio.run(self._serve())

    def _process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        if self.reject_status is None:
            return None
        body = b"go away\n"
        headers = Headers([("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return Response(self.reject_status, "Rejected", headers, body)

    def parse(self, raw: str | bytes) -> dict[str, Any]:
        """A message the line sent, as recorded (Twilio's are JSON objects)."""
        message: dict[str, Any] = json.loads(raw)
        return message

    async def _handler(self, ws: ServerConnection) -> None:
        call = AgentCall(ws)
        self.calls.append(call)

        async def reader() -> None:
            async for raw in ws:
                message = self.parse(raw)
                call.received.append(Received(message, time.monotonic()))
                await call._inbox.put(message)

        reading = asyncio.ensure_future(reader())
        try:
            await self.script(call)
        except Exception as exc:
            self.errors.append(exc)
        finally:
            try:
                await asyncio.wait_for(reading, 2.0)
            except (TimeoutError, Exception):
                reading.cancel()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with serve(
            self._handler, "127.0.0.1", 0, process_request=self._process_request
        ) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop.wait()
