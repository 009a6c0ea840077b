"""A WebRTC line: cutin as a WebRTC peer of an agent (Pipecat's SmallWebRTC and compatible).

``--agent webrtc:http://HOST:PORT/PATH`` (or ``https://``): cutin makes an aiortc peer
connection with one ``sendrecv`` audio transceiver (Opus, 48 kHz) and a data channel,
POSTs the offer to the URL as Pipecat's SmallWebRTC request handler takes it (the shape
is in :mod:`sessions.lines.webrtc_signal`), applies the answer and waits until ICE and
DTLS have connected. Then

- the caller's audio (16 kHz, from :meth:`WebRTCLine.send`) is resampled to 48 kHz and
  goes out on the audio track in 20 ms frames, as the call loop sends it (silence
  included: a WebRTC track never stops);
- the agent's track is decoded (aiortc's Opus decoder), downmixed, resampled to 16 kHz
  and pushed into the :class:`~sessions.lines.base.PlayoutBuffer`, so its audio goes
  through the same ears, yield watch and measures as on every other line. WebRTC has
  no ``clear``: an agent that yields is heard as its audio ending;
- the data channel's messages (Pipecat's RTVI events, such as ``bot-started-speaking``
  and ``bot-stopped-speaking``) are logged as ``AGENT_EVENT`` notices: a second opinion
  beside the audio, never instead of it.

ICE uses host candidates only unless ``CUTIN_WEBRTC_ICE_SERVERS`` names STUN/TURN
servers (a remote agent). Every failure is one line: nothing listening, HTTP refusals,
an answer that is not SDP, ICE or DTLS failing, no connection within the timeout; after
the line is open, the agent closing the connection (or its ``peerLeft`` message) ends it
CLOSED, a failure FAILED. What the agent sends is bounded as on the WebSocket lines: a
data-channel message over :data:`MAX_CHANNEL_MESSAGE` is dropped (ERROR), over
:data:`MAX_CHANNEL_RATE` bytes a second they are dropped unread, audio beyond the
playout buffer is dropped and counted; every notice is cleaned and capped by the
line's :class:`~sessions.lines.notices.NoticeBoard`.

aiortc runs on an asyncio loop in a thread of the line's own (``cutin-webrtc``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import json
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from sessions.hostile.redact import Redactor, public_url
from sessions.lines.base import (
    LINE_RATE,
    Audio,
    ByteRate,
    LineError,
    LineNotice,
    LineState,
    NoticeKind,
    PlayoutBuffer,
)
from sessions.lines.codec import StreamResampler
from sessions.lines.notices import NoticeBoard, size_text
from sessions.lines.webrtc_signal import IceServer, ice_servers, post_offer

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["AUDIO_FORMAT", "WIRE_RATE", "WebRTCLine", "make_line"]

WIRE_RATE = 48_000
AUDIO_FORMAT = "audio/opus;rate=48000"
FRAME_SAMPLES = WIRE_RATE // 50
"""One 20 ms Opus frame at 48 kHz."""
MAX_CHANNEL_MESSAGE = 64 << 10
"""A data-channel message over this (the SDP's usual ``max-message-size``) is dropped."""
MAX_CHANNEL_RATE = 1 << 20
"""Data-channel bytes a second; past it, messages are dropped unread (an RTVI stream of
transcripts and speaking events is a few KiB a second)."""
MAX_CALLER_S = 2.0
"""Caller audio waiting for the track (the network stalled): older audio is dropped."""
BACKLOG_MARGIN_S = 0.04
"""Agent audio queued beyond the playout depth plus this came faster than real time (a
sender catching its clock up in a burst: Pipecat's SmallWebRTC track does after its
event loop was held up); its silent frames are skipped until the queue is back within
it, as a browser's jitter buffer (NetEq) shortens silence to return to its target delay,
so a burst never adds to every later latency. Speech is always played."""
SILENT = 1e-3
"""A frame whose peak is under this (−60 dBFS) is silence."""
SOUND = 0.01
"""A frame whose peak reaches this is the agent's sound (for ``sound_queued_s``)."""
RTVI_SPEAKING = frozenset({"bot-started-speaking", "bot-stopped-speaking"})
CLIENT_READY = {"label": "rtvi-ai", "type": "client-ready", "id": "cutin-ready",
                "data": {"version": "1.0.0", "about": {"library": "cutin"}}}  # fmt: skip
"""The RTVI ``client-ready`` message a Pipecat client sends once the channel opens (an
RTVI bot waits for it before its first events); a server without RTVI ignores it."""


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``webrtc:http://HOST:PORT/PATH``."""
    del options  # nothing beyond the URL and CUTIN_WEBRTC_ICE_SERVERS
    assert spec.url is not None
    return WebRTCLine(spec.url)


class WebRTCLine:
    """A :class:`~sessions.lines.base.Line` to a WebRTC agent (see the module doc).

    ``url`` is the agent's offer endpoint (``http://127.0.0.1:7860/api/offer``); ``ice``
    the STUN/TURN servers (default: :data:`~sessions.lines.webrtc_signal.ICE_SERVERS_ENV`).
    """

    name = "webrtc"
    audio_format = AUDIO_FORMAT

    def __init__(
        self,
        url: str,
        *,
        ice: list[IceServer] | None = None,
        playout_max_s: float = 120.0,
        max_channel_message: int = MAX_CHANNEL_MESSAGE,
        max_channel_rate: int = MAX_CHANNEL_RATE,
    ) -> None:
        self.url = url
        self.ice = ice_servers() if ice is None else ice
        self.target = public_url(url)
        secrets = [s.credential for s in self.ice] + [s.username for s in self.ice]
        self._board = NoticeBoard(Redactor(secrets=secrets, urls=[url], shown=[self.target]))
        self.playout = PlayoutBuffer(max_seconds=playout_max_s)
        self.max_channel_message = max_channel_message
        self._channel_rate = ByteRate(max_channel_rate)
        self._lock = threading.Lock()
        self._state = LineState.CONNECTING
        self._used = False
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pc: Any = None
        self._channel: Any = None
        self._caller: _CallerAudio | None = None
        self._to_wire = StreamResampler(LINE_RATE, WIRE_RATE)
        self._from_wire: dict[int, StreamResampler] = {}
        self._send_lock = threading.Lock()
        self._tasks: list[asyncio.Task[Any]] = []
        self.messages_dropped = 0
        self.bytes_dropped = 0
        self.frames_received = 0
        self.silence_skipped = 0
        self._sound_end = 0
        """Where (playout timeline) the agent's last sound that came ends."""
        """Samples (16 kHz) of the agent's silence skipped to keep up (see BACKLOG_MARGIN_S)."""
        self.rtvi: list[tuple[float, str]] = []
        """(monotonic, type) of the RTVI speaking events, the second opinion (bounded)."""

    # -- the Line protocol -------------------------------------------------------------

    @property
    def state(self) -> LineState:
        with self._lock:
            return self._state

    def open(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            if self._used or self._closing:
                raise LineError(f"{self.name}: the line to {self.target} was already used")
            self._used = True
        deadline = time.monotonic() + timeout_s
        try:
            import aiortc  # noqa: F401  -- the webrtc extra
        except ImportError:
            self._fail_open(
                f"{self.name}: the WebRTC line needs aiortc: pip install 'cutin[webrtc]'"
            )
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(
            target=self._run_loop, args=(loop,), name="cutin-webrtc", daemon=True
        )
        self._thread.start()
        try:
            try:
                offer = self._call(self._offer(), timeout_s)
            except TimeoutError:
                raise LineError(
                    f"{self.name}: gathering ICE candidates took over {timeout_s:g} s (does a"
                    " STUN/TURN server in CUTIN_WEBRTC_ICE_SERVERS not answer?)"
                ) from None
            left = max(0.1, deadline - time.monotonic())
            answer = post_offer(self.url, offer, left, self.name, self.target)
            left = max(0.1, deadline - time.monotonic())
            self._call(self._connect(answer, left), left + 1.0)
        except LineError as exc:
            self._fail_open(str(exc))
        except Exception as exc:  # every failure becomes one line
            self._fail_open(f"{self.name}: the line to {self.target} failed: {_why(exc)}")
        with self._lock:
            ready = self._state is LineState.CONNECTING and not self._closing
            if ready:
                self._state = LineState.OPEN
        if not ready:
            self._fail_open(f"{self.name}: the line to {self.target} ended while connecting")
        self._board.notify(
            NoticeKind.OPEN,
            f"connected to {self.target} (WebRTC, Opus 48 kHz)",
            {"target": self.target, "ice_servers": len(self.ice)},
        )
        self._board.notify(
            NoticeKind.FORMAT,
            "the agent's audio: Opus 48 kHz over WebRTC",
            {"encoding": "opus", "rate": WIRE_RATE, "channels": 1, "stated": True},
        )

    def send(self, samples: Audio) -> None:
        if self.state is not LineState.OPEN or self._caller is None or self._loop is None:
            return
        with self._send_lock:
            wire = self._to_wire.process(np.asarray(samples, dtype=np.float32))
            pcm = np.clip(np.round(wire * 32767.0), -32768, 32767).astype(np.int16)
            self._caller.push(pcm)

    def take(self, n: int) -> Audio:
        return self.playout.take(n)

    def notices(self) -> list[LineNotice]:
        return self._board.drain()

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            never_opened = self._state is LineState.CONNECTING
        self._shutdown()
        if never_opened:
            with self._lock:
                self._state = LineState.CLOSED
            return
        self._end(LineState.CLOSED, f"hung up on {self.target}", {"by": "cutin"})

    # -- the asyncio side --------------------------------------------------------------

    def _run_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            if not any(not t.done() for t in asyncio.all_tasks(loop)):
                with contextlib.suppress(Exception):
                    loop.close()

    def _call(self, coro: Any, timeout_s: float) -> Any:
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout=timeout_s)
        except TimeoutError:
            future.cancel()
            raise

    async def _offer(self) -> str:
        from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection

        servers = [RTCIceServer(list(s.urls), s.username, s.credential) for s in self.ice]
        # An explicit empty list: aiortc's default is a public STUN server.
        pc = RTCPeerConnection(RTCConfiguration(iceServers=servers))
        self._pc = pc
        self._caller = _CallerAudio(asyncio.get_running_loop())
        transceiver = pc.addTransceiver(self._caller.track(), direction="sendrecv")
        _no_prefetch(transceiver.receiver)
        channel = pc.createDataChannel("cutin", ordered=True)
        self._channel = channel
        channel.on("open", lambda: self._channel_open(channel))
        channel.on("message", self._channel_message)
        pc.on("track", self._track)
        pc.on("connectionstatechange", self._state_changed)
        offer = await pc.createOffer()
        await pc.setLocalDescription(offer)  # gathers every candidate: no trickle
        return str(pc.localDescription.sdp)

    async def _connect(self, sdp: str, timeout_s: float) -> None:
        from aiortc import RTCSessionDescription

        pc = self._pc
        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="answer"))
        except Exception as exc:
            raise LineError(
                f"{self.name}: the answer from {self.target} is not an SDP answer cutin can"
                f" use ({_why(exc)})"
            ) from None
        deadline = time.monotonic() + timeout_s
        while pc.connectionState != "connected":
            if pc.connectionState in ("failed", "closed"):
                raise LineError(self._connect_failure())
            if time.monotonic() >= deadline:
                ice = pc.iceConnectionState
                stage = "ICE did not connect" if ice != "completed" else "DTLS did not finish"
                raise LineError(
                    f"{self.name}: {stage} with {self.target} within {timeout_s:.3g} s"
                    f" (ICE {ice}; is the agent reachable from here, or does it need"
                    f" STUN/TURN in CUTIN_WEBRTC_ICE_SERVERS?)"
                )
            await asyncio.sleep(0.02)

    def _connect_failure(self) -> str:
        pc = self._pc
        if pc.iceConnectionState == "failed":
            return (
                f"{self.name}: ICE failed with {self.target}: no candidate pair connected"
                " (is the agent reachable from here, or does it need STUN/TURN in"
                " CUTIN_WEBRTC_ICE_SERVERS?)"
            )
        return (
            f"{self.name}: DTLS failed with {self.target} after ICE connected (the answer's"
            " certificate fingerprint or the handshake did not check out)"
        )

    async def _state_changed(self) -> None:
        state = self._pc.connectionState
        if self.state is not LineState.OPEN or self._closing:
            return
        if state == "closed":
            self._end(
                LineState.CLOSED, f"the agent closed the WebRTC connection ({self.target})",
                {"by": "agent"},
            )  # fmt: skip
        elif state == "failed":
            why = self._connect_failure().removeprefix(f"{self.name}: ")
            detail = f"the WebRTC connection to {self.target} failed: {why}"
            self._end(LineState.FAILED, detail, {"by": "agent"})

    def _track(self, track: Any) -> None:
        if track.kind != "audio":
            self._board.once(
                f"track:{track.kind}", NoticeKind.NOTE,
                f"the agent sent a {track.kind} track; cutin ignores it",
                {"kind": "ignored_track", "track": str(track.kind)},
            )  # fmt: skip
            return
        task = asyncio.get_running_loop().create_task(self._receive(track))
        self._tasks.append(task)

    async def _receive(self, track: Any) -> None:
        from aiortc.mediastreams import MediaStreamError

        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return  # the track ended: the connection's state says how
            except Exception as exc:
                self._board.error("decode", f"the agent's audio could not be decoded: {_why(exc)}")
                continue
            try:
                self._play(frame)
            except Exception as exc:  # one bad frame never ends the line
                self._board.error("audio", f"an audio frame cutin could not play: {_why(exc)}")

    def _play(self, frame: Any) -> None:
        rate = int(frame.sample_rate or 0)
        if not 8000 <= rate <= 192000:
            self._board.error("rate", f"an audio frame at {rate} Hz is dropped")
            return
        pcm = frame.to_ndarray()
        channels = max(1, len(frame.layout.channels))
        if pcm.dtype.kind in "iu":
            audio = pcm.astype(np.float32) / 32768.0
        else:
            audio = pcm.astype(np.float32)
        if pcm.ndim == 2 and pcm.shape[0] == channels and channels > 1:  # planar
            mono = audio.mean(axis=0)
        else:  # packed (interleaved) or mono
            flat = audio.reshape(-1)
            mono = flat[: flat.size - flat.size % channels].reshape(-1, channels).mean(axis=1)
        mono = np.nan_to_num(np.clip(mono, -1.0, 1.0))
        resampler = self._from_wire.get(rate)
        if resampler is None:
            if len(self._from_wire) >= 4:
                self._from_wire.clear()
            resampler = self._from_wire[rate] = StreamResampler(rate, LINE_RATE)
        self.frames_received += 1
        audio16 = resampler.process(mono)
        peak = float(np.abs(audio16).max(initial=0.0))
        backlog = self.playout.depth_s + BACKLOG_MARGIN_S
        if self.playout.buffered_s > backlog and peak < SILENT:
            # A burst ahead of real time (a sender catching up its clock): its silence
            # is dropped, as a WebRTC receiver's jitter buffer does, not queued as delay.
            self.silence_skipped += audio16.size
            self._board.once(
                "silence_skipped",
                NoticeKind.NOTE,
                f"the agent's audio came over {backlog * 1000:.0f} ms ahead of where it plays;"
                " its silence is skipped until it is back in step (the total is in the"
                " line's summary)",
                {"kind": "silence_skipped", "max_backlog_s": round(backlog, 3)},
            )
            return
        self.playout.push(audio16)
        if peak >= SOUND:
            self._sound_end = int(getattr(self.playout, "_end", 0))
        if self.playout.dropped:
            dropped = self.playout.dropped / LINE_RATE
            self._board.once(
                "playout_full",
                NoticeKind.NOTE,
                f"the agent sent audio beyond the {self.playout.max_s:g} s playout buffer:"
                f" {dropped:.2f} s dropped; further drops are counted in the line's summary",
                {"kind": "playout_full", "dropped_s": round(dropped, 3)},
            )

    def _channel_open(self, channel: Any) -> None:
        with contextlib.suppress(Exception):
            channel.send(json.dumps(CLIENT_READY))

    def _channel_message(self, message: str | bytes) -> None:
        raw = message if isinstance(message, bytes) else message.encode("utf-8", "replace")
        size = len(raw)
        if size > self.max_channel_message:
            self.messages_dropped += 1
            self.bytes_dropped += size
            self._board.error(
                "too_big",
                f"a data-channel message of {size_text(size)} (over"
                f" {size_text(self.max_channel_message)}) is dropped",
                {"size": size, "limit_bytes": self.max_channel_message},
            )
            return
        if not self._channel_rate.admit(size, time.monotonic()):
            self.messages_dropped += 1
            self.bytes_dropped += size
            self._board.error(
                "rate",
                f"the agent sent over {size_text(self._channel_rate.per_s)} a second on the"
                " data channel; its messages are dropped unread",
                {"limit_bytes_per_s": self._channel_rate.per_s},
            )
            return
        if isinstance(message, bytes):
            self._board.capped("binary", NoticeKind.AGENT_EVENT,
                               f"a binary data-channel message of {size} bytes",
                               {"kind": "binary", "size": size})  # fmt: skip
            return
        if message.startswith("ping"):
            return  # Pipecat's keep-alive
        try:
            event = json.loads(message)
        except (ValueError, RecursionError):
            shown = f"{message[:60]!r}"
            self._board.error("not_json", f"a data-channel message that is not JSON: {shown}")
            return
        if not isinstance(event, dict):
            shown = f"{message[:60]!r}"
            self._board.error("not_object", f"a data-channel message, not an object: {shown}")
            return
        self._event(event)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        kind = kind if isinstance(kind, str) else "?"
        inner = event.get("message")
        if kind == "signalling" and isinstance(inner, dict) and inner.get("type") == "peerLeft":
            if self.state is LineState.OPEN and not self._closing:
                self._end(LineState.CLOSED, f"the agent left the call ({self.target})",
                          {"by": "agent", "said": "peerLeft"})  # fmt: skip
            return
        data: dict[str, Any] = {"kind": f"rtvi:{kind}" if event.get("label") == "rtvi-ai" else kind}
        if kind in RTVI_SPEAKING:
            if len(self.rtvi) < 10_000:
                self.rtvi.append((time.monotonic(), kind))
            data["second_opinion"] = True
            # The agent's audio that had come but not played yet, and how long its sound
            # in it lasts: what it said before this is still heard for that long (the
            # audio path's lag behind its own account).
            data["queued_s"] = round(self.playout.buffered_s, 3)
            unheard = max(0, self._sound_end - self.playout.taken) / LINE_RATE
            data["sound_queued_s"] = round(unheard, 3)
            # Where, on the call's clock, that sound ends (the playout's sample i plays at
            # i / 16000 s): the event's own time is only known to the loop's frame.
            data["sound_until_t"] = round(self._sound_end / LINE_RATE, 4)
            self._board.notify(NoticeKind.AGENT_EVENT, f"the agent says: {kind}", data)
            return
        payload = event.get("data")
        if isinstance(payload, dict) and isinstance(payload.get("text"), str):
            data["text"] = payload["text"]
        said = f"the agent sent {kind!r} on the data channel"
        self._board.capped(f"event:{kind}", NoticeKind.AGENT_EVENT, said, data, per_key=20)

    # -- ending ------------------------------------------------------------------------

    def _end(self, state: LineState, detail: str, data: dict[str, Any]) -> None:
        with self._lock:
            if self._state in (LineState.CLOSED, LineState.FAILED):
                return
            self._state = state
            kind = NoticeKind.CLOSED if state is LineState.CLOSED else NoticeKind.FAILED
            self._summarize()
            self._board.notify(kind, detail, data)

    def _summarize(self) -> None:
        audio_s = round(self.playout.dropped / LINE_RATE, 3)
        skipped = round(self.silence_skipped / LINE_RATE, 3)
        self._board.summarize([
            ("messages_dropped", self.messages_dropped,
             f"{self.messages_dropped} data-channel messages dropped"),
            ("bytes_dropped", self.bytes_dropped if self.messages_dropped else 0, ""),
            ("audio_dropped_s", audio_s, f"{audio_s:.2f} s of agent audio dropped"),
            ("silence_skipped_s", skipped, f"{skipped:.2f} s of agent silence skipped"),
        ])  # fmt: skip

    def _fail_open(self, message: str) -> Any:
        message = self._board.clean(message)
        with self._lock:
            self._closing = True
        self._shutdown()
        self._end(LineState.FAILED, message, {"stage": "open"})
        raise LineError(message) from None

    def _shutdown(self) -> None:
        """Close the peer connection and stop the loop (bounded: a few seconds at most)."""
        loop = self._loop
        if loop is None or not loop.is_running():
            return
        if self._caller is not None:
            loop.call_soon_threadsafe(self._caller.end)
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._close_pc(), loop).result(timeout=3.0)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)

    async def _close_pc(self) -> None:
        for task in self._tasks:
            task.cancel()
        if self._pc is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._pc.close(), 2.0)
        # Whatever aiortc and aioice still run (a TURN allocation that never answered,
        # a consent check) ends here, not when the stopped loop's coroutines are collected.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        if others:
            await asyncio.wait(others, timeout=1.0)


