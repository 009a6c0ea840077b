"""What every line shares (sessions.lines.socket_line): limits, close codes, and the
registry that makes a new transport one module plus one entry.

Twilio runs against the scripted Twilio agent, Realtime against the loopback Realtime
server through the real ``openai`` client, the toy transport (tests/lines/toy_transport)
against a WebSocket echo server started here.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from websockets.sync.server import ServerConnection, serve

from sessions.lines.base import (
    LINE_RATE,
    Line,
    LineError,
    LineLimits,
    LineNotice,
    LineState,
    NoticeKind,
    is_clean_close,
)
from sessions.lines.factory import (
    LINE_KINDS,
    agent_forms,
    is_line_agent,
    line_kinds,
    open_line,
    parse_line_agent,
)
from sessions.lines.realtime import RealtimeLine
from sessions.lines.registry import LineSpec, register, transport, unregister
from sessions.lines.twilio import TwilioLine
from tests.lines import toy_transport
from tests.support.realtime_server import RealtimeServer
from tests.support.twilio_agent import AgentCall, TwilioAgent

pytestmark = pytest.mark.filterwarnings(
    "ignore:connect\\(\\) must be used as a context manager:DeprecationWarning"
)

FRAME = 512
KEY = "sk-test-not-a-key-7f3a9c"


def wait_for(
    line: Line, kind: NoticeKind, seen: list[LineNotice], timeout: float = 5.0
) -> LineNotice:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen += line.notices()
        found = [n for n in seen if n.kind is kind]
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError(f"no {kind} notice within {timeout} s; saw {seen}")


def errors_of(seen: list[LineNotice], key: str) -> list[LineNotice]:
    return [n for n in seen if n.kind is NoticeKind.ERROR and n.data.get("kind") == key]


def ulaw_payload(n_bytes: int) -> str:
    return base64.b64encode(bytes([0x7F, 0xFF]) * (n_bytes // 2)).decode("ascii")


def test_which_close_codes_are_a_hang_up() -> None:
    for clean in (1000, 1001, 1005, 4000, 4999):
        assert is_clean_close(clean), clean
    assert not is_clean_close(None)
    for code in (1002, 1003, 1006, 1007, 1008, 1009, 1011, 1012, 3000, 3003, 5000):
        assert not is_clean_close(code), code


# -- limits ----------------------------------------------------------------------------


def test_a_frame_announcing_3_mb_fails_the_line_before_its_payload_is_read() -> None:
    """The socket refuses a frame over the cap from its header: the agent here never even
    sends the 3 MB, so a line that waited to read (and buffer) it would never fail."""

    async def script(call: AgentCall) -> None:
        await call.expect("start")
        header = bytes([0x81, 127]) + (3_000_000).to_bytes(8, "big")  # text, unmasked
        call.ws.transport.write(header)
        with contextlib.suppress(Exception):
            await call.wait_closed(timeout=10.0)

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        seen: list[LineNotice] = []
        failed = wait_for(line, NoticeKind.FAILED, seen)
        (error,) = errors_of(seen, "too_big")
        assert "1 MiB limit" in error.detail and error.data["limit_bytes"] == 1 << 20
        assert failed.data["code"] == 1009 and "1 MiB" in failed.detail
        assert line.state is LineState.FAILED
        assert line.playout.received == 0 and line.media_received == 0
        line.close()
        assert line.state is LineState.FAILED


def test_a_3_mb_media_message_is_refused_and_nothing_of_it_is_decoded() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        media = {"payload": ulaw_payload(2_300_000)}  # ~3 MB of base64
        with contextlib.suppress(Exception):  # the line hangs up mid-message
            await call.send({"event": "media", "streamSid": start["streamSid"], "media": media})
            await call.wait_closed(timeout=10.0)

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        seen: list[LineNotice] = []
        wait_for(line, NoticeKind.FAILED, seen)
        assert errors_of(seen, "too_big")
        assert line.playout.received == 0 and line.bytes_received == 0
        assert not [n for n in seen if n.kind is NoticeKind.CLOSED]
        line.close()


def test_over_the_byte_rate_messages_are_dropped_unread_and_the_call_goes_on() -> None:
    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        sid = start["streamSid"]
        await call.send_media(sid, bytes([0x7F]) * 8000)  # 1 s in 25 messages, ~13 KB
        await call.expect("media")  # the caller's audio, sent a second later
        await call.send_media(sid, bytes([0x7F]) * 800)  # a new second: taken again
        await call.wait_closed()

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url, limits=LineLimits(max_bytes_per_s=6144))
        line.open(timeout_s=5)
        seen: list[LineNotice] = []
        rate = wait_for(line, NoticeKind.ERROR, seen)
        assert rate.data["kind"] == "rate" and "over 6 KiB in one second" in rate.detail
        time.sleep(0.3)
        first = line.playout.received
        assert 0 < first < LINE_RATE and line.messages_dropped > 0
        time.sleep(1.0)
        line.send(np.zeros(2 * FRAME, dtype=np.float32))
        deadline = time.monotonic() + 5.0
        while line.playout.received <= first and time.monotonic() < deadline:
            time.sleep(0.01)
        assert line.playout.received == first + 1600  # 0.1 s at 16 kHz
        seen += line.notices()
        rates = errors_of(seen, "rate")
        assert len(rates) <= 4 and all(r.data.get("suppressed") for r in rates[3:])
        assert line.state is LineState.OPEN
        line.close()


MakeRealtime = Callable[[], tuple[RealtimeServer, RealtimeLine]]


@pytest.fixture
def realtime() -> Iterator[MakeRealtime]:
    made: list[tuple[RealtimeServer, RealtimeLine]] = []

    def make() -> tuple[RealtimeServer, RealtimeLine]:
        server = RealtimeServer().start()
        line = RealtimeLine(model="test-realtime", base_url=server.base_url, api_key=KEY)
        made.append((server, line))
        line.open(timeout_s=5.0)
        return server, line

    yield make
    for server, line in made:
        line.close()
        server.close()


def test_realtime_a_message_over_the_cap_fails_the_line(realtime: MakeRealtime) -> None:
    server, line = realtime()
    with contextlib.suppress(Exception):  # the line hangs up mid-message
        server.push_raw(json.dumps({"type": "mystery", "x": "y" * 1_200_000}))
    seen: list[LineNotice] = []
    failed = wait_for(line, NoticeKind.FAILED, seen)
    assert errors_of(seen, "too_big") and failed.data["code"] == 1009
    assert line.state is LineState.FAILED
    assert not [n for n in seen if n.detail == "mystery"]  # never parsed


# -- close codes -----------------------------------------------------------------------


def test_twilio_an_abnormal_close_is_a_failure_not_a_hang_up() -> None:
    async def script(call: AgentCall) -> None:
        await call.expect("start")
        await call.ws.close(1011, "internal error")

    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url)
        line.open(timeout_s=5)
        seen: list[LineNotice] = []
        failed = wait_for(line, NoticeKind.FAILED, seen)
        assert failed.data == {"by": "agent", "code": 1011}
        assert "abnormally (code 1011: internal error)" in failed.detail
        assert line.state is LineState.FAILED
        line.close()
        assert not [n for n in seen + line.notices() if n.kind is NoticeKind.CLOSED]


def test_realtime_an_abnormal_close_is_a_failure_not_a_hang_up(realtime: MakeRealtime) -> None:
    server, line = realtime()
    server.hangup(1011, "boom\x1b[2J")
    seen: list[LineNotice] = []
    failed = wait_for(line, NoticeKind.FAILED, seen)
    assert failed.data == {"by": "agent", "code": 1011}
    assert "code 1011: boom" in failed.detail and "\x1b" not in failed.detail
    assert line.state is LineState.FAILED
    assert not [n for n in seen if n.kind is NoticeKind.CLOSED]


# -- a new transport: one module, one registry entry -----------------------------------


class EchoServer:
    """A WebSocket server that sends every message back (or does what ``on`` says)."""

    def __init__(self, on: Callable[[ServerConnection, str | bytes], bool] | None = None):
        self.on = on
        self._server = serve(self._handler, "127.0.0.1", 0)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/pcm"

    def _handler(self, ws: ServerConnection) -> None:
        with contextlib.suppress(Exception):
            for message in ws:
                if self.on is None or not self.on(ws, message):
                    ws.send(message)

    def close(self) -> None:
        self._server.shutdown()
        self._thread.join(5.0)


@pytest.fixture
def toy() -> Iterator[None]:
    assert "toy" not in line_kinds()
    register(toy_transport.TRANSPORT)
    yield
    unregister("toy")


def test_a_registered_transport_is_an_agent_everywhere(toy: None) -> None:
    from cutin_tui.cli.call_cmd import agent_choice

    url = "ws://127.0.0.1:8765/pcm"
    assert is_line_agent(f"toy:{url}") and "toy" in line_kinds()
    assert "toy" not in LINE_KINDS  # the built-ins only
    assert parse_line_agent(f"toy:{url}") == LineSpec("toy", url)
    assert "toy:ws://HOST:PORT/PATH (or toy:wss://)" in agent_forms()
    assert transport("toy").audio == "PCM16 16 kHz"
    with pytest.raises(LineError, match="a raw PCM16 agent is toy:ws://HOST:PORT/PATH"):
        parse_line_agent("toy:http://127.0.0.1/")
    assert agent_choice(f"toy:{url}") == f"toy:{url}"  # the CLI takes it as is
    with pytest.raises(argparse.ArgumentTypeError, match="port"):
        agent_choice("toy:ws://h:99999/")
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        agent_choice(url)  # a bare URL: which protocol? the toy is one answer
    assert f"toy:{url} (raw PCM16)" in str(refused.value)
    assert "HOST:PORT" not in str(refused.value)  # its forms, not every form there is
    for command in ("call", "simulate"):
        help_text = " ".join(_help(command).split())
        assert "toy:ws://HOST:PORT/PATH (raw PCM16, PCM16 16 kHz)" in help_text, command


def _help(command: str) -> str:
    from cutin_tui.cli import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return str(subparsers.choices[command].format_help())


def test_a_call_to_the_toy_transport_through_the_factory(toy: None) -> None:
    server = EchoServer()
    try:
        line = open_line(parse_line_agent(f"toy:{server.url}"), timeout_s=5.0)
        assert isinstance(line, toy_transport.ToyLine) and line.state is LineState.OPEN
        t = np.arange(LINE_RATE // 2) / LINE_RATE
        tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
        for i in range(0, tone.size, FRAME):
            line.send(tone[i : i + FRAME])
        deadline = time.monotonic() + 5.0
        while line.playout.buffered_s < 0.5 and time.monotonic() < deadline:
            time.sleep(0.01)
        heard = np.concatenate([line.take(FRAME) for _ in range(tone.size // FRAME)])
        assert np.max(np.abs(heard - tone[: heard.size])) < 1e-4
        kinds = [n.kind for n in line.notices()]
        assert kinds[:2] == [NoticeKind.OPEN, NoticeKind.FORMAT]
        line.close()
        (closed,) = line.notices()
        assert closed.kind is NoticeKind.CLOSED and closed.data["by"] == "cutin"
        assert line.state is LineState.CLOSED  # type: ignore[comparison-overlap]
    finally:
        server.close()


def test_the_base_applies_its_limits_and_close_rule_to_the_toy_too(toy: None) -> None:
    def close_on_hello(ws: ServerConnection, message: str | bytes) -> bool:
        if message == "hello":
            ws.close(1011, "broken")
            return True
        return False

    server = EchoServer(close_on_hello)
    try:
        big = toy_transport.ToyLine(server.url, limits=LineLimits(max_message_bytes=4096))
        big.open(timeout_s=5.0)
        big.send(np.zeros(4096, dtype=np.float32))  # 8 KB echoed back: over the cap
        seen: list[LineNotice] = []
        assert wait_for(big, NoticeKind.FAILED, seen).data["code"] == 1009
        assert errors_of(seen, "too_big") and big.playout.received == 0
        big.close()

        line = toy_transport.ToyLine(server.url)
        line.open(timeout_s=5.0)
        line._post("hello")  # the echo server closes with 1011
        failed = wait_for(line, NoticeKind.FAILED, [])
        assert failed.data == {"by": "agent", "code": 1011}
        line.close()
    finally:
        server.close()


def test_each_transports_status_label_is_what_its_line_states(toy: None) -> None:
    from cutin_tui.views.line_view import parse_audio_format

    stated = {
        "twilio": TwilioLine.audio_format,
        "realtime": RealtimeLine.audio_format,
        "toy": toy_transport.ToyLine.audio_format,
    }
    for kind, audio_format in stated.items():
        assert parse_audio_format(audio_format) == transport(kind).audio, kind
