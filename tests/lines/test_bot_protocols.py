"""The example Pipecat bot's ``--protocol``: for each provider, Pipecat's own serializer
answers that provider's handshake, greets in the provider's audio format, says the
same ``cutin-bot:`` lines, and sends the provider's flush when a caller's speech
interrupts it. A plain websockets client plays the provider (no cutin line), so a
broken protocol table shows here, not only through a line."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE
from sessions.lines.codec import StreamResampler, encode_alaw, encode_ulaw
from sessions.speech.wav import float_to_pcm16
from tests.support.pipecat_bot import BotPool

pytestmark = [pytest.mark.audio, pytest.mark.slow]

SPEECH = "Sorry, wait a moment, I need to change the delivery address, please."


def speech_at(rate: int) -> np.ndarray:
    from sessions.speech.tts import EspeakTts

    audio = EspeakTts().synthesize(SPEECH).audio
    return StreamResampler(LINE_RATE, rate).process(audio) if rate != LINE_RATE else audio


def hello(protocol: str) -> list[dict[str, Any]]:
    hellos: dict[str, list[dict[str, Any]]] = {
        "twilio": [
            {"event": "connected", "protocol": "Call", "version": "1.0.0"},
            {"event": "start", "streamSid": "MZ1", "start": {"streamSid": "MZ1", "callSid": "CA1"}},
        ],
        "telnyx": [
            {"event": "connected", "version": "1.0.0"},
            {"event": "start", "sequence_number": "1", "stream_id": "S1",
             "start": {"call_control_id": "v3:x",
                       "media_format": {"encoding": "PCMA", "sample_rate": 8000, "channels": 1}}},
        ],
        "plivo": [
            {"event": "start", "sequenceNumber": 1,
             "start": {"callId": "c", "streamId": "P1",
                       "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000}}},
        ],
        "exotel": [
            {"event": "connected"},
            {"event": "start", "sequence_number": "1", "stream_sid": "E1",
             "start": {"stream_sid": "E1", "call_sid": "c", "account_sid": "a",
                       "media_format": {"encoding": "base64", "sample_rate": "16000"}}},
        ],
        "vonage": [{"event": "websocket:connected", "content-type": "audio/l16;rate=16000"}],
        "pcm": [],
    }  # fmt: skip
    return hellos[protocol]


def caller_audio(protocol: str) -> list[str | bytes]:
    """The barge-in speech as the provider frames it (20 ms; Exotel 100 ms)."""
    if protocol in ("twilio", "telnyx", "plivo"):
        encode = encode_alaw if protocol == "telnyx" else encode_ulaw
        data = encode(speech_at(8000))
        step = 160
    else:
        data = float_to_pcm16(speech_at(24000 if protocol == "pcm" else 16000))
        step = {"exotel": 3200, "vonage": 640, "pcm": 960}[protocol]
    chunks = [data[i : i + step] for i in range(0, len(data), step)]
    if protocol in ("vonage", "pcm"):
        return list(chunks)
    sid = {"twilio": "streamSid", "telnyx": "stream_id", "plivo": "streamId"}.get(
        protocol, "stream_sid"
    )
    payloads = [base64.b64encode(c).decode("ascii") for c in chunks]
    return [json.dumps({"event": "media", sid: "X", "media": {"payload": b}}) for b in payloads]


FLUSH = {
    "twilio": ("event", "clear"),
    "telnyx": ("event", "clear"),
    "plivo": ("event", "clearAudio"),
    "exotel": ("event", "clear"),
    "vonage": ("action", "clear"),
    "pcm": ("type", "clear"),
}
AUDIO = {
    "twilio": "μ-law 8 kHz",
    "telnyx": "PCMA 8 kHz",
    "plivo": "μ-law 8 kHz",
    "exotel": "PCM16 16 kHz",
    "vonage": "L16 16 kHz",
    "pcm": "PCM16 24 kHz",
}


async def call(url: str, protocol: str) -> tuple[int, list[dict[str, Any]], float, float]:
    """Greet, then speak over the greeting; (audio messages, JSON from the bot, when the
    speech began, when the flush came)."""
    from websockets.asyncio.client import connect

    audio, texts, spoke, flushed = 0, [], 0.0, 0.0
    key, value = FLUSH[protocol]
    async with connect(url + ("?rate=24000" if protocol == "pcm" else "")) as ws:
        for message in hello(protocol):
            await ws.send(json.dumps(message))
        pending = caller_audio(protocol)
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and not flushed:
            try:
                raw = await asyncio.wait_for(ws.recv(), 0.02)
            except TimeoutError:
                raw = None
            if isinstance(raw, bytes):
                audio += 1
            elif raw is not None:
                message = json.loads(raw)
                texts.append(message)
                if message.get(key) == value and spoke:
                    flushed = time.monotonic()
                elif message.get("event") in ("media", "playAudio"):
                    audio += 1
            if audio >= 20 and pending:  # the greeting is under way: barge in
                spoke = spoke or time.monotonic()
                await ws.send(pending.pop(0))
    return audio, texts, spoke, flushed


@pytest.mark.parametrize("protocol", list(FLUSH))
def test_each_protocol_greets_in_its_format_and_flushes_when_interrupted(
    protocol: str, pipecat_bots: BotPool
) -> None:
    bot = pipecat_bots.get(protocol=protocol)
    audio, texts, spoke, flushed = asyncio.run(call(bot.url, protocol))
    bot.wait_idle()
    started = bot.said("call started ")
    assert started and started[0][1].endswith(f"({protocol}, {AUDIO[protocol]})"), started
    assert bot.said("speaking") and bot.said("interrupted"), bot.said("")
    assert audio >= 20, f"only {audio} audio messages from the bot"
    assert flushed, f"no {FLUSH[protocol]} after the caller spoke; got {texts[-3:]}"
    print(f"{protocol}: flush {flushed - spoke:.2f} s after the caller began")
