"""The wire protocols the example Pipecat bot answers, one table entry each.

Each entry reads the provider's handshake (Twilio's ``start``, Telnyx's ``start`` with
``stream_id`` and ``media_format``, Plivo's camelCase ``start``, Exotel's snake_case
``start``, Vonage's ``websocket:connected``, or, for raw PCM, the connection itself)
and builds Pipecat 1.14's own serializer for that provider from it, as a deployed bot
does. :class:`CallSerializer` is the one serializer the transport is given: it waits
for the handshake, builds the call's serializer, and turns the call's start and stop
into ``InputTransportMessageFrame`` messages ``{"cutin_bot": "start" | "stop", ...}``
the bot's replier reacts to (greet; stop talking). Everything else is the provider
serializer's own work.

Only :mod:`examples.pipecat_bot` imports this module (inside its ``build``), so its
top level may import Pipecat.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import (
    AudioRawFrame,
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    InterruptionFrame,
)
from pipecat.processors.frame_processor import FrameProcessorSetup
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.serializers.exotel import ExotelFrameSerializer
from pipecat.serializers.plivo import PlivoFrameSerializer
from pipecat.serializers.telnyx import TelnyxFrameSerializer
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.serializers.vonage import VonageFrameSerializer

PCM_RATES = (8000, 16000, 24000, 48000)
"""The rates a raw PCM caller may ask for with ``?rate=``."""


@dataclass(frozen=True)
class CallStart:
    """A call has started: its id (for ``call started ID``), format, and serializer."""

    stream: str
    audio: str
    serializer: FrameSerializer


@dataclass(frozen=True)
class Protocol:
    """One provider's side of the bot."""

    name: str
    about: str
    """The provider's format, for ``--help``."""
    start: Callable[[dict[str, Any]], CallStart | None]
    """The call's start from a JSON message, or None if it is not the handshake."""
    stop_events: frozenset[str] = frozenset()
    """JSON ``event`` values that end the call (the socket closing always does)."""
    on_connect: Callable[[str, int], CallStart | None] | None = None
    """For a protocol without a handshake: the call's start from the request path."""


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) and value else default


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _twilio(message: dict[str, Any]) -> CallStart | None:
    if message.get("event") != "start":
        return None
    start = _dict(message.get("start"))
    sid = _text(message.get("streamSid")) or _text(start.get("streamSid"), "MZ")
    serializer = TwilioFrameSerializer(
        stream_sid=sid,
        call_sid=start.get("callSid"),
        account_sid=start.get("accountSid"),
        params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
    )
    return CallStart(sid, "μ-law 8 kHz", serializer)


def _telnyx(message: dict[str, Any]) -> CallStart | None:
    if message.get("event") != "start":
        return None
    start = _dict(message.get("start"))
    encoding = _text(_dict(start.get("media_format")).get("encoding"), "PCMU").upper()
    if encoding not in ("PCMU", "PCMA"):
        encoding = "PCMU"  # Pipecat's serializer speaks G.711 only
    stream = _text(message.get("stream_id"), "telnyx")
    # The stream's codec both ways, as a call whose stream_bidirectional_codec matches.
    serializer = TelnyxFrameSerializer(
        stream_id=stream,
        outbound_encoding=encoding,
        inbound_encoding=encoding,
        call_control_id=start.get("call_control_id"),
        params=TelnyxFrameSerializer.InputParams(auto_hang_up=False),
    )
    return CallStart(stream, f"{encoding} 8 kHz", serializer)


def _plivo(message: dict[str, Any]) -> CallStart | None:
    if message.get("event") != "start":
        return None
    start = _dict(message.get("start"))
    stream = _text(start.get("streamId"), "plivo")
    serializer = PlivoFrameSerializer(
        stream_id=stream,
        call_id=start.get("callId"),
        params=PlivoFrameSerializer.InputParams(auto_hang_up=False),
    )
    encoding = _text(_dict(start.get("mediaFormat")).get("encoding"), "audio/x-mulaw")
    audio = "μ-law 8 kHz"
    if encoding != "audio/x-mulaw":  # Pipecat's Plivo serializer decodes μ-law only
        audio += f" (the stream says {encoding[:30]}: Pipecat's serializer takes μ-law only)"
    return CallStart(stream, audio, serializer)


def _exotel(message: dict[str, Any]) -> CallStart | None:
    if message.get("event") != "start":
        return None
    start = _dict(message.get("start"))
    stream = _text(message.get("stream_sid")) or _text(start.get("stream_sid"), "exotel")
    rate = _rate(_dict(start.get("media_format")).get("sample_rate"), 8000)
    serializer = ExotelFrameSerializer(
        stream_sid=stream,
        call_sid=start.get("call_sid"),
        params=ExotelFrameSerializer.InputParams(exotel_sample_rate=rate),
    )
    return CallStart(stream, f"PCM16 {rate / 1000:g} kHz", serializer)


