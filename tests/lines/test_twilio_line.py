"""TwilioLine against a scripted in-test Twilio agent (a real websockets server)."""

from __future__ import annotations

import base64
import socket
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, LineError, LineState, NoticeKind
from sessions.lines.codec import StreamResampler, decode_ulaw, encode_ulaw
from sessions.lines.twilio import TwilioLine, looks_like_pcm16, redact_url
from tests.lines.wire_agent import Notices
from tests.support.twilio_agent import AgentCall, TwilioAgent

FRAME = 512  # the call loop's 32 ms frame


def tone(freq: float, seconds: float, rate: int = LINE_RATE, level: float = 0.4) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (level * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def ulaw_tone(seconds: float, freq: float = 300.0) -> bytes:
    return encode_ulaw(tone(freq, seconds, rate=8000))


def wait_until(check: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what or check}")


async def hold(call: AgentCall) -> None:
    await call.wait_closed(timeout=30.0)


def test_handshake_messages_and_fields() -> None:
    with TwilioAgent(hold) as agent:
        assert TwilioLine(agent.url).state is LineState.CONNECTING
        line = TwilioLine(agent.url, custom_parameters={"scenario": "retail"})
        line.open(timeout_s=5)
        assert line.state is LineState.OPEN
        notices = Notices(line)
        assert notices.of(NoticeKind.OPEN)[0].data["stream_sid"] == line.stream_sid
        fmt = notices.of(NoticeKind.FORMAT)[0].data
        assert (fmt["encoding"], fmt["rate"], fmt["channels"]) == ("audio/x-mulaw", 8000, 1)
        wait_until(lambda: len(agent.calls) == 1 and len(agent.calls[0].received) >= 2)
        line.close()
        assert line.state is LineState.CLOSED
        wait_until(lambda: bool(agent.calls[0].events("stop")), what="stop")
    call = agent.calls[0]
    connected, start = call.received[0].message, call.received[1].message
    assert connected == {"event": "connected", "protocol": "Call", "version": "1.0.0"}
    assert start["event"] == "start" and start["sequenceNumber"] == "1"
    body = start["start"]
    assert start["streamSid"] == body["streamSid"] == line.stream_sid
    assert body["streamSid"].startswith("MZ") and len(body["streamSid"]) == 34
    assert body["callSid"].startswith("CA") and body["accountSid"].startswith("AC")
    assert body["tracks"] == ["inbound"]
    assert body["mediaFormat"] == {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    assert body["customParameters"] == {"scenario": "retail"}
    stop = call.events("stop")[0]
    assert stop["streamSid"] == line.stream_sid
    assert stop["stop"] == {"accountSid": body["accountSid"], "callSid": body["callSid"]}
    assert int(stop["sequenceNumber"]) == 2  # nothing was sent in between
    assert [n.data["by"] for n in Notices(line).of(NoticeKind.CLOSED)] in ([], ["cutin"])


def test_media_is_20ms_chunks_with_increasing_numbers() -> None:
    with TwilioAgent(hold) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        audio = tone(440, 1.0)
        for i in range(0, audio.size, FRAME):
            line.send(audio[i : i + FRAME])
        wait_until(lambda: len(agent.calls[0].events("media")) >= 50, what="50 media messages")
        line.close()
        wait_until(lambda: bool(agent.calls[0].events("stop")), what="stop")
    call = agent.calls[0]
    media = call.events("media")
    assert len(media) == 50  # 16 000 samples → 8000 μ-law bytes → 50 × 160
    assert [int(m["sequenceNumber"]) for m in media] == list(range(2, 52))
    assert [int(m["media"]["chunk"]) for m in media] == list(range(1, 51))
    assert [int(m["media"]["timestamp"]) for m in media] == list(range(0, 1000, 20))
    assert all(
        m["media"]["track"] == "inbound" and m["streamSid"] == line.stream_sid for m in media
    )
    payloads = [base64.b64decode(m["media"]["payload"]) for m in media]
    assert {len(p) for p in payloads} == {160}
    assert int(call.events("stop")[0]["sequenceNumber"]) == 52
    # What arrives is the tone at 8 kHz: compare with the same tone downsampled.
    heard = decode_ulaw(b"".join(payloads))
    expected = StreamResampler(LINE_RATE, 8000).process(audio)
    snr = 10 * np.log10(np.sum(expected**2) / np.sum((heard - expected) ** 2))
    assert snr > 25


def test_send_is_cheap_and_thread_safe() -> None:
    with TwilioAgent(hold) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        frame = tone(300, FRAME / LINE_RATE)
        timings: list[float] = []

        def sender() -> None:
            for _ in range(50):
                t0 = time.perf_counter()
                line.send(frame)
                timings.append(time.perf_counter() - t0)

        threads = [threading.Thread(target=sender) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # 100 frames of 512 samples = 25 600 μ-law bytes = 160 chunks exactly.
        wait_until(lambda: len(agent.calls[0].events("media")) == 160, what="160 chunks")
        line.close()
    sequence = [int(m["sequenceNumber"]) for m in agent.calls[0].events("media")]
    assert sequence == sorted(sequence) == list(range(2, 162))
    print(f"\nsend(): median {np.median(timings) * 1e6:.0f} µs, max {max(timings) * 1e6:.0f} µs")
    assert float(np.median(timings)) < 0.002


def test_agent_media_plays_and_clear_empties_the_buffer() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        await call.send_media(start["streamSid"], ulaw_tone(2.0))
        await call.expect("media")  # the line's first caller audio: our cue
        await call.send({"event": "clear", "streamSid": start["streamSid"]})
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 1.99, what="2 s of agent audio")
        played = np.concatenate([line.take(FRAME) for _ in range(16)])  # 0.512 s
        rms = float(np.sqrt(np.mean(played[800:] ** 2)))
        assert rms == pytest.approx(0.4 / np.sqrt(2), rel=0.1)
        line.send(np.zeros(2 * FRAME, dtype=np.float32))
        notices = Notices(line)
        clear = notices.wait(NoticeKind.CLEAR)[0]
        assert clear.data["dropped_s"] == pytest.approx(2.0 - 0.512, abs=0.01)
        assert "cleared 1.49 s" in clear.detail
        assert line.playout.buffered_s == 0
        assert not line.take(FRAME).any()
        line.close()


def test_mark_is_echoed_once_the_audio_before_it_has_played() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        sid = start["streamSid"]
        await call.send_media(sid, ulaw_tone(1.0))
        await call.send({"event": "mark", "streamSid": sid, "mark": {"name": "first"}})
        await call.send_media(sid, ulaw_tone(1.0))
        await call.send({"event": "mark", "streamSid": sid, "mark": {"name": "second"}})
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 1.99, what="2 s of agent audio")
        time.sleep(0.1)  # both marks have arrived
        notices = Notices(line)
        for _ in range(31):  # 0.992 s: not yet
            line.take(FRAME)
        time.sleep(0.1)
        assert notices.of(NoticeKind.MARK) == []
        assert agent.calls[0].events("mark") == []
        line.take(FRAME)  # 1.024 s: the first second is played
        mark = notices.wait(NoticeKind.MARK)[0]
        assert mark.data == {"name": "first", "cleared": False}
        wait_until(lambda: len(agent.calls[0].events("mark")) == 1, what="the echo")
        echo = agent.calls[0].events("mark")[0]
        assert echo["mark"] == {"name": "first"} and echo["streamSid"] == line.stream_sid
        assert int(echo["sequenceNumber"]) == 2
        time.sleep(0.1)
        assert len(agent.calls[0].events("mark")) == 1  # "second" waits for its audio
        line.close()


def test_clear_sends_back_every_pending_mark() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        sid = start["streamSid"]
        await call.send_media(sid, ulaw_tone(1.0))
        await call.send({"event": "mark", "streamSid": sid, "mark": {"name": "end"}})
        await call.send({"event": "clear", "streamSid": sid})
        await call.expect("mark")
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        notices = Notices(line)
        assert notices.wait(NoticeKind.MARK)[0].data == {"name": "end", "cleared": True}
        wait_until(lambda: bool(agent.calls[0].events("mark")), what="the echo")
        line.close()


def test_malformed_and_unknown_messages_are_notices_not_exceptions() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        sid = start["streamSid"]
        await call.send("{not json")
        await call.send(b"\x00\x01binary")
        await call.send('["a", "list"]')
        await call.send({"event": "dance", "streamSid": sid})
        await call.send({"event": "media", "streamSid": sid, "media": {"payload": "@@@"}})
        await call.send({"event": "media", "streamSid": sid})
        await call.send({"event": "mark", "streamSid": sid, "mark": {}})
        for _ in range(5):
            await call.send("still not json")
        await call.send_media(sid, ulaw_tone(0.1))  # and the call goes on
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 0.09, what="the media after the junk")
        notices = Notices(line)
        errors = notices.of(NoticeKind.ERROR)
        kinds = [n.data["kind"] for n in errors]
        assert kinds[:7] == [
            "not_json",
            "binary",
            "not_object",
            "event:dance",
            "media_base64",
            "media_no_payload",
            "mark_no_name",
        ]
        assert kinds.count("not_json") == 4  # three shown, then one "further ones are counted"
        assert errors[-1].data.get("suppressed") is True
        assert "'{not json'" in errors[0].detail
        assert line.state is LineState.OPEN
        line.close()


