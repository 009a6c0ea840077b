"""A WebRTC agent whose behaviour is known by construction (aiortc, in-process, loopback).

    with running_peer(stop_ms=200) as peer:        # stops 200 ms after it hears the caller
        line = WebRTCLine(peer.url)                # http://127.0.0.1:PORT/api/offer
        ...
        peer.truth                                 # what it heard and did, on the caller's clock

It answers ``POST /api/offer`` in Pipecat's SmallWebRTC shape (anything else: HTTP 404)
and then plays an agent paced by the caller: for every 20 ms frame of caller audio it
receives, it sends one 20 ms frame of its own (speech or digital silence), so its n-th
sample sent answers the caller's n-th sample heard: every time in :attr:`Peer.truth` is a
sample count of the caller's stream at 48 kHz (seconds = count / 48000), which is call
time, since cutin's line sends the call's audio from its first frame on, and the agent's
n-th sample plays at n / 48000 plus a delay (the round trip and the playout depth)
that the test finds by matching the audio it sent against the recording.

What it says: ``greeting`` (speech at 16 kHz) from its first frame, then, once the caller
has spoken and fallen silent for ``answer_after_ms``, ``reply``. A caller's onset (a
sample over :data:`LOUD`) while it speaks makes it stop ``stop_ms`` later (``None``:
never), to the sample, and say nothing more until the caller's next turn has ended.

Modes for the bad-endpoint tests: ``answer="garbage"`` (a 200 whose body is no SDP),
``answer="unreachable"`` (a real SDP answer whose candidates lead nowhere: ICE fails),
``answer="bad-fingerprint"`` (its certificate's fingerprint is wrong: DTLS fails).
"""

from __future__ import annotations

import asyncio
import fractions
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RATE = 48_000
FRAME = RATE // 50
LOUD = 0.02 * 32768
"""A caller sample louder than this is sound (its silence is digital zero, decoded)."""


@dataclass
class Peer:
    url: str
    truth: list[dict[str, Any]] = field(default_factory=list)
    channel_messages: list[str] = field(default_factory=list)
    to_send: list[str | bytes] = field(default_factory=list)
    """Data-channel messages to send once it opens (hostile tests)."""
    hang_up: Any = None
    """Closes every peer connection it answered (the agent hanging up)."""

    def of(self, event: str) -> list[dict[str, Any]]:
        return [r for r in list(self.truth) if r["event"] == event]


class _Agent:
    """One call's agent (see the module doc), on the caller's sample clock."""

    def __init__(self, peer: Peer, greeting: np.ndarray, reply: np.ndarray,
                 stop_ms: float | None, answer_after_ms: float) -> None:  # fmt: skip
        self.peer = peer
        self.greeting, self.reply = greeting, reply
        self.stop = None if stop_ms is None else round(stop_ms * RATE / 1000)
        self.answer_after = round(answer_after_ms * RATE / 1000)
        self.heard = 0
        """Caller samples received (the clock)."""
        self.speech: np.ndarray | None = greeting
        self.pos = 0
        self.why = "greeting"
        self.stop_at: int | None = None
        self.last_loud: int | None = None
        self.caller_turn = False
        self.out: asyncio.Queue[np.ndarray] = asyncio.Queue()

    def note(self, event: str, **data: Any) -> None:
        self.peer.truth.append({"event": event, **data})

    def hear(self, pcm: np.ndarray) -> None:
        """One received caller frame (mono int16 at 48 kHz): react, then answer it."""
        loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) > LOUD)
        start = self.heard
        self.heard += pcm.size
        if loud.size:
            first = start + int(loud[0])
            if not self.caller_turn:
                self.caller_turn = True
                self.note("onset", n=first, t=first / RATE, speaking=self.speech is not None)
                if self.speech is not None and self.stop is not None and self.stop_at is None:
                    self.stop_at = first + self.stop
            self.last_loud = start + int(loud[-1])
        elif (
            self.caller_turn
            and self.last_loud is not None
            and self.heard - self.last_loud >= self.answer_after
        ):
            self.caller_turn = False
            self.note("caller_end", n=self.last_loud, t=self.last_loud / RATE)
            if self.speech is None:
                self.speech, self.pos, self.why = self.reply, 0, "reply"
                self.note("speak", n=self.heard, t=self.heard / RATE, why="reply")
        self.out.put_nowait(self._frame(start, pcm.size))

    def _frame(self, start: int, n: int) -> np.ndarray:
        out = np.zeros(n, dtype=np.int16)
        if self.speech is None:
            return out
        take = n
        if self.stop_at is not None and self.stop_at < start + n:
            take = max(0, self.stop_at - start)
        chunk = self.speech[self.pos : self.pos + take]
        out[: chunk.size] = chunk
        self.pos += chunk.size
        if self.stop_at is not None and take < n:
            self.note("stop", n=self.stop_at, t=self.stop_at / RATE, why=self.why,
                      speech_pos=self.pos)  # fmt: skip
            self.speech, self.stop_at = None, None
        elif self.pos >= self.speech.size:
            self.note("done", n=start + chunk.size, t=(start + chunk.size) / RATE, why=self.why)
            self.speech = None
        return out