def _vonage(message: dict[str, Any]) -> CallStart | None:
    if message.get("event") != "websocket:connected":
        return None
    content = _text(message.get("content-type"), "audio/l16;rate=16000")
    found = re.search(r"rate=(\d+)", content)
    rate = _rate(found.group(1) if found else None, 16000)
    stream = _text(message.get("uuid")) or _text(message.get("call_uuid"), "vonage")
    serializer = VonageFrameSerializer(
        params=VonageFrameSerializer.InputParams(vonage_sample_rate=rate)
    )
    return CallStart(stream, f"L16 {rate / 1000:g} kHz", serializer)


def _pcm_connect(path: str, default_rate: int) -> CallStart:
    query = parse_qs(urlsplit(path).query)
    rate = _rate((query.get("rate") or [None])[0], default_rate)
    return CallStart(f"pcm-{rate}", f"PCM16 {rate / 1000:g} kHz", RawPcmSerializer(rate))


def _no_handshake(_message: dict[str, Any]) -> CallStart | None:
    return None


def _rate(value: Any, default: int) -> int:
    try:
        rate = int(str(value))
    except (TypeError, ValueError):
        return default
    return rate if rate in PCM_RATES else default


class RawPcmSerializer(FrameSerializer):
    """Binary little-endian PCM16 frames both ways at one rate; ``{"type": "clear"}``
    (a text message) when the bot is interrupted, so a caller may drop what it queued."""

    def __init__(self, rate: int) -> None:
        super().__init__()
        self.rate = rate
        self._pipeline_rate = 16000
        self._in = create_stream_resampler()
        self._out = create_stream_resampler()

    async def setup(self, setup: FrameProcessorSetup) -> None:
        self._pipeline_rate = setup.audio_in_sample_rate

    async def serialize(self, frame: Frame) -> str | bytes | None:
        if isinstance(frame, InterruptionFrame):
            return json.dumps({"type": "clear"})
        if isinstance(frame, AudioRawFrame):
            data = await self._out.resample(frame.audio, frame.sample_rate, self.rate)
            return data or None
        return None

    async def deserialize(self, data: str | bytes) -> Frame | None:
        if not isinstance(data, bytes) or len(data) < 2:
            return None  # text from the caller means nothing to this protocol
        pcm = data[: len(data) - len(data) % 2]
        audio = await self._in.resample(pcm, self.rate, self._pipeline_rate)
        if not audio:
            return None
        return InputAudioRawFrame(audio=audio, num_channels=1, sample_rate=self._pipeline_rate)


PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol("twilio", "Twilio Media Streams, μ-law 8 kHz", _twilio, frozenset({"stop"})),
        Protocol(
            "telnyx", "Telnyx media streaming, PCMU or PCMA 8 kHz", _telnyx, frozenset({"stop"})
        ),
        Protocol("plivo", "Plivo audio streams, μ-law 8 kHz", _plivo),
        Protocol("exotel", "Exotel voicebot stream, PCM16 8 kHz", _exotel, frozenset({"stop"})),
        Protocol("vonage", "Vonage WebSocket, L16 binary frames", _vonage),
        Protocol(
            "pcm",
            "raw PCM16 binary frames at ?rate= (or --pcm-rate), JSON clear",
            _no_handshake,
            on_connect=_pcm_connect,
        ),
    )
}


def protocol_help() -> str:
    return "; ".join(f"{p.name}: {p.about}" for p in PROTOCOLS.values())


class CallSerializer(FrameSerializer):
    """The transport's serializer: one call at a time, each with its provider's own."""

    def __init__(self, protocol: Protocol, *, pcm_rate: int = 16000) -> None:
        super().__init__()
        self.protocol = protocol
        self.pcm_rate = pcm_rate
        self._setup: FrameProcessorSetup | None = None
        self._call: FrameSerializer | None = None

    async def setup(self, setup: FrameProcessorSetup) -> None:
        self._setup = setup
        if self._call is not None:
            await self._call.setup(setup)

    async def connected(self, path: str) -> dict[str, Any] | None:
        """A caller connected (before any of its messages is read): forget the last
        call; for a protocol without a handshake, the call starts now."""
        self._call = None
        if self.protocol.on_connect is None:
            return None
        start = self.protocol.on_connect(path, self.pcm_rate)
        return await self._begin(start) if start is not None else None

    async def _begin(self, start: CallStart) -> dict[str, Any]:
        self._call = start.serializer
        if self._setup is not None:
            await self._call.setup(self._setup)
        return {"cutin_bot": "start", "stream": start.stream, "audio": start.audio}

    async def serialize(self, frame: Frame) -> str | bytes | None:
        return await self._call.serialize(frame) if self._call is not None else None

    async def deserialize(self, data: str | bytes) -> Frame | None:
        if isinstance(data, str):
            try:
                message = json.loads(data)
            except (ValueError, RecursionError):
                message = None
            if isinstance(message, dict):
                start = self.protocol.start(message)
                if start is not None:
                    return InputTransportMessageFrame(message=await self._begin(start))
                if message.get("event") in self.protocol.stop_events:
                    return InputTransportMessageFrame(message={"cutin_bot": "stop"})
        if self._call is None:
            return None
        return await self._call.deserialize(data)