def test_pcm16_sent_as_mulaw_is_reported_once() -> None:
    pcm = (tone(200, 0.5, rate=8000, level=0.01) * 32767).astype("<i2").tobytes()
    assert looks_like_pcm16(pcm) and not looks_like_pcm16(ulaw_tone(0.5))

    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        await call.send_media(start["streamSid"], pcm)
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.media_received >= 4, what="the media")
        errors = Notices(line).of(NoticeKind.ERROR)
        assert [n.data["kind"] for n in errors] == ["format"]
        assert "16-bit PCM" in errors[0].detail
        line.close()


def test_agent_closing_is_a_closed_notice_with_its_code() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("start")
        await call.ws.close(4000, "goodbye")

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        closed = Notices(line).wait(NoticeKind.CLOSED)[0]
        assert closed.data["by"] == "agent" and closed.data["code"] == 4000
        assert "code 4000: goodbye" in closed.detail
        assert line.state is LineState.CLOSED
        line.send(tone(300, 0.1))  # a no-op now
        line.close()
        assert Notices(line).of(NoticeKind.CLOSED) == []  # no second notice


def test_a_dropped_connection_is_failed() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("start")
        call.ws.transport.abort()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        failed = Notices(line).wait(NoticeKind.FAILED)[0]
        assert "dropped" in failed.detail
        assert line.state is LineState.FAILED
        line.close()
        assert line.state is LineState.FAILED


