"""PcmLine (raw PCM16 over a WebSocket) against a scripted agent on 127.0.0.1.

The truth is known by construction: what the agent sends is a tone of known samples,
so what the line plays can be compared sample for sample.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
from functools import partial

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, Line, LineError, LineState, NoticeKind
from sessions.lines.codec import StreamResampler
from sessions.lines.factory import open_line, parse_line_agent
from sessions.lines.pcm import PcmLine
from sessions.lines.registry import line_help, transport
from sessions.lines.wire_audio import PlayedMarks, WireFrames
from sessions.speech.wav import float_to_pcm16, pcm16_to_float
from tests.lines.test_twilio_line import FRAME, tone, wait_until
from tests.lines.wire_agent import AgentCall, Notices, WireAgent, binary, sizes


async def hold(call: AgentCall) -> None:
    await call.wait_closed(timeout=30.0)


def pcm(seconds: float, rate: int = LINE_RATE, freq: float = 300.0) -> bytes:
    return float_to_pcm16(tone(freq, seconds, rate=rate))


def play_all(line: Line, seconds: float) -> np.ndarray:
    return np.concatenate([line.take(FRAME) for _ in range(int(seconds * LINE_RATE) // FRAME)])


def test_the_rate_is_read_from_the_url_and_anything_else_is_one_clear_line() -> None:
    from cutin_tui.cli.call_cmd import agent_choice

    assert transport("pcm").rate_of("ws://h:1/a") == 16000
    assert transport("pcm").rate_of("ws://h:1/a?x=1&rate=8000") == 8000
    assert transport("pcm").rate_of("ws://h:1/a?rate=24000") == 24000
    for bad in ("44100", "16k", "", "-8000", "99999999999"):
        with pytest.raises(LineError, match=r"rate must be 8000, 16000 or 24000 \(Hz\)") as err:
            parse_line_agent(f"pcm:ws://127.0.0.1:9/a?rate={bad}")
        assert "\n" not in str(err.value)
    with pytest.raises(argparse.ArgumentTypeError, match="rate must be"):
        agent_choice("pcm:ws://127.0.0.1:9/a?rate=11025")
    with pytest.raises(argparse.ArgumentTypeError, match="given 2 times"):
        agent_choice("pcm:ws://127.0.0.1:9/a?rate=8000&rate=16000")
    assert agent_choice("pcm:ws://127.0.0.1:9/a?rate=8000") == "pcm:ws://127.0.0.1:9/a?rate=8000"
    assert "pcm:ws://HOST:PORT/PATH[?rate=16000] (raw PCM16 WebSocket, PCM16" in line_help()


def test_caller_audio_goes_out_as_20ms_frames_at_the_stated_rate() -> None:
    for rate, frame in ((16000, 640), (8000, 320), (24000, 960)):
        with WireAgent(hold) as agent:
            line = open_line(parse_line_agent(f"pcm:{agent.url}?rate={rate}"), timeout_s=5)
            assert isinstance(line, PcmLine) and line.rate == rate
            notices = Notices(line)
            fmt = notices.of(NoticeKind.FORMAT)[0].data
            assert (fmt["encoding"], fmt["rate"], fmt["channels"]) == ("pcm16", rate, 1)
            audio = tone(440, 1.0)
            for i in range(0, audio.size, FRAME):
                line.send(audio[i : i + FRAME])
            wait_until(
                lambda: bool(agent.calls) and len(sizes(agent.calls[0])) >= 50, what="50 frames"
            )
            line.close()
        call = agent.calls[0]
        assert set(sizes(call)) == {frame} and len(sizes(call)) == 50, rate
        assert all("binary" in r.message for r in call.received)  # no hello, nothing else
        heard = pcm16_to_float(binary(call))
        expected = StreamResampler(LINE_RATE, rate).process(audio)
        snr = 10 * np.log10(np.sum(expected**2) / np.sum((heard - expected) ** 2))
        assert snr > 40, rate


def test_agent_audio_plays_sample_for_sample_in_messages_of_any_size() -> None:
    """A stream cut at odd byte offsets still plays aligned; each odd message is an
    ERROR notice (three, then counted), the call goes on."""
    sent = pcm(1.0)
    cuts = [0, 1001, 1002, 5003, 5004, 9001, 9002, 15001, 15002, len(sent)]  # 4 odd

    async def script(call: AgentCall) -> None:
        for a, b in itertools.pairwise(cuts):
            await call.send(sent[a:b])
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = PcmLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 0.99, what="1 s of agent audio")
        heard = play_all(line, 1.0)
        expected = pcm16_to_float(sent)[: heard.size]
        assert np.array_equal(heard, expected)
        errors = Notices(line).of(NoticeKind.ERROR)
        assert [e.data["kind"] for e in errors] == ["odd_bytes"] * 3 + ["odd_bytes"]
        assert errors[-1].data.get("suppressed") is True
        assert line.state is LineState.OPEN
        line.close()


def test_a_yield_is_the_audio_ending_or_an_optional_clear() -> None:
    async def script(call: AgentCall) -> None:
        await call.send(pcm(0.5))  # says something, then simply stops
        await call.expect("go")
        await call.send(pcm(2.0))
        await call.send(json.dumps({"type": "clear"}))
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = PcmLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 0.49, what="0.5 s")
        heard = play_all(line, 1.0)
        loud = np.flatnonzero(np.abs(heard) > 0.01)
        assert loud[-1] < 0.5 * LINE_RATE <= loud[-1] + 64  # its audio simply ends
        notices = Notices(line)
        assert notices.of(NoticeKind.CLEAR) == []
        line._post(("text", {"event": "go"}))
        clear = notices.wait(NoticeKind.CLEAR)[0]
        assert 0.0 < clear.data["dropped_s"] <= 2.0
        assert line.playout.buffered_s == 0 and not line.take(FRAME).any()
        line.close()


def test_hostile_text_is_reported_bounded_and_the_line_stays_open() -> None:
    async def script(call: AgentCall) -> None:
        for i in range(2000):
            await call.send(json.dumps({"type": f"weird-{i}"}))
        await call.send("not json \x1b]0;owned\x07")
        await call.send("[1, 2]")
        await call.send(json.dumps({"no": "type"}))
        await call.send(b"")
        await call.send("[" * 100_000)
        await call.send(pcm(0.2))
        await call.wait_closed()

    with WireAgent(script) as agent:
        line = PcmLine(agent.url)
        line.open(timeout_s=5)
        wait_until(lambda: line.playout.buffered_s >= 0.19, timeout=15, what="the audio")
        seen = Notices(line).of(NoticeKind.ERROR)
        assert len(seen) <= 6 * 4, len(seen)  # a few kinds, each shown 3 times, then counted
        assert all("\x1b" not in n.detail and "\x07" not in n.detail for n in seen)
        assert {n.data["kind"] for n in seen} >= {"not_json", "not_object", "no_type"}
        assert line.state is LineState.OPEN
        line.close()


def _not_open(line: PcmLine) -> bool:
    return line.state is not LineState.OPEN


def test_the_agent_closing_cleanly_or_not() -> None:
    async def bye(call: AgentCall) -> None:
        await asyncio.sleep(0.3)  # after the line is open
        await call.ws.close(1000, "done")

    async def broken(call: AgentCall) -> None:
        await asyncio.sleep(0.3)
        await call.ws.close(1011, "internal error")

    for script, state, code in ((bye, LineState.CLOSED, 1000), (broken, LineState.FAILED, 1011)):
        with WireAgent(script) as agent:
            line = PcmLine(agent.url)
            line.open(timeout_s=5)
            wait_until(partial(_not_open, line), what="the close")
            assert line.state is state
            kind = NoticeKind.CLOSED if state is LineState.CLOSED else NoticeKind.FAILED
            (end,) = Notices(line).of(kind)
            assert end.data == {"by": "agent", "code": code}
            line.close()


def test_cutin_hangs_up_with_a_normal_close() -> None:
    codes: list[int | None] = []

    async def script(call: AgentCall) -> None:
        await call.wait_closed()
        codes.append(call.ws.close_code)

    with WireAgent(script) as agent:
        line = PcmLine(agent.url)
        line.open(timeout_s=5)
        line.close()
        wait_until(lambda: bool(codes), what="the agent to see the close")
    assert codes == [1000]


def test_24k_agent_audio_is_resampled_and_secrets_stay_out() -> None:
    sent = tone(1000, 1.0, rate=24000)

    async def script(call: AgentCall) -> None:
        await call.send(float_to_pcm16(sent))
        await call.wait_closed()

    with WireAgent(script) as agent:
        url = f"ws://user:hunter22@127.0.0.1:{agent.port}/media?rate=24000&token=s3cr3t-t0k3n"
        line = open_line(parse_line_agent(f"pcm:{url}"), timeout_s=5)
        assert isinstance(line, PcmLine) and line.rate == 24000
        wait_until(lambda: line.playout.buffered_s >= 0.99, what="the audio")
        heard = play_all(line, 1.0)
        expected = StreamResampler(24000, LINE_RATE).process(sent)[: heard.size]
        assert np.max(np.abs(heard - expected)) < 1e-3
        texts = [line.target, *(n.detail for n in Notices(line).of(NoticeKind.OPEN))]
        line.close()
    assert all("hunter22" not in t and "s3cr3t-t0k3n" not in t for t in texts)


def test_pcm16_wire_frames_cut_any_input_length_in_order() -> None:
    out = WireFrames(16000, 640)
    audio = tone(300, 0.5)
    frames: list[bytes] = []
    cuts = (1, 7, 319, 320, 321, 4000, audio.size)
    for size in cuts:
        frames += out.frames(audio[:size])
    assert {len(f) for f in frames} == {640}
    joined = b"".join(frames)
    expected = float_to_pcm16(np.concatenate([audio[:s] for s in cuts]))
    assert len(expected) - len(joined) < 640
    assert joined == expected[: len(joined)]


def test_played_marks_wait_for_their_audio_and_are_bounded() -> None:
    from sessions.lines.base import PlayoutBuffer

    playout = PlayoutBuffer()
    marks: PlayedMarks[str] = PlayedMarks(playout, limit=3)
    playout.push(np.ones(1000, dtype=np.float32))
    assert marks.add("a")
    playout.push(np.ones(1000, dtype=np.float32))
    assert marks.add("b") and marks.add("c") and not marks.add("d")
    playout.take(999)
    assert marks.due() == []
    playout.take(1)
    assert marks.due() == ["a"]
    assert marks.due(cleared=True) == ["b", "c"] and not marks


def test_a_refused_line_is_one_clear_line() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LineError) as err:
        open_line(parse_line_agent(f"pcm:ws://127.0.0.1:{port}/"), timeout_s=3)
    assert str(err.value).startswith("pcm: cannot connect to ws://127.0.0.1:")
    assert "refused" in str(err.value) and "\n" not in str(err.value)


def test_binary_from_the_agent_never_blocks_the_caller() -> None:
    """A flood of agent audio (far beyond real time) is played or dropped, never queued
    without end; send() stays cheap meanwhile."""

    async def script(call: AgentCall) -> None:
        from websockets.exceptions import ConnectionClosed

        chunk = pcm(1.0)
        with contextlib.suppress(ConnectionClosed):  # cutin may hang up first
            for _ in range(200):  # 200 s of audio as fast as the socket takes it
                await call.send(chunk)
                await asyncio.sleep(0)
            await call.wait_closed()

    with WireAgent(script) as agent:
        line = PcmLine(agent.url)
        line.open(timeout_s=5)
        for _ in range(50):
            line.send(np.zeros(FRAME, dtype=np.float32))
        wait_until(lambda: line.bytes_received >= 200 * 32000 or line.messages_dropped > 0,
                   timeout=20, what="the flood")  # fmt: skip
        assert line.playout.buffered_s <= 120.0
        line.close()


def test_cutin_call_and_simulate_help_name_the_pcm16_lines() -> None:
    import argparse as ap

    from cutin_tui.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, ap._SubParsersAction))
    for command in ("call", "simulate"):
        text = " ".join(commands.choices[command].format_help().split())
        for form in (
            "exotel:ws://HOST:PORT/PATH[?sample-rate=8000] (Exotel voice streaming",
            "vonage:ws://HOST:PORT/PATH[?rate=16000] (Vonage Voice WebSocket",
            "pcm:ws://HOST:PORT/PATH[?rate=16000] (raw PCM16 WebSocket",
        ):
            assert form in text, (command, form)
