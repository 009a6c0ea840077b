"""ExotelLine against a scripted agent on 127.0.0.1, and against Pipecat's own
ExotelFrameSerializer (what a Pipecat bot behind Exotel's Voicebot applet reads)."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any, cast

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, LineError, LineState, NoticeKind
from sessions.lines.codec import StreamResampler
from sessions.lines.exotel import ExotelLine, SequenceCheck
from sessions.lines.factory import open_line, parse_line_agent
from sessions.lines.registry import line_help
from sessions.speech.wav import float_to_pcm16, pcm16_to_float
from tests.lines.test_pcm_line import hold, pcm, play_all
from tests.lines.test_twilio_line import FRAME, tone, wait_until
from tests.lines.wire_agent import AgentCall, Notices, WireAgent


def media(sid: str, data: bytes, **extra: Any) -> dict[str, Any]:
    payload = base64.b64encode(data).decode("ascii")
    return {"event": "media", "stream_sid": sid, "media": {"payload": payload}, **extra}


async def send_chunks(call: AgentCall, sid: str, data: bytes, size: int = 3200) -> None:
    for i in range(0, len(data), size):
        await call.send(media(sid, data[i : i + size]))


def test_connected_start_media_and_stop_as_exotel_sends_them() -> None:
    with WireAgent(hold) as agent:
        line = open_line(parse_line_agent(f"exotel:{agent.url}"), timeout_s=5)
        assert isinstance(line, ExotelLine) and line.rate == 8000
        fmt = Notices(line).of(NoticeKind.FORMAT)[0].data
        assert (fmt["encoding"], fmt["rate"], fmt["channels"]) == ("pcm16", 8000, 1)
        audio = tone(440, 1.0)
        for i in range(0, audio.size, FRAME):
            line.send(audio[i : i + FRAME])
        wait_until(lambda: len(agent.calls[0].events("media")) >= 10, what="10 chunks")
        line.close()
        wait_until(lambda: bool(agent.calls[0].events("stop")), what="stop")
    call = agent.calls[0]
    assert call.received[0].message == {"event": "connected"}
    start = call.received[1].message
    assert start["event"] == "start" and start["sequence_number"] == "1"
    body = start["start"]
    assert start["stream_sid"] == body["stream_sid"] == line.stream_sid
    assert body["call_sid"].startswith("CA") and body["account_sid"].startswith("AC")
    assert body["media_format"]["sample_rate"] == "8000"
    chunks = call.events("media")
    assert len(chunks) == 10  # 1 s in 100 ms chunks
    assert [m["sequence_number"] for m in chunks] == [str(n) for n in range(2, 12)]
    assert [m["media"]["chunk"] for m in chunks] == [str(n) for n in range(1, 11)]
    assert [m["media"]["timestamp"] for m in chunks] == [str(t) for t in range(0, 1000, 100)]
    payloads = [base64.b64decode(m["media"]["payload"]) for m in chunks]
    assert {len(p) for p in payloads} == {1600} and 1600 % 320 == 0
    heard = pcm16_to_float(b"".join(payloads))
    expected = StreamResampler(LINE_RATE, 8000).process(audio)
    assert 10 * np.log10(np.sum(expected**2) / np.sum((heard - expected) ** 2)) > 40
    stop = call.events("stop")[0]
    assert stop["sequence_number"] == "12" and stop["stop"]["reason"] == "callended"
    assert stop["stop"]["call_sid"] == body["call_sid"]


@pytest.mark.parametrize(("rate", "chunk"), [(16000, 3200), (24000, 4800)])
def test_the_sample_rate_parameter_sets_the_stream(rate: int, chunk: int) -> None:
    with WireAgent(hold) as agent:
        line = open_line(parse_line_agent(f"exotel:{agent.url}?sample-rate={rate}"), timeout_s=5)
        for _ in range(10):
            line.send(tone(300, FRAME / LINE_RATE))
        wait_until(lambda: bool(agent.calls[0].events("media")), what="a chunk")
        line.close()
    call = agent.calls[0]
    assert call.events("start")[0]["start"]["media_format"]["sample_rate"] == str(rate)
    payload = base64.b64decode(call.events("media")[0]["media"]["payload"])
    assert len(payload) == chunk and chunk % 320 == 0


def test_a_bad_rate_is_one_clear_line_and_help_names_the_line() -> None:
    with pytest.raises(LineError, match=r"sample-rate must be 8000, 16000 or 24000 \(Hz\)"):
        parse_line_agent("exotel:ws://127.0.0.1:9/?sample-rate=11025")
    assert "exotel:ws://HOST:PORT/PATH[?sample-rate=8000] (Exotel voice streaming" in line_help()


def test_media_plays_clear_empties_and_marks_come_back() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        sid = start["stream_sid"]
        await send_chunks(call, sid, pcm(1.0, rate=8000))
        await call.send({"event": "mark", "stream_sid": sid, "mark": {"name": "one"}})
        await send_chunks(call, sid, pcm(2.0, rate=8000))
        await call.send({"event": "mark", "stream_sid": sid, "mark": {"name": "two"}})
        await call.expect("mark")
        await call.send({"event": "clear", "stream_sid": sid})
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = ExotelLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 2.99, what="3 s of agent audio")
        notices = Notices(line)
        heard = play_all(line, 0.96)
        assert float(np.sqrt(np.mean(heard[800:] ** 2))) == pytest.approx(0.4 / np.sqrt(2), 0.1)
        assert notices.of(NoticeKind.MARK) == []
        play_all(line, 0.064)
        assert notices.wait(NoticeKind.MARK)[0].data == {"name": "one", "cleared": False}
        clear = notices.wait(NoticeKind.CLEAR)[0]
        assert clear.data["dropped_s"] == pytest.approx(3.0 - 1.024, abs=0.01)
        assert notices.wait(NoticeKind.MARK, 2)[1].data == {"name": "two", "cleared": True}
        assert not line.take(FRAME).any()
        wait_until(lambda: len(agent.calls[0].events("mark")) == 2, what="both marks")
        line.close()
    marks = agent.calls[0].events("mark")
    assert [m["mark"]["name"] for m in marks] == ["one", "two"]
    assert all(m["stream_sid"] == line.stream_sid and "sequence_number" in m for m in marks)


def test_the_agents_numbers_are_checked_and_counted_in_notes() -> None:
    numbers = [1, 2, 3, 5, 4, 5, 6, *range(100, 2, -1)]  # gaps, steps back, a repeat
    chunk = pcm(0.1, rate=8000)

    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        for n in numbers:
            await call.send(media(start["stream_sid"], chunk, sequence_number=str(n)))
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = ExotelLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.media_received == len(numbers), what="every chunk")
        time.sleep(0.1)
        notes = [
            n for n in Notices(line).of(NoticeKind.AGENT_EVENT) if n.data["kind"] == "sequence"
        ]
        check = line._numbers
        assert (check.gaps, check.missing, check.back, check.repeated) == (2, 94, 98, 1)
        # the first anomaly, the 10th, the 100th: bounded however many come
        assert [n.data["count"] for n in notes] == [1, 10, 100]
        assert "97 out of order, 1 repeated, 94 missing" in notes[-1].detail
        assert Notices(line).of(NoticeKind.ERROR) == []
        assert line.state is LineState.OPEN
        line.close()


def test_sequence_check_counts() -> None:
    check = SequenceCheck("n")
    assert [check.see(n) for n in (7, 8, 8, 10, 9, 11)] == [
        None,
        None,
        "repeated",
        "gap",
        "back",
        None,
    ]
    assert (check.repeated, check.back, check.gaps, check.missing) == (1, 1, 1, 1)


def test_hostile_messages_are_bounded_and_the_call_goes_on() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        sid = start["stream_sid"]
        for i in range(3000):
            await call.send({"event": f"evt-{i}", "stream_sid": sid})
        await call.send(media(sid, b"\x01" * 333))  # not a multiple of 320, odd
        await call.send(media(sid, b"\x01" * 100))  # not a multiple of 320
        await call.send(media("MZ-other", pcm(0.04, rate=8000)))
        await call.send({"event": "media", "media": {"payload": "@@not base64@@"}})
        await call.send({"event": "media", "media": {}})
        await call.send({"event": "mark", "mark": {"name": 3}})
        await call.send(b"binary")
        await call.send("\x1b]0;title\x07")
        await call.send(json.dumps({"no": "event"}))
        await call.send({"event": "mark", "stream_sid": sid, "mark": {"name": "m" * 5000}})
        for _ in range(300):
            await call.send(media(sid, pcm(0.1, rate=8000)))
            await call.send({"event": "mark", "stream_sid": sid, "mark": {"name": "m" * 1000}})
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = ExotelLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.media_received >= 303, timeout=20, what="the audio")
        time.sleep(0.2)
        seen = Notices(line).seen + line.notices()
        errors = [n for n in seen if n.kind is NoticeKind.ERROR]
        kinds = {n.data["kind"] for n in errors}
        assert kinds >= {"unknown_event", "stream_sid", "media_base64", "media_no_payload",
                         "mark_no_name", "binary", "not_json", "no_event", "odd_bytes",
                         "mark_limit", "mark_too_long"}  # fmt: skip
        assert len(errors) <= 4 * len(kinds)
        assert all(len(n.detail) <= 500 and "\x1b" not in n.detail for n in seen)
        sizes = [n for n in seen if n.kind is NoticeKind.AGENT_EVENT]
        assert [n.data["count"] for n in sizes if n.data["kind"] == "chunk_size"] == [1]
        assert line.state is LineState.OPEN
        line.close()


def test_pipecats_exotel_serializer_reads_what_cutin_sends_and_cutin_honours_its_clear() -> None:
    from pipecat.frames.frames import InputAudioRawFrame, InterruptionFrame, TTSAudioRawFrame
    from pipecat.serializers.exotel import ExotelFrameSerializer

    got: list[object] = []

    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        rate = int(start["start"]["media_format"]["sample_rate"])
        serializer = ExotelFrameSerializer(
            stream_sid=start["start"]["stream_sid"],
            call_sid=start["start"]["call_sid"],
            params=ExotelFrameSerializer.InputParams(exotel_sample_rate=rate),
        )

        class Setup:
            audio_in_sample_rate = 16000

        await serializer.setup(cast(Any, Setup()))  # only the rate is read
        speech = float_to_pcm16(tone(300, 2.0, rate=16000))
        out = await serializer.serialize(TTSAudioRawFrame(speech, 16000, 1))
        assert isinstance(out, str)
        await call.send(out)
        while len(got) < 3:
            frame = await serializer.deserialize(json.dumps(await call.expect("media")))
            if frame is not None:
                got.append(frame)
        clear = await serializer.serialize(InterruptionFrame())
        assert isinstance(clear, str)
        await call.send(clear)
        await asyncio.sleep(0.2)
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = ExotelLine(f"{agent.url}?sample-rate=16000", rate=16000)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 1.9, what="the bot's audio")
        for _ in range(20):
            line.send(tone(440, FRAME / LINE_RATE))
        clear = Notices(line).wait(NoticeKind.CLEAR)[0]
        assert clear.data["dropped_s"] > 1.5
        assert Notices(line).of(NoticeKind.ERROR) == []
        line.close()
    assert all(isinstance(f, InputAudioRawFrame) for f in got)
    assert sum(len(cast(InputAudioRawFrame, f).audio) for f in got) == 3 * 3200
