"""VonageLine against a scripted agent on 127.0.0.1, and against Pipecat's own
VonageFrameSerializer (what a Pipecat bot behind Vonage reads and writes)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, LineError, LineState, NoticeKind
from sessions.lines.codec import StreamResampler
from sessions.lines.factory import open_line, parse_line_agent
from sessions.lines.registry import line_help
from sessions.lines.vonage import VonageLine
from sessions.speech.wav import float_to_pcm16, pcm16_to_float
from tests.lines.test_pcm_line import hold, pcm, play_all
from tests.lines.test_twilio_line import FRAME, tone, wait_until
from tests.lines.wire_agent import AgentCall, Notices, WireAgent, binary, sizes, texts


def test_the_hello_states_the_content_type_and_frames_are_20ms() -> None:
    for rate, frame in ((16000, 640), (8000, 320)):
        with WireAgent(hold) as agent:
            line = open_line(parse_line_agent(f"vonage:{agent.url}?rate={rate}"), timeout_s=5)
            assert isinstance(line, VonageLine)
            fmt = Notices(line).of(NoticeKind.FORMAT)[0].data
            assert (fmt["encoding"], fmt["rate"]) == ("pcm16", rate)
            audio = tone(440, 1.0)
            for i in range(0, audio.size, FRAME):
                line.send(audio[i : i + FRAME])
            wait_until(lambda: len(sizes(agent.calls[0])) >= 50, what="50 frames")
            line.close()
        call = agent.calls[0]
        hello = call.received[0].message
        assert hello == {"event": "websocket:connected", "content-type": f"audio/l16;rate={rate}"}
        assert texts(call) == [hello]  # then audio only
        assert set(sizes(call)) == {frame} and len(sizes(call)) == 50
        heard = pcm16_to_float(binary(call))
        expected = StreamResampler(LINE_RATE, rate).process(audio)
        assert 10 * np.log10(np.sum(expected**2) / np.sum((heard - expected) ** 2)) > 40


def test_custom_headers_go_in_the_hello_and_rates_are_vonages() -> None:
    with WireAgent(hold) as agent:
        line = VonageLine(agent.url, headers={"caller": "+4415550100", "event": "spoof"})
        line.open(timeout_s=5)
        wait_until(lambda: bool(agent.calls and agent.calls[0].received), what="hello")
        line.close()
    hello = agent.calls[0].received[0].message
    assert hello["event"] == "websocket:connected" and hello["caller"] == "+4415550100"
    with pytest.raises(LineError, match="rate must be 8000 or 16000"):
        parse_line_agent("vonage:ws://127.0.0.1:9/?rate=24000")
    assert "vonage:ws://HOST:PORT/PATH[?rate=16000] (Vonage Voice WebSocket, L16" in line_help()


def test_clear_empties_the_buffer_and_is_acknowledged_and_notify_waits_for_playout() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("websocket:connected")
        await call.send(pcm(1.0))
        await call.send(json.dumps({"action": "notify", "payload": {"n": 1}}))
        await call.send(pcm(2.0))
        await call.send(json.dumps({"action": "notify", "payload": {"n": 2}}))
        await call.expect("websocket:notify")  # the first, once its second has played
        await call.send(json.dumps({"action": "clear"}))
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = VonageLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 2.99, what="3 s of agent audio")
        notices = Notices(line)
        play_all(line, 0.96)
        assert notices.of(NoticeKind.MARK) == []
        play_all(line, 0.064)  # 1.024 s: the first second has played
        first = notices.wait(NoticeKind.MARK)[0]
        assert first.data == {"name": '{"n": 1}', "cleared": False}
        clear = notices.wait(NoticeKind.CLEAR)[0]
        assert clear.data["dropped_s"] == pytest.approx(3.0 - 1.024, abs=0.01)
        marks = notices.wait(NoticeKind.MARK, count=2)
        assert marks[1].data == {"name": '{"n": 2}', "cleared": True}
        wait_until(lambda: len(agent.calls[0].events("websocket:notify")) == 2, what="2nd")
        assert not line.take(FRAME).any()
        line.close()
    call = agent.calls[0]
    events = [m["event"] for m in texts(call)]
    assert events == [
        "websocket:connected",
        "websocket:notify",
        "websocket:cleared",
        "websocket:notify",
    ]
    assert [m["payload"] for m in call.events("websocket:notify")] == [{"n": 1}, {"n": 2}]


def test_frames_that_are_not_20ms_are_played_and_noted_not_errors() -> None:
    sent = pcm(1.0)

    async def script(call: AgentCall) -> None:
        for i in range(0, len(sent), 1280):  # Pipecat's 40 ms
            await call.send(sent[i : i + 1280])
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = VonageLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 0.99, what="1 s")
        heard = play_all(line, 1.0)
        assert np.array_equal(heard, pcm16_to_float(sent)[: heard.size])
        notices = Notices(line)
        assert notices.of(NoticeKind.ERROR) == []
        notes = [n for n in notices.of(NoticeKind.AGENT_EVENT) if n.data["kind"] == "frame_size"]
        assert [n.data["count"] for n in notes] == [1, 10]  # 25 messages: noted twice
        assert "1280 bytes" in notes[0].detail and line.off_size_frames == 25
        line.close()


def test_hostile_messages_are_bounded_notices_and_the_call_goes_on() -> None:
    async def script(call: AgentCall) -> None:
        await call.send(pcm(2.0))  # the notifies wait for it
        for i in range(1000):
            await call.send(json.dumps({"action": f"act-{i}"}))
        for i in range(300):
            await call.send(json.dumps({"action": "notify", "payload": {"i": i, "pad": "x" * 900}}))
        await call.send(json.dumps({"event": "websocket:dtmf"}))
        await call.send("\x1b[2J not json")
        await call.send(b"\x01\x02\x03")
        await call.send(pcm(0.2))
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = VonageLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 2.19, timeout=15, what="the audio")
        seen = Notices(line).seen + line.notices()
        errors = [n for n in seen if n.kind is NoticeKind.ERROR]
        kinds = {n.data["kind"] for n in errors}
        assert kinds == {"unknown_action", "notify_limit", "no_action", "not_json", "odd_bytes"}
        assert len(errors) <= 5 * 4
        assert all("\x1b" not in n.detail for n in seen)
        assert line.state is LineState.OPEN
        line.close()


def test_pipecats_vonage_serializer_reads_what_cutin_sends_and_cutin_honours_its_clear() -> None:
    """The bot side is Pipecat's own serializer: cutin's audio deserializes to input
    audio, and its InterruptionFrame (``{"action": "clear"}``) empties cutin's buffer."""
    from pipecat.frames.frames import InputAudioRawFrame, InterruptionFrame, TTSAudioRawFrame
    from pipecat.serializers.vonage import VonageFrameSerializer

    got: list[object] = []

    async def script(call: AgentCall) -> None:
        serializer = VonageFrameSerializer()

        class Setup:
            audio_in_sample_rate = 16000

        await serializer.setup(cast(Any, Setup()))  # only the rate is read
        speech = float_to_pcm16(tone(300, 2.0, rate=16000))
        out = await serializer.serialize(TTSAudioRawFrame(speech, 16000, 1))
        assert isinstance(out, bytes)
        await call.send(out)
        while len(got) < 5:
            message = await call._inbox.get()
            raw: str | bytes = message.get("binary") or json.dumps(message)
            frame = await serializer.deserialize(raw)
            if frame is not None:
                got.append(frame)
        clear = await serializer.serialize(InterruptionFrame())
        assert isinstance(clear, str)
        await call.send(clear)
        await asyncio.sleep(0.2)
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = VonageLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 1.9, what="the bot's audio")
        for _ in range(20):
            line.send(tone(440, FRAME / LINE_RATE))
        clear = Notices(line).wait(NoticeKind.CLEAR)[0]
        assert clear.data["dropped_s"] > 1.5
        line.close()
    assert all(isinstance(f, InputAudioRawFrame) and f.sample_rate == 16000 for f in got)
