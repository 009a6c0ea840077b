"""The PJSIP (pjsua2) endpoint of a SIP line, as a SIP phone with no sound card.

Both ends of a SIP call cutin takes part in use this: the worker that places cutin's
call (:mod:`sessions.lines.sip.worker`) and the loopback far end the tests dial. It
holds what is PJSIP-specific and nothing of cutin's call:

- :func:`start_endpoint` creates the one ``pj.Endpoint`` of the process: the media
  clock and the conference bridge at 8 kHz, the null sound device (the machine may
  have none; audio goes through :class:`BridgePort` instead), only G.711 μ-law and
  A-law offered (PCMU first), no silence suppression, PJSIP's log to a callback and
  never to the terminal, SIP over UDP and TCP on ``bind``;
- :class:`BridgePort` is a conference port whose audio is 20 ms frames of 8 kHz
  16-bit PCM handed to and taken from Python callables (on PJSIP's media thread);
- :func:`codec_of` names the codec a call negotiated.

Only PJSIP's own threads and the thread that called :func:`start_endpoint` may call
into it: everything else posts to that thread. Imported only by those processes (it
loads ``pjsua2``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pjsua2 as pj

RATE = 8000
FRAME_MS = 20
FRAME_SAMPLES = RATE * FRAME_MS // 1000
FRAME_BYTES = FRAME_SAMPLES * 2
"""One 20 ms frame of 8 kHz 16-bit PCM."""
SILENCE = bytes(FRAME_BYTES)
DEFAULT_CODECS = ("PCMU/8000", "PCMA/8000")
"""What a SIP line offers: G.711 μ-law and A-law, the codecs every phone network has."""


class _LogSink(pj.LogWriter):  # type: ignore[misc]
    """PJSIP's log lines to a callable (never to the terminal)."""

    def __init__(self, sink: Callable[[int, str], None]) -> None:
        super().__init__()
        self._sink = sink

    def write(self, entry: Any) -> None:
        with contextlib.suppress(Exception):  # a log line must never break the stack
            self._sink(int(entry.level), str(entry.msg))


class Stack:
    """One process's running endpoint: its transports, and the objects kept alive."""

    def __init__(self, endpoint: Any, sink: _LogSink, transports: dict[str, int]) -> None:
        self.endpoint = endpoint
        self._sink = sink  # PJSIP holds a raw pointer to it: keep it alive
        self.transports = transports
        """Transport id by kind ("udp", "tcp")."""

    def local_port(self, kind: str = "udp") -> int:
        info = self.endpoint.transportGetInfo(self.transports[kind])
        return int(info.localName.rpartition(":")[2])

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.endpoint.hangupAllCalls()
        with contextlib.suppress(Exception):
            self.endpoint.libDestroy()


def start_endpoint(
    log: Callable[[int, str], None],
    *,
    bind: str = "",
    port: int = 0,
    codecs: tuple[str, ...] = DEFAULT_CODECS,
    log_level: int = 3,
    user_agent: str = "cutin",
) -> Stack:
    """Create, configure and start this process's endpoint (see the module).

    ``codecs`` are PJSIP codec ids ("PCMU/8000"), in order of preference; every other
    codec is disabled. ``port`` 0 takes a free port for SIP; RTP takes free ports too.
    """
    ep = pj.Endpoint()
    ep.libCreate()
    config = pj.EpConfig()
    config.uaConfig.userAgent = user_agent
    config.uaConfig.maxCalls = 4
    sink = _LogSink(log)
    config.logConfig.writer = sink
    config.logConfig.level = log_level
    config.logConfig.consoleLevel = log_level
    config.logConfig.decor = 0
    media = config.medConfig
    media.clockRate = RATE
    media.sndClockRate = RATE
    media.channelCount = 1
    media.audioFramePtime = FRAME_MS
    media.ptime = FRAME_MS
    media.noVad = True  # silence is sent as audio, as a phone does
    media.ecTailLen = 0
    media.hasIoqueue = True
    ep.libInit(config)
    transports = {}
    for kind, ttype in (("udp", pj.PJSIP_TRANSPORT_UDP), ("tcp", pj.PJSIP_TRANSPORT_TCP)):
        tconfig = pj.TransportConfig()
        tconfig.port = port if kind == "udp" else 0
        if bind:
            tconfig.boundAddress = bind
            tconfig.publicAddress = bind
        transports[kind] = ep.transportCreate(ttype, tconfig)
    ep.libStart()
    ep.audDevManager().setNullDev()
    wanted = {c.lower(): len(codecs) - i for i, c in enumerate(codecs)}
    for info in ep.codecEnum2():
        base = _base_id(info.codecId, codecs)
        ep.codecSetPriority(info.codecId, 200 + wanted[base] if base in wanted else 0)
    return Stack(ep, sink, transports)