class _CallerAudio:
    """The caller's audio waiting for the track (48 kHz int16), pushed from any thread;
    the track hands it out in 20 ms frames as it comes (at the call loop's pace)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._chunks: deque[np.ndarray] = deque()
        self._held = 0
        self._ready = asyncio.Event()
        self._ended = False
        self.dropped = 0
        self.sent = 0

    def push(self, pcm: np.ndarray) -> None:
        if pcm.size == 0:
            return
        with self._lock:
            self._chunks.append(pcm)
            self._held += pcm.size
            while self._held > MAX_CALLER_S * WIRE_RATE and len(self._chunks) > 1:
                old = self._chunks.popleft()
                self._held -= old.size
                self.dropped += old.size
            enough = self._held >= FRAME_SAMPLES
        if enough:
            with contextlib.suppress(RuntimeError):  # the loop has stopped
                self._loop.call_soon_threadsafe(self._ready.set)

    def end(self) -> None:
        self._ended = True
        self._ready.set()

    def frame(self) -> np.ndarray | None:
        """The next 20 ms, if it has come."""
        with self._lock:
            if self._held < FRAME_SAMPLES:
                self._ready.clear()
                return None
            out = np.empty(FRAME_SAMPLES, dtype=np.int16)
            filled = 0
            while filled < FRAME_SAMPLES:
                head = self._chunks[0]
                n = min(head.size, FRAME_SAMPLES - filled)
                out[filled : filled + n] = head[:n]
                filled += n
                if n == head.size:
                    self._chunks.popleft()
                else:
                    self._chunks[0] = head[n:]
            self._held -= FRAME_SAMPLES
            return out

    async def next_frame(self) -> np.ndarray | None:
        while not self._ended:
            pcm = self.frame()
            if pcm is not None:
                return pcm
            await self._ready.wait()
        return None

    def track(self) -> Any:
        from aiortc import MediaStreamTrack
        from aiortc.mediastreams import MediaStreamError
        from av import AudioFrame

        audio = self
        time_base = fractions.Fraction(1, WIRE_RATE)

        class CallerTrack(MediaStreamTrack):
            kind = "audio"

            async def recv(self) -> AudioFrame:
                pcm = await audio.next_frame()
                if pcm is None:
                    raise MediaStreamError
                frame = AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
                frame.sample_rate = WIRE_RATE
                frame.pts = audio.sent
                frame.time_base = time_base
                audio.sent += pcm.size
                return frame

        return CallerTrack()


def _no_prefetch(receiver: Any) -> None:
    """Play the agent's packets as they come: aiortc's audio receiver holds 4 packets
    (80 ms) before it decodes any, a second jitter buffer in front of the line's
    :class:`~sessions.lines.base.PlayoutBuffer`, whose depth is the one cutin states and
    measures with. aiortc has no setting for it; Pipecat replaces the video receiver's
    buffer the same way."""
    from aiortc.jitterbuffer import JitterBuffer

    attribute = "_RTCRtpReceiver__jitter_buffer"
    if isinstance(getattr(receiver, attribute, None), JitterBuffer):
        setattr(receiver, attribute, JitterBuffer(capacity=16, prefetch=0))


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:200] if str(exc) else type(exc).__name__
