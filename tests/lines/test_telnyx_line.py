"""TelnyxLine against a scripted Telnyx-side agent (a real websockets server), and the
reorder window it plays numbered frames through."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, LineError, LineState, NoticeKind
from sessions.lines.codec import (
    StreamResampler,
    decode_alaw,
    decode_ulaw,
    encode_alaw,
    encode_ulaw,
)
from sessions.lines.factory import parse_line_agent
from sessions.lines.registry import transport
from sessions.lines.reorder import RESYNC, ReorderWindow
from sessions.lines.telnyx import TelnyxLine, make_line
from tests.lines.test_twilio_line import FRAME, hold, tone, wait_until
from tests.lines.wire_agent import Notices
from tests.support.twilio_agent import AgentCall, TwilioAgent


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def level_frame(code: int) -> bytes:
    """20 ms of one μ-law code: a flat level the playout shows as a plateau."""
    return bytes([code]) * 160


def test_handshake_media_and_stop_are_telnyxs() -> None:
    with TwilioAgent(hold) as agent:
        line = TelnyxLine(agent.url + "?codec=PCMU", custom_parameters={"scenario": "x"})
        line.open(timeout_s=5)
        notices = Notices(line)
        assert "PCMU" in notices.of(NoticeKind.OPEN)[0].detail
        fmt = notices.of(NoticeKind.FORMAT)[0].data
        assert (fmt["encoding"], fmt["rate"], fmt["channels"]) == ("PCMU", 8000, 1)
        audio = tone(440, 1.0)
        for i in range(0, audio.size, FRAME):
            line.send(audio[i : i + FRAME])
        wait_until(lambda: len(agent.calls[0].events("media")) >= 50, what="50 media")
        line.close()
        assert line.state is LineState.CLOSED
        wait_until(lambda: bool(agent.calls[0].events("stop")), what="stop")
    call = agent.calls[0]
    connected, start = call.received[0].message, call.received[1].message
    assert connected == {"event": "connected", "version": "1.0.0"}
    assert start["sequence_number"] == "1" and start["stream_id"] == line.stream_id
    body = start["start"]
    assert body["call_control_id"] == line.call_control_id
    assert body["media_format"] == {"encoding": "PCMU", "sample_rate": 8000, "channels": 1}
    assert body["custom_parameters"] == {"scenario": "x"}
    media = call.events("media")
    assert len(media) == 50
    assert [int(m["sequence_number"]) for m in media] == list(range(2, 52))
    assert [int(m["media"]["chunk"]) for m in media] == list(range(1, 51))
    assert [int(m["media"]["timestamp"]) for m in media] == list(range(0, 1000, 20))
    assert all(m["stream_id"] == line.stream_id and m["media"]["track"] == "inbound" for m in media)
    payload = b"".join(base64.b64decode(m["media"]["payload"]) for m in media)
    expected = StreamResampler(LINE_RATE, 8000).process(audio)
    assert np.max(np.abs(decode_ulaw(payload) - expected)) < 0.03
    stop = call.events("stop")[0]
    assert stop["stream_id"] == line.stream_id and int(stop["sequence_number"]) == 52
    assert stop["stop"]["call_control_id"] == line.call_control_id


def test_pcma_both_ways_and_the_wrong_law_is_reported_once() -> None:
    voice = tone(300, 0.6, rate=8000)

    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        assert start["start"]["media_format"]["encoding"] == "PCMA"
        await call.send({"event": "media", "media": {"payload": b64(encode_alaw(voice))}})
        for _ in range(3):  # μ-law silence in an A-law stream: a misconfigured agent
            await call.send({"event": "media", "media": {"payload": b64(b"\xff" * 160)}})
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = make_line(parse_line_agent(f"telnyx:{agent.url}?codec=pcma"), None)  # type: ignore[arg-type]
        assert isinstance(line, TelnyxLine) and line.codec == "PCMA"
        line.open(timeout_s=5)
        notices = Notices(line)
        assert "A-law" in notices.of(NoticeKind.FORMAT)[0].detail
        audio = tone(440, 0.5)
        for i in range(0, audio.size, FRAME):
            line.send(audio[i : i + FRAME])
        errors = notices.wait(NoticeKind.ERROR)
        wait_until(lambda: line.media_received == 4, what="4 media")
        heard = np.concatenate([line.take(FRAME) for _ in range(30)])
        wait_until(lambda: len(agent.calls[0].events("media")) >= 25, what="caller media")
        line.close()
    assert len(errors) == 1 and "PCMU" in errors[0].detail and "PCMA" in errors[0].detail
    # The agent's A-law voice plays as the voice (at 16 kHz, after the resampler's delay).
    expected = StreamResampler(8000, LINE_RATE).process(decode_alaw(encode_alaw(voice)))
    assert np.max(np.abs(heard[: expected.size] - expected)) < 0.03
    # The caller's audio went out as A-law.
    sent = b"".join(base64.b64decode(m["media"]["payload"]) for m in agent.calls[0].events("media"))
    mine = StreamResampler(LINE_RATE, 8000).process(audio)[: len(sent)]
    assert np.max(np.abs(decode_alaw(sent)[: mine.size] - mine)) < 0.03


def test_clear_empties_the_buffer_and_marks_come_back_when_played_or_cleared() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("start")
        await call.send({"event": "mark", "mark": {"name": "nothing-queued"}})
        await call.expect("mark")
        speech = encode_ulaw(tone(300, 2.0, rate=8000))
        await call.send({"event": "media", "media": {"payload": b64(speech[:800])}})
        await call.send({"event": "mark", "mark": {"name": "after-100ms"}})
        await call.send({"event": "media", "media": {"payload": b64(speech[800:])}})
        await call.send({"event": "mark", "mark": {"name": "at-the-end"}})
        await call.expect("mark", timeout=5)  # after-100ms, once played
        await call.send({"event": "clear"})
        await call.expect("mark", timeout=5)  # at-the-end, returned by the clear
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TelnyxLine(agent.url)
        line.open(timeout_s=5)
        notices = Notices(line)
        wait_until(lambda: len(agent.calls[0].events("mark")) == 1, what="the first mark")
        wait_until(lambda: line.media_received == 2, what="the speech")
        for _ in range(10):  # 320 ms played: past the first marked 100 ms
            line.take(FRAME)
        clear = notices.wait(NoticeKind.CLEAR)[0]
        wait_until(lambda: len(agent.calls[0].events("mark")) == 3, what="three marks")
        assert float(np.max(np.abs(line.take(FRAME)))) == 0.0
        line.close()
    marks = agent.calls[0].events("mark")
    assert [m["mark"]["name"] for m in marks] == ["nothing-queued", "after-100ms", "at-the-end"]
    assert all(m["stream_id"] == line.stream_id and "sequence_number" in m for m in marks)
    assert 1.6 < clear.data["dropped_s"] < 1.95  # 2 s queued, 100-320 ms played
    cleared = [n.data for n in notices.of(NoticeKind.MARK)]
    assert [d["cleared"] for d in cleared] == [False, False, True]


def test_numbered_frames_play_in_number_order_and_late_ones_are_counted() -> None:
    # Levels by number, sent 1 3 2 5 4 6 (two swaps), 2 again (a repeat), then 8..12
    # (7 is missing: after 4 held, the gap is skipped) and 7 at last (too late).
    order = (1, 3, 2, 5, 4, 6, 2, 8, 9, 10, 11, 12, 7)
    played_order = (1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12)

    async def script(call: AgentCall) -> None:
        await call.expect("start")
        for n in order:
            await call.send(
                {
                    "event": "media",
                    "sequence_number": str(10 + n),
                    "media": {"payload": b64(level_frame(0xFF - 16 * n))},
                }
            )
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TelnyxLine(agent.url)
        line.open(timeout_s=5)
        notices = Notices(line)
        wait_until(lambda: line.by_sequence.counts.late == 1, what="the late frame")
        assert line.media_received == len(played_order)
        played = np.concatenate([line.take(FRAME) for _ in range(12)])
        line.close()
    counts = line.by_sequence.counts
    assert (counts.reordered, counts.repeated, counts.missing, counts.late) == (2, 1, 1, 1)
    # Each frame is a 20 ms plateau (320 samples at 16 kHz), played in number order.
    middles = [float(played[320 * k + 160]) for k in range(len(played_order))]
    expected = [float(decode_ulaw(bytes([0xFF - 16 * n]))[0]) for n in played_order]
    assert np.allclose(middles, expected, atol=0.01), (middles, expected)
    notes = [n for n in notices.of(NoticeKind.AGENT_EVENT) if n.data["kind"] == "order_sequence"]
    assert notes and notes[0].data["count"] == 1  # said at the first, not at every one
    assert "put back in order" in notes[0].detail


def test_a_missing_frame_is_waited_for_briefly_then_skipped() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("start")
        for n in (1, 2, 4):  # 3 never comes
            await call.send(
                {"event": "media", "media": {"chunk": str(n), "payload": b64(level_frame(0xF0))}}
            )
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TelnyxLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.media_received == 2 and line.by_chunk.holding, what="a hold")
        wait_until(
            lambda: (line.take(FRAME) is not None) and line.media_received == 3,
            timeout=2.0,
            what="the held frame released by age",
        )
        line.close()
    assert line.by_chunk.counts.missing == 1


def test_hostile_messages_are_bounded_notices_and_the_call_goes_on() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("start")
        for bad in (b"\x00\x01", "not json", "[1]", json.dumps({"no": "event"})):
            await call.send(bad)
        for i in range(10):
            await call.send({"event": f"weird{i}"})
        await call.send({"event": "media", "media": {"payload": "@@@"}})
        await call.send({"event": "mark", "mark": {"name": "x" * 5000}})
        silence = b64(b"\xff" * 160)
        await call.send({"event": "media", "stream_id": "other", "media": {"payload": silence}})
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TelnyxLine(agent.url)
        line.open(timeout_s=5)
        notices = Notices(line)
        wait_until(lambda: line.media_received == 1, what="the last media")
        assert line.state is LineState.OPEN
        line.close()
    errors = notices.of(NoticeKind.ERROR)
    kinds = {e.data["kind"] for e in errors}
    assert {"binary", "not_json", "not_object", "no_event", "media_base64"} <= kinds
    assert {"mark_too_long", "stream_id"} <= kinds
    assert len(errors) < 20  # 10 unknown event names are not 10 notices each time
    assert agent.calls[0].events("mark") == []


def test_urls_are_checked_before_dialling() -> None:
    assert parse_line_agent("telnyx:wss://h:1/p?codec=PCMA").kind == "telnyx"
    for bad, words in (
        ("telnyx:ws://h/p?codec=G722", "codec must be PCMU or PCMA"),
        ("telnyx:ws://h/p?codec=PCMA&codec=PCMU", "given 2 times"),
        ("telnyx:http://h/p", "telnyx:ws://HOST:PORT/PATH"),
    ):
        with pytest.raises(LineError, match=words):
            parse_line_agent(bad)
    assert transport("telnyx").audio == "PCMU or PCMA 8 kHz"


def test_the_reorder_window() -> None:
    w: ReorderWindow[int] = ReorderWindow(depth=3, max_wait_s=0.1)
    assert w.push(5, 5, 0.0) == [5]
    assert w.push(7, 7, 0.0) == [] and w.holding
    assert w.push(6, 6, 0.0) == [6, 7]
    assert w.push(6, 6, 0.0) == []  # repeated
    assert w.push(None, 0, 0.0) == [0]  # unnumbered: straight through
    assert [w.push(n, n, 1.0) for n in (10, 11, 12)] == [[], [], []]
    assert w.push(13, 13, 1.0) == [10, 11, 12, 13]  # four held > depth: 8 and 9 skipped
    assert w.push(9, 9, 1.0) == []  # late
    assert w.push(15, 15, 2.0) == [] and w.due(2.05) == [] and w.due(2.2) == [15]
    assert w.push(16 + RESYNC + 1, 1, 3.0) == [1]  # a jump: the numbering starts over
    assert w.push(3, 3, 3.0) == [3]  # and back: another restart, not a late frame
    c = w.counts
    assert (c.reordered, c.repeated, c.late, c.missing, c.restarts) == (1, 1, 1, 3, 2)
    w.push(10, 10, 4.0)
    assert w.holding and w.drop() == 1 and not w.holding
    assert w.push(11, 11, 4.0) == [11]
