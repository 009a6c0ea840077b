"""PlivoLine against a scripted Plivo-side agent (a real websockets server)."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, LineError, LineState, NoticeKind
from sessions.lines.codec import StreamResampler, decode_ulaw, encode_ulaw
from sessions.lines.factory import parse_line_agent
from sessions.lines.plivo import PlivoLine, make_line
from sessions.lines.registry import LineOptions
from sessions.speech.wav import float_to_pcm16, pcm16_to_float
from tests.lines.test_twilio_line import FRAME, hold, tone, wait_until
from tests.lines.wire_agent import Notices
from tests.support.twilio_agent import AgentCall, TwilioAgent


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def play(payload: bytes, content_type: str = "audio/x-mulaw", rate: int = 8000) -> dict[str, Any]:
    media = {"contentType": content_type, "sampleRate": rate, "payload": b64(payload)}
    return {"event": "playAudio", "media": media}


def dial(url: str) -> PlivoLine:
    line = make_line(parse_line_agent(f"plivo:{url}"), LineOptions())
    assert isinstance(line, PlivoLine)
    line.open(timeout_s=5)
    return line


def test_start_is_plivos_and_caller_audio_is_20ms_mulaw_by_default() -> None:
    with TwilioAgent(hold) as agent:
        line = dial(agent.url)
        notices = Notices(line)
        assert "audio/x-mulaw" in notices.of(NoticeKind.OPEN)[0].detail
        assert "8000 Hz" in notices.of(NoticeKind.OPEN)[0].detail
        audio = tone(440, 1.0)
        for i in range(0, audio.size, FRAME):
            line.send(audio[i : i + FRAME])
        wait_until(lambda: len(agent.calls[0].events("media")) >= 50, what="50 media")
        line.close()
        assert line.state is LineState.CLOSED
        wait_until(lambda: agent.calls[0].ws.close_code is not None, what="the close")
    call = agent.calls[0]
    start = call.received[0].message
    assert start["event"] == "start" and start["sequenceNumber"] == 1
    body = start["start"]
    assert body["streamId"] == line.stream_id and body["callId"] == line.call_id
    assert body["tracks"] == ["inbound"]
    assert body["mediaFormat"] == {"encoding": "audio/x-mulaw", "sampleRate": 8000}
    media = call.events("media")
    assert len(media) == 50
    assert [m["sequenceNumber"] for m in media] == list(range(2, 52))
    assert [m["media"]["chunk"] for m in media] == list(range(1, 51))
    assert all(m["streamId"] == line.stream_id and m["media"]["track"] == "inbound" for m in media)
    payload = b"".join(base64.b64decode(m["media"]["payload"]) for m in media)
    assert len(payload) == 8000
    expected = StreamResampler(LINE_RATE, 8000).process(audio)
    assert np.max(np.abs(decode_ulaw(payload) - expected)) < 0.03
    assert agent.calls[0].ws.close_code == 1000
    assert {m["event"] for m in call.events("stop")} == set()  # Plivo sends no stop


def test_l16_16k_both_ways_and_the_agent_may_play_any_plivo_format() -> None:
    voice16 = tone(300, 0.5, rate=16000)
    voice8 = tone(500, 0.5, rate=8000)

    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        assert start["start"]["mediaFormat"] == {"encoding": "audio/x-l16", "sampleRate": 16000}
        await call.send(play(float_to_pcm16(voice16), "audio/x-l16", 16000))
        await call.send(play(encode_ulaw(voice8)))  # μ-law 8 kHz: Plivo plays it too
        await call.send(play(b"\x00" * 320, "audio/x-l16", 44100))  # not Plivo's
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = dial(agent.url + "?codec=l16&rate=16000")
        notices = Notices(line)
        assert "L16" in notices.of(NoticeKind.OPEN)[0].detail
        audio = tone(440, 0.5)
        for i in range(0, audio.size, FRAME):
            line.send(audio[i : i + FRAME])
        wait_until(lambda: line.media_received == 2, what="two playAudio")
        errors = notices.wait(NoticeKind.ERROR)
        heard = np.concatenate([line.take(FRAME) for _ in range(32)])
        wait_until(lambda: len(agent.calls[0].events("media")) >= 25, what="caller media")
        line.close()
    # The L16 voice plays sample for sample (16 kHz in, 16 kHz out: no resampling).
    assert np.max(np.abs(heard[: voice16.size] - voice16)) < 1e-3
    formats = [n.data for n in notices.of(NoticeKind.FORMAT)]
    assert formats[-1]["encoding"] == "audio/x-mulaw" and formats[-1]["rate"] == 8000
    later = heard[voice16.size : voice16.size + 16000 // 2]
    expected = StreamResampler(8000, LINE_RATE).process(decode_ulaw(encode_ulaw(voice8)))
    assert np.max(np.abs(later[: expected.size] - expected)) < 0.03
    assert [e.data["kind"] for e in errors] == ["play_format"]
    sent = [base64.b64decode(m["media"]["payload"]) for m in agent.calls[0].events("media")]
    assert {len(p) for p in sent} == {640}  # 20 ms of 16 kHz PCM16
    out = pcm16_to_float(b"".join(sent))
    assert np.max(np.abs(out[: audio.size] - audio[: out.size])) < 1e-3


def test_checkpoint_waits_for_its_audio_and_clear_audio_is_acknowledged() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        sid = start["start"]["streamId"]
        await call.send({"event": "checkpoint", "streamId": sid, "name": "idle"})
        await call.expect("playedStream")
        speech = encode_ulaw(tone(300, 2.0, rate=8000))
        await call.send(play(speech[:800]))
        await call.send({"event": "checkpoint", "streamId": sid, "name": "first-100ms"})
        await call.send(play(speech[800:]))
        await call.send({"event": "checkpoint", "streamId": sid, "name": "the-rest"})
        await call.expect("playedStream", timeout=5)
        await call.send({"event": "clearAudio", "streamId": sid})
        await call.expect("clearedAudio", timeout=5)
        await call.send({"event": "sendDTMF", "dtmf": "12#"})
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = dial(agent.url)
        notices = Notices(line)
        wait_until(lambda: line.media_received == 2, what="the speech")
        for _ in range(10):
            line.take(FRAME)
        clear = notices.wait(NoticeKind.CLEAR)[0]
        notices.wait(NoticeKind.AGENT_EVENT)
        assert float(np.max(np.abs(line.take(FRAME)))) == 0.0
        line.close()
    call = agent.calls[0]
    assert [m["name"] for m in call.events("playedStream")] == ["idle", "first-100ms"]
    assert all(m["streamId"] == line.stream_id for m in call.events("playedStream"))
    (cleared,) = call.events("clearedAudio")
    assert cleared["streamId"] == line.stream_id and isinstance(cleared["sequenceNumber"], int)
    assert 1.6 < clear.data["dropped_s"] < 1.95
    marks = [(n.data["name"], n.data["cleared"]) for n in notices.of(NoticeKind.MARK)]
    assert marks == [("idle", False), ("first-100ms", False), ("the-rest", True)]
    dtmf = [n for n in notices.of(NoticeKind.AGENT_EVENT) if n.data["kind"] == "send_dtmf"]
    assert dtmf[0].data["dtmf"] == "12#"


def test_hostile_messages_are_bounded_notices_and_the_call_goes_on() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("start")
        for bad in (b"\x01\x02", "nope", "[]", '{"streamId": "x"}'):
            await call.send(bad)
        for i in range(10):
            await call.send({"event": f"odd{i}"})
        await call.send({"event": "playAudio", "media": {"payload": "!!"}})
        await call.send({"event": "playAudio"})
        await call.send({"event": "checkpoint", "name": "y" * 5000})
        await call.send(play(b"\x00" * 3, "audio/x-l16", 8000))  # half a sample over
        await call.send(play(b"\xff" * 160))
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = dial(agent.url)
        notices = Notices(line)
        wait_until(lambda: line.media_received == 2, what="the last playAudio")
        assert line.state is LineState.OPEN
        line.close()
    errors = notices.of(NoticeKind.ERROR)
    kinds = {e.data["kind"] for e in errors}
    assert {"binary", "not_json", "not_object", "no_event", "stream_id"} <= kinds
    assert {"play_base64", "play_no_payload", "checkpoint_too_long", "odd_bytes"} <= kinds
    assert len(errors) < 25
    assert agent.calls[0].events("playedStream") == []


def test_urls_are_checked_before_dialling() -> None:
    assert parse_line_agent("plivo:wss://h:1/p?codec=L16&rate=16000").kind == "plivo"
    for bad, words in (
        ("plivo:ws://h/p?rate=16000", "8000 Hz only"),
        ("plivo:ws://h/p?codec=opus", "codec must be mulaw or l16"),
        ("plivo:ws://h/p?codec=l16&rate=48000", "rate must be 8000 or 16000"),
        ("plivo:ftp://h/p", "plivo:ws://HOST:PORT/PATH"),
    ):
        with pytest.raises(LineError, match=words):
            parse_line_agent(bad)


def test_readme_and_help_name_every_line() -> None:
    """The README's line table has a row for every registered transport, and
    ``cutin call --help`` (the registry's line_help) names Telnyx and Plivo."""
    from pathlib import Path

    from sessions.lines.registry import line_help, transports

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    for t in transports():
        lead = f"| `{t.prefix or t.kind}"
        assert any(row.startswith(lead) for row in rows), f"no README row for {t.kind}"
    assert "telnyx:ws://HOST:PORT/PATH" in line_help() and "plivo:ws://" in line_help()