def _to_wire(audio16k: np.ndarray) -> np.ndarray:
    from sessions.lines.codec import StreamResampler

    wire = StreamResampler(16_000, RATE).process(audio16k)
    return np.clip(np.round(wire * 32767), -32768, 32767).astype(np.int16)


@contextmanager
def running_peer(
    *,
    stop_ms: float | None = None,
    greeting: np.ndarray | None = None,
    reply: np.ndarray | None = None,
    answer_after_ms: float = 700.0,
    answer: str = "sdp",
    path: str = "/api/offer",
) -> Iterator[Peer]:
    """An agent peer on a free port of 127.0.0.1 (see the module doc), in a thread."""
    from aiohttp import web
    from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription
    from aiortc.mediastreams import MediaStreamError
    from av import AudioFrame

    silent = np.zeros(16_000, dtype=np.float32)
    greet = _to_wire(silent if greeting is None else greeting)
    answer_audio = _to_wire(silent if reply is None else reply)
    loop = asyncio.new_event_loop()
    pcs: list[Any] = []
    listeners: list[Any] = []
    peer = Peer(url="")
    started = threading.Event()
    runner_box: list[Any] = []

    class AgentTrack(MediaStreamTrack):
        kind = "audio"

        def __init__(self, agent: _Agent) -> None:
            super().__init__()
            self.agent = agent
            self.sent = 0

        async def recv(self) -> AudioFrame:
            pcm = await self.agent.out.get()
            if pcm.size == 0:
                raise MediaStreamError
            frame = AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
            frame.sample_rate = RATE
            frame.pts = self.sent
            frame.time_base = fractions.Fraction(1, RATE)
            self.sent += pcm.size
            return frame

    async def listen(track: Any, agent: _Agent) -> None:
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                agent.out.put_nowait(np.zeros(0, dtype=np.int16))
                return
            pcm = frame.to_ndarray().reshape(-1)
            channels = len(frame.layout.channels)
            if channels > 1:
                pcm = pcm.reshape(-1, channels)[:, 0]
            agent.hear(pcm.astype(np.int16))

    async def offer(request: Any) -> Any:
        body = await request.json()
        if answer == "garbage":
            return web.json_response({"sdp": "this is no SDP", "type": "answer"})
        pc = RTCPeerConnection()
        pcs.append(pc)
        agent = _Agent(peer, greet, answer_audio, stop_ms, answer_after_ms)
        pc.addTrack(AgentTrack(agent))

        @pc.on("track")
        def on_track(track: Any) -> None:
            if track.kind == "audio":
                listeners.append(asyncio.ensure_future(listen(track, agent)))

        @pc.on("datachannel")
        def on_channel(channel: Any) -> None:
            def on_message(message: Any) -> None:
                peer.channel_messages.append(str(message)[:200])

            channel.on("message", on_message)

            for message in peer.to_send:
                channel.send(message)

        await pc.setRemoteDescription(RTCSessionDescription(body["sdp"], body["type"]))
        local = await pc.createAnswer()
        await pc.setLocalDescription(local)
        sdp = pc.localDescription.sdp
        if answer == "unreachable":  # candidates on a port nothing listens on
            await pc.close()
            lines = [ln for ln in sdp.splitlines() if not ln.startswith("a=candidate")]
            sdp = "\r\n".join(lines) + "\r\n"
            nowhere = "a=candidate:1 1 udp 2130706431 127.0.0.1 9 typ host\r\n"
            sdp = sdp.replace("a=end-of-candidates", nowhere + "a=end-of-candidates")
        if answer == "bad-fingerprint":  # ICE connects, DTLS cannot check the peer
            zeros = ":".join(["00"] * 32)
            sdp = re.sub(r"(a=fingerprint:sha-256 )[0-9A-F:]+", r"\g<1>" + zeros, sdp)
        peer.truth.append({"event": "call"})
        return web.json_response({"sdp": sdp, "type": "answer", "pc_id": f"peer-{len(pcs)}"})

    async def start() -> None:
        app = web.Application()
        app.router.add_post(path, offer)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runner_box.append(runner)
        port = runner.addresses[0][1]
        peer.url = f"http://127.0.0.1:{port}{path}"
        started.set()

    async def stop() -> None:
        for pc in pcs:
            await pc.close()
        for task in listeners:
            task.cancel()
        await asyncio.gather(*listeners, return_exceptions=True)
        for runner in runner_box:
            await runner.cleanup()

    async def close_calls() -> None:
        for pc in pcs:
            await pc.close()

    peer.hang_up = lambda: asyncio.run_coroutine_threadsafe(close_calls(), loop).result(10)
    thread = threading.Thread(target=loop.run_forever, name="webrtc-peer", daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    try:
        yield peer
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
