"""The example bot over WebRTC: ``pipecat_bot.py --transport webrtc`` (``./dev bot
--transport webrtc``), Pipecat's SmallWebRTC transport as its development runner serves it.

An HTTP server on ``--host``/``--port`` takes offers at ``POST /api/offer`` (Pipecat's
``SmallWebRTCRequest``: ``{"sdp", "type", "pc_id", "restart_pc", "request_data"}``) and
answers them (``{"sdp", "type": "answer", "pc_id"}``) through Pipecat's own
``SmallWebRTCRequestHandler``; each call gets a pipeline of its own (the same VAD, STT,
replier and espeak-ng TTS as the WebSocket bot) with RTVI on, so the caller's data
channel hears ``bot-started-speaking`` / ``bot-stopped-speaking``. No STUN or TURN: host
candidates only. It prints ``cutin-bot: listening http://HOST:PORT/api/offer`` once it
takes calls, then the same ``cutin-bot:`` lines as the WebSocket bot (``call started
PC_ID (webrtc, opus 48 kHz)``, ``caller hung up``...)::

    ./dev bot --transport webrtc --port 7860
    cutin call --agent webrtc:http://127.0.0.1:7860/api/offer
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

OFFER_PATH = "/api/offer"


LATE_S = 0.06
"""How far behind its clock the bot's audio track may fall before it drops the debt."""
OUT_CHUNKS = 4
"""The bot's audio writes, in 10 ms frames (Pipecat's default)."""


def pace_in_real_time() -> None:
    """Pipecat's SmallWebRTC output track (``RawAudioTrack``) paces its 10 ms frames from
    the moment it was made and, when its event loop was held up (the pipeline's start
    loading Silero and whisper, a transcription on a busy machine), sends every frame it
    owes at once to catch up: the caller then hears the bot seconds late, in a burst, and
    behind its own account of what it said. Here the track's clock restarts whenever it
    has fallen over :data:`LATE_S` behind, as a real-time sender (a browser's microphone)
    does: a held-up bot leaves a gap, never a backlog."""
    from pipecat.transports.smallwebrtc.transport import RawAudioTrack

    if getattr(RawAudioTrack, "_cutin_paced", False):
        return
    recv = RawAudioTrack.recv

    async def paced_recv(self: Any) -> Any:
        now = time.time()
        due = self._start + self._timestamp / self._sample_rate
        if self._timestamp == 0 or now - due > LATE_S:
            self._start = now - self._timestamp / self._sample_rate
        return await recv(self)

    RawAudioTrack.recv = paced_recv
    RawAudioTrack._cutin_paced = True


def webrtc_transport(connection: Any) -> Any:
    """One call's SmallWebRTC transport, audio both ways (16 kHz in the pipeline; Opus
    48 kHz on the wire)."""
    from pipecat.transports.base_transport import TransportParams
    from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

    pace_in_real_time()
    # Pipecat's default 40 ms writes, stated: the frame being written when the bot is
    # interrupted still goes out (so 40 ms of its audio follows its own stop).
    params = TransportParams(
        audio_in_enabled=True, audio_out_enabled=True, audio_out_10ms_chunks=OUT_CHUNKS
    )
    return SmallWebRTCTransport(webrtc_connection=connection, params=params)


async def serve(
    args: argparse.Namespace,
    build: Callable[[argparse.Namespace, Any], tuple[Any, Any]],
    say: Callable[[str], None],
    ready_prefix: str,
) -> None:
    """Answer offers until SIGINT/SIGTERM; ``build(args, connection)`` makes a call's
    transport and worker (pipecat_bot.build)."""
    from aiohttp import web
    from pipecat.transports.smallwebrtc.request_handler import (
        SmallWebRTCRequest,
        SmallWebRTCRequestHandler,
    )
    from pipecat.workers.runner import WorkerRunner

    runner = WorkerRunner(handle_sigint=True, handle_sigterm=True)
    handler = SmallWebRTCRequestHandler()  # no ICE servers: host candidates only

    async def start_call(connection: Any) -> None:
        # Built before the answer goes back: loading Silero and whisper blocks the event
        # loop for a while, which must not happen once the call's audio flows.
        transport, worker = build(args, connection)

        @transport.event_handler("on_client_disconnected")
        async def on_hangup(_transport: Any, _connection: Any) -> None:
            say("caller hung up")
            await worker.cancel()

        await runner.add_workers(worker)

    async def offer(request: web.Request) -> web.Response:
        try:
            body = await request.json()
            if not isinstance(body, dict) or not isinstance(body.get("sdp"), str):
                raise ValueError("no sdp")
            known = ("sdp", "type", "pc_id", "restart_pc", "request_data", "requestData")
            offer = SmallWebRTCRequest.from_dict({k: v for k, v in body.items() if k in known})
            answer = await handler.handle_web_request(offer, start_call)
        except Exception as exc:
            say(f"bad offer: {type(exc).__name__}")
            return web.json_response({"error": "not a SmallWebRTC offer"}, status=400)
        return web.json_response(answer)

    app = web.Application(client_max_size=1 << 20)
    app.router.add_post(OFFER_PATH, offer)
    site_runner = web.AppRunner(app)
    await site_runner.setup()
    await web.TCPSite(site_runner, args.host, args.port).start()
    print(f"{ready_prefix}http://{args.host}:{args.port}{OFFER_PATH}", flush=True)
    try:
        await runner.run(auto_end=False)
    finally:
        await handler.close()
        await site_runner.cleanup()