def one_line_error(url: str, timeout_s: float = 3.0) -> str:
    line = TwilioLine(url)
    with pytest.raises(LineError) as caught:
        line.open(timeout_s=timeout_s)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("twilio: ")
    assert line.state is LineState.FAILED
    return message


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connect_refused_is_one_clear_line() -> None:
    port = free_port()
    message = one_line_error(f"ws://127.0.0.1:{port}/media")
    assert f"ws://127.0.0.1:{port}/media" in message and "refused" in message


def test_wrong_scheme_is_one_clear_line() -> None:
    message = one_line_error("http://127.0.0.1:9/media")
    assert "ws:// or wss://" in message and "http://127.0.0.1:9/media" in message
    assert "ws:// or wss://" in one_line_error("127.0.0.1:9")


def test_http_rejection_is_one_clear_line() -> None:
    with TwilioAgent(reject_status=403) as agent:
        message = one_line_error(agent.url)
    assert "HTTP 403" in message and agent.url in message


def test_no_answer_is_a_timeout() -> None:
    with socket.socket() as server:  # accepts TCP, never answers the upgrade
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        t0 = time.monotonic()
        message = one_line_error(f"ws://127.0.0.1:{port}/", timeout_s=1.0)
        assert time.monotonic() - t0 < 4.0
    assert "no answer within 1 s" in message


def test_unknown_host_is_one_clear_line() -> None:
    message = one_line_error("ws://no-such-host.invalid/media", timeout_s=3.0)
    assert "no-such-host.invalid" in message
    assert "not found" in message or "no answer" in message


def test_secrets_never_reach_target_or_errors() -> None:
    url = "wss://alice:s3cret@127.0.0.1:1/media?token=abc123&room=7"
    assert redact_url(url) == "wss://127.0.0.1:1/media?token=***&room=***"
    line = TwilioLine(url)
    assert "s3cret" not in line.target and "abc123" not in line.target
    with pytest.raises(LineError) as caught:
        line.open(timeout_s=2.0)
    assert "s3cret" not in str(caught.value) and "abc123" not in str(caught.value)
    assert "alice" not in str(caught.value)


def test_a_url_without_host_or_with_a_bad_port_is_one_clear_line() -> None:
    assert "not a valid WebSocket URL" in one_line_error("ws://127.0.0.1:99999/media")
    assert "not a valid WebSocket URL" in one_line_error("ws:///media")


def test_another_streams_sid_is_reported_once_and_its_audio_still_played() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("start")
        await call.send_media("MZ-someone-else", ulaw_tone(0.2))
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 0.19, what="the media")
        errors = Notices(line).of(NoticeKind.ERROR)
        assert [n.data["kind"] for n in errors] == ["stream_sid"]
        assert "'MZ-someone-else'" in errors[0].detail
        line.close()
