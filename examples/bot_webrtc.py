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


def pace_from_first_frame() -> None:
    """Pipecat's SmallWebRTC output track (``RawAudioTrack``) paces its frames from the
    moment it was made; the pipeline's start (loading Silero and whisper) holds its first
    frame back by seconds, and it then sends all of them at once to catch up, so the
    greeting reaches the caller seconds late, in a burst. Here its clock starts at its
    first frame, as a browser's own sender does."""
    from pipecat.transports.smallwebrtc.transport import RawAudioTrack

    if getattr(RawAudioTrack, "_cutin_paced", False):
        return
    recv = RawAudioTrack.recv

    async def paced_recv(self: Any) -> Any:
        if self._timestamp == 0:
            self._start = time.time()
        return await recv(self)

    RawAudioTrack.recv = paced_recv
    RawAudioTrack._cutin_paced = True


def webrtc_transport(connection: Any) -> Any:
    """One call's SmallWebRTC transport, audio both ways (16 kHz in the pipeline; Opus
    48 kHz on the wire)."""
    from pipecat.transports.base_transport import TransportParams
    from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

    pace_from_first_frame()
    params = TransportParams(audio_in_enabled=True, audio_out_enabled=True)
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
