"""The loopback server itself: wire format, recording, speech, scripting."""

from __future__ import annotations

import http.client
import json
import struct

import openai

from tests.support.openai_server import SPEECH_SAMPLE_RATE, OpenAIServer, Reply, Speech


def raw_post(server: OpenAIServer, path: str, body: dict[str, object]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_stream_is_proper_server_sent_events(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Reply("a b", prompt_tokens=3, completion_tokens=2))
    body = {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}
    status, data = raw_post(openai_server, "/v1/chat/completions", body)
    assert status == 200
    events = data.decode().split("\n\n")
    assert events[-1] == "" and events[-2] == "data: [DONE]"
    payloads = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
    assert all(e.startswith("data: ") for e in events[:-1])
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in payloads if c["choices"])
    assert text == "a b"
    assert payloads[-1]["choices"] == [] and payloads[-1]["usage"]["total_tokens"] == 5
    assert payloads[-2]["choices"][0]["finish_reason"] == "stop"


def test_requests_are_recorded_in_order(openai_server: OpenAIServer) -> None:
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="not-needed", max_retries=0)
    for word in ("one", "two"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": word}])
    assert [r.text for r in openai_server.chat_requests()] == ["one", "two"]
    assert openai_server.chat_requests()[0].method == "POST"
    client.close()


def test_speech_returns_24khz_pcm(openai_server: OpenAIServer) -> None:
    openai_server.enqueue_speech(Speech(seconds=0.25, frequency_hz=440), Speech(0.1, None))
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="not-needed", max_retries=0)
    tone = client.audio.speech.create(
        model="tts", voice="alloy", input="Hello", response_format="pcm"
    ).content
    silence = client.audio.speech.create(
        model="tts", voice="alloy", input="Hi", response_format="pcm"
    ).content
    client.close()
    assert len(tone) == 2 * round(0.25 * SPEECH_SAMPLE_RATE)
    samples = struct.unpack(f"<{len(tone) // 2}h", tone)
    assert max(samples) > 5000 and min(samples) < -5000
    assert silence == b"\x00\x00" * round(0.1 * SPEECH_SAMPLE_RATE)
    assert openai_server.speech_requests()[0].body["input"] == "Hello"


def test_responder_beats_queue_and_default_applies_last(openai_server: OpenAIServer) -> None:
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="not-needed", max_retries=0)

    def ask() -> str:
        reply = client.chat.completions.create(model="m", messages=[])
        return reply.choices[0].message.content or ""

    openai_server.enqueue(Reply("queued"))
    openai_server.responder = lambda request: Reply("from responder")
    assert ask() == "from responder"
    openai_server.responder = None
    assert ask() == "queued" and openai_server.pending() == 0
    assert ask() == "OK"
    client.close()