def _base_id(codec_id: str, codecs: tuple[str, ...]) -> str:
    """``PCMU/8000/1`` → ``pcmu/8000`` when that is one of ``codecs``."""
    low = codec_id.lower()
    return next((c.lower() for c in codecs if low.startswith(c.lower())), low)


def account_config(
    id_uri: str,
    *,
    registrar: str = "",
    user: str = "",
    password: str = "",
    bind: str = "",
) -> Any:
    """An account: ``id_uri`` as From, digest credentials for any realm if given, and
    registration to ``registrar`` if given (RTP bound to ``bind`` if given)."""
    config = pj.AccountConfig()
    config.idUri = id_uri
    if registrar:
        config.regConfig.registrarUri = registrar
        config.regConfig.registerOnAdd = True
        config.regConfig.timeoutSec = 300
        config.regConfig.retryIntervalSec = 0  # a failed registration is reported, not retried
    if user or password:
        config.sipConfig.authCreds.append(pj.AuthCredInfo("digest", "*", user, 0, password))
    if bind:
        config.mediaConfig.transportConfig.boundAddress = bind
        config.mediaConfig.transportConfig.publicAddress = bind
    config.mediaConfig.transportConfig.port = 0
    config.natConfig.iceEnabled = False
    config.natConfig.sdpNatRewriteUse = 0
    config.natConfig.contactRewriteUse = 0
    config.natConfig.viaRewriteUse = 0
    return config


class BridgePort(pj.AudioMediaPort):  # type: ignore[misc]
    """A conference port of 20 ms, 8 kHz, 16-bit mono frames.

    ``pull()`` gives the next frame to send to the far end (``FRAME_BYTES`` bytes);
    ``push(frame)`` takes each frame heard from it. Both run on PJSIP's media thread:
    they must return quickly and never raise.
    """

    def __init__(self, pull: Callable[[], bytes], push: Callable[[bytes], None]) -> None:
        super().__init__()
        self._pull = pull
        self._push = push
        fmt = pj.MediaFormatAudio()
        fmt.type = pj.PJMEDIA_TYPE_AUDIO
        fmt.id = pj.PJMEDIA_FORMAT_PCM
        fmt.clockRate = RATE
        fmt.channelCount = 1
        fmt.bitsPerSample = 16
        fmt.frameTimeUsec = FRAME_MS * 1000
        self.createPort("cutin-bridge", fmt)

    def onFrameRequested(self, frame: Any) -> None:
        try:
            data = self._pull()
        except Exception:
            data = SILENCE
        if len(data) != FRAME_BYTES:
            data = (data + SILENCE)[:FRAME_BYTES]
        frame.type = pj.PJMEDIA_FRAME_TYPE_AUDIO
        frame.buf = pj.ByteVector(data)
        frame.size = FRAME_BYTES

    def onFrameReceived(self, frame: Any) -> None:
        if frame.type != pj.PJMEDIA_FRAME_TYPE_AUDIO or not frame.size:
            return
        with contextlib.suppress(Exception):
            self._push(bytes(frame.buf))


def connect_audio(call: Any, port: BridgePort) -> bool:
    """Wire the call's active audio to ``port`` both ways; False if it has none yet."""
    info = call.getInfo()
    for media in info.media:
        if media.type == pj.PJMEDIA_TYPE_AUDIO and media.status == pj.PJSUA_CALL_MEDIA_ACTIVE:
            audio = pj.AudioMedia.typecastFromMedia(call.getMedia(media.index))
            audio.startTransmit(port)
            port.startTransmit(audio)
            return True
    return False


def codec_of(call: Any) -> str:
    """The negotiated audio codec, e.g. ``PCMU/8000`` ("" if none is known)."""
    with contextlib.suppress(Exception):
        info = call.getInfo()
        for media in info.media:
            if media.type == pj.PJMEDIA_TYPE_AUDIO:
                stream = call.getStreamInfo(media.index)
                return f"{stream.codecName}/{stream.codecClockRate}"
    return ""


def active_call_state() -> dict[str, int]:
    """PJSIP's INVITE session states by name, for the worker's events."""
    return {
        "calling": pj.PJSIP_INV_STATE_CALLING,
        "early": pj.PJSIP_INV_STATE_EARLY,
        "connecting": pj.PJSIP_INV_STATE_CONNECTING,
        "confirmed": pj.PJSIP_INV_STATE_CONFIRMED,
        "disconnected": pj.PJSIP_INV_STATE_DISCONNECTED,
    }
