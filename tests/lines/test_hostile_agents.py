"""Lines a hostile agent cannot break (issue 21): each misbehaviour found by sending cutin
misbehaving agents, replayed by a real agent on loopback.

- Memory: one media message near the 1 MiB cap (over 90 s of μ-law) or a Realtime
  delta of as much audio once took hundreds of megabytes to gigabytes (the resampler
  built its whole window matrix at once); bigger ones (8 MiB) are refused by the socket.
  Peak memory is measured: tracemalloc in process, the child's own ``ru_maxrss`` for
  ``cutin simulate``, against a run with a well-behaved agent.
- Escapes: an agent's error text, event names and close reason reach no terminal, log
  or report raw (every string of the log is checked decoded, not only its bytes).
- An abnormal close (1011) mid-answer is a failed call (exit 1, end ``line_failed``) on
  every WebSocket line, never a clean hang-up.
- Floods: 10,000 invented event names, 5,000 malformed Realtime events, 50 mark names
  of 1 MiB: capped per kind and in total, counted in the line's ``summary``; the log
  stays small.
- Agent audio beyond the playout buffer: one ``note`` saying so, the total in the summary.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.sync.server import ServerConnection, serve

from sessions.lines.base import LINE_RATE, LineError, LineLimits, LineNotice, LineState, NoticeKind
from sessions.lines.codec import BLOCK_SAMPLES, StreamResampler
from sessions.lines.notices import ERROR_KINDS, ERRORS_PER_KIND, MAX_TEXT
from sessions.lines.realtime import RealtimeLine
from sessions.lines.registry import LineOptions, transports
from sessions.lines.socket_line import SocketLine
from sessions.lines.twilio import TwilioLine
from tests.support.cli import run_cutin
from tests.support.hostile_agents import (
    ESCAPES,
    Measured,
    audio_delta,
    log_events,
    log_strings,
    mark,
    media,
    pcm24_voice,
    raw_controls,
    realtime_hello,
    run_measured,
    run_tui,
    simulate_argv,
    ulaw_voice,
)
from tests.support.twilio_agent import AgentCall, TwilioAgent

pytestmark = pytest.mark.filterwarnings(
    "ignore:connect\\(\\) must be used as a context manager:DeprecationWarning"
)

NEAR_CAP_ULAW = 760_000
"""μ-law bytes in one media message just under the 1 MiB frame cap once base64'd
(95 s of audio): what the resampler once turned into a 500 MB window matrix."""
NEAR_CAP_PCM24 = 760_000
"""Bytes of 24 kHz PCM16 in one Realtime delta just under the cap (16 s)."""


# ---- the resampler ----------------------------------------------------------------------


class _WholeWindow:
    """The resampler as it first was, written out plainly (the reference): the input
    zero-stuffed, one window of taps per output kept, each window's dot product."""

    def __init__(self, r: StreamResampler) -> None:
        self.taps, self.up, self.down = r._taps, r.up, r.down
        self.history = np.zeros(self.taps.size - 1)
        self.phase = 0

    def process(self, samples: np.ndarray) -> np.ndarray:
        x = np.asarray(samples, dtype=np.float64).reshape(-1)
        hist = self.history.size
        stuffed = np.zeros(hist + x.size * self.up)
        stuffed[:hist] = self.history
        stuffed[hist :: self.up] = x
        keep = np.arange(self.phase, x.size * self.up, self.down)
        windows = np.lib.stride_tricks.sliding_window_view(stuffed, self.taps.size)
        out = windows[keep] @ self.taps[::-1]
        self.history = stuffed[stuffed.size - hist :].copy()
        self.phase = (self.phase - x.size * self.up) % self.down
        return np.asarray(out, dtype=np.float32)


@pytest.mark.parametrize(
    ("rate_in", "rate_out", "long_s"),
    [
        (8000, 16000, 10),
        (16000, 8000, 5),
        (24000, 16000, 5),
        (16000, 24000, 5),
        (48000, 16000, 5),
        (16000, 48000, 5),
        (44100, 16000, 0.1),
    ],
)
def test_the_streaming_resampler_gives_the_same_samples(
    rate_in: int, rate_out: int, long_s: float
) -> None:
    """On normal input (20 ms frames, then one chunk of many blocks) the polyphase
    resampler's output equals the plain whole-window one's (to float rounding: the sums
    run in another order). (44.1 kHz has 8,821 taps: the reference needs 112 MB for a
    tenth of a second, so it gets only that.)"""
    rng = np.random.default_rng(21)
    t = np.arange(int(rate_in * (2 + long_s))) / rate_in
    audio = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(t.size)
    audio = audio.astype(np.float32)
    new = StreamResampler(rate_in, rate_out)
    old = _WholeWindow(new)
    frame = rate_in // 50
    for i in range(0, rate_in * 2, frame):
        chunk = audio[i : i + frame]
        np.testing.assert_allclose(new.process(chunk), old.process(chunk), rtol=0, atol=1e-6)
    rest = audio[rate_in * 2 :]
    if long_s >= 1:
        assert rest.size > BLOCK_SAMPLES  # more than one block
    got, want = new.process(rest), old.process(rest)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("rate_in", "size"), [(8000, 2 * NEAR_CAP_ULAW), (24000, NEAR_CAP_PCM24 // 2)]
)
def test_resampling_a_huge_message_stays_within_a_few_megabytes(rate_in: int, size: int) -> None:
    """The decoded audio of one near-cap message: the old resampler peaked at 500 MB
    (μ-law, 8 → 16 kHz) and 120 MB (Realtime, 24 → 16 kHz); now a few blocks' worth
    beyond the input and output arrays themselves."""
    audio = np.zeros(size, dtype=np.float32)
    audio[::7] = 0.25
    expected_out = size * LINE_RATE // rate_in
    arrays_mb = (size * 8 + expected_out * 4 * 2) / 2**20  # float64 input, output + blocks
    tracemalloc.start()
    try:
        out = StreamResampler(rate_in, LINE_RATE).process(audio)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert abs(out.size - expected_out) <= 2
    assert peak / 2**20 < arrays_mb + 16, f"peak {peak / 2**20:.0f} MB"


# ---- a line on loopback -----------------------------------------------------------------


def _collect(line: Any, until: NoticeKind, timeout: float = 20.0) -> list[LineNotice]:
    seen: list[LineNotice] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen += line.notices()
        if any(n.kind is until for n in seen):
            return seen
        time.sleep(0.02)
    raise AssertionError(f"no {until} notice within {timeout} s: {[n.kind for n in seen]}")


def _assert_inert(notices: list[LineNotice]) -> None:
    for n in notices:
        assert not raw_controls(n.detail), n.detail
        assert not raw_controls(json.dumps(n.data, ensure_ascii=False)), n.data


def test_a_realtime_delta_of_8_mib_is_refused_before_it_is_read() -> None:
    """The finding's 8 MiB delta (1.5 GB): refused by the socket (code 1009), one clear
    error, the line failed; the line never holds the message."""

    big = json.dumps(audio_delta(b"\x01\x00" * (4 << 20))).encode()  # built before measuring

    async def script(call: AgentCall) -> None:
        await realtime_hello(call)
        await asyncio.sleep(0.3)
        try:
            await call.send(big)
            await call.wait_closed(10)
        except Exception:
            pass  # cutin drops the line while the message is in flight

    with TwilioAgent(script) as agent:
        base = f"http://127.0.0.1:{agent.port}/v1"
        line = RealtimeLine(base_url=base, api_key="sk-test-not-a-key")
        tracemalloc.start()
        try:
            line.open(timeout_s=10)
            notices = _collect(line, NoticeKind.FAILED)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            line.close()
    failed = next(n for n in notices if n.kind is NoticeKind.FAILED)
    assert failed.data["code"] == 1009 and "1 MiB" in failed.detail
    assert line.playout.received == 0
    # The agent shares this process: its send buffers are in the peak (the old line,
    # which read the message, peaked at 1.5 GB).
    assert peak / 2**20 < 48, f"peak {peak / 2**20:.0f} MB for a refused message"


def test_fifty_mark_names_of_a_mebibyte_are_refused_and_logged_small() -> None:
    """The finding's 50 marks of 1 MiB names made a 105 MB log: each name over
    ``max_mark_chars`` is refused (not echoed, nothing of it kept), three errors then
    counted; a short mark still works."""
    name = "m" * ((1 << 20) - 200)

    async def script(call: AgentCall) -> None:
        start = await call.expect("start")
        sid = start["streamSid"]
        for _ in range(50):
            await call.send(mark(sid, name))
        await call.send(mark(sid, "short"))
        await call.wait_closed(30)

    limits = LineLimits(max_bytes_per_s=256 << 20)  # the rate budget would drop most
    with TwilioAgent(script) as agent:
        line = TwilioLine(agent.url, limits=limits)
        line.open(timeout_s=10)
        seen: list[LineNotice] = []
        deadline = time.monotonic() + 30
        while not any(n.kind is NoticeKind.MARK for n in seen) and time.monotonic() < deadline:
            seen += line.notices()
            time.sleep(0.02)
        line.close()
        seen += line.notices()
        echoed = [m["mark"]["name"] for m in agent.calls[0].events("mark")]
    assert echoed == ["short"]
    errors = [n for n in seen if n.kind is NoticeKind.ERROR]
    assert [e.data["kind"] for e in errors] == ["mark_too_long"] * (ERRORS_PER_KIND + 1)
    (summary,) = [n for n in seen if n.kind is NoticeKind.SUMMARY]
    assert summary.data["suppressed"] == {"error:mark_too_long": 50 - ERRORS_PER_KIND}
    assert seen[-1].kind is NoticeKind.CLOSED and seen[-2] is summary
    total = sum(len(n.detail) + len(json.dumps(n.data)) for n in seen)
    assert total < 20_000


def test_notice_data_is_bounded_inert_and_finite() -> None:
    """What an agent puts in an event reaches the notice's data cut, inert and finite:
    a megabyte string, escape sequences in values and keys, NaN, deep nesting."""

    async def script(call: AgentCall) -> None:
        await realtime_hello(call)
        deep: Any = "bottom"
        for _ in range(50):
            deep = {"d": deep}
        await call.send(
            '{"type": "rate_limits.updated", "big": "' + "x" * 900_000 + '", '
            '"nan": NaN, "inf": Infinity, "deep": '
            + json.dumps(deep)
            + ", "
            + json.dumps({"esc" + ESCAPES: "v" + ESCAPES, "rate_limits": list(range(1000))})[1:]
        )
        await call.wait_closed(30)

    with TwilioAgent(script) as agent:
        base = f"http://127.0.0.1:{agent.port}/v1"
        line = RealtimeLine(base_url=base, api_key="sk-test-not-a-key")
        line.open(timeout_s=10)
        seen: list[LineNotice] = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            seen += line.notices()
            if any(n.detail == "rate_limits.updated" for n in seen):
                break
            time.sleep(0.02)
        line.close()
    (event,) = [n for n in seen if n.detail == "rate_limits.updated"]
    data = event.data
    assert len(data["big"]) == MAX_TEXT and data["big"].endswith("…")
    assert data["nan"] is None and data["inf"] is None
    assert ("v" + ESCAPES).replace("\x1b", "␛")[:5] in json.dumps(data, ensure_ascii=False)
    assert len(json.dumps(data)) < 10_000
    _assert_inert(seen)


# ---- every WebSocket line: an abnormal close is a failure ---------------------------------


def _socket_transports() -> list[str]:
    out = []
    for t in transports():
        if t.prefix and not t.parser and "ws" in t.schemes:
            out.append(t.kind)
    return out


@dataclass
class _Closer:
    """A WebSocket server that takes what the line sends for ``after_s``, then closes
    with ``code`` and a reason full of escape sequences."""

    code: int
    after_s: float = 0.8

    def __post_init__(self) -> None:
        self._server = serve(self._handler, "127.0.0.1", 0)
        self.port = self._server.socket.getsockname()[1]
        import threading

        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _handler(self, ws: ServerConnection) -> None:
        deadline = time.monotonic() + self.after_s
        try:
            while time.monotonic() < deadline:
                try:
                    ws.recv(timeout=max(0.01, deadline - time.monotonic()))
                except TimeoutError:
                    break
            ws.close(self.code, "internal " + ESCAPES)
        except Exception:
            pass

    def close(self) -> None:
        self._server.shutdown()
        self._thread.join(5)


@pytest.fixture
def closer_1011() -> Iterator[_Closer]:
    server = _Closer(1011)
    yield server
    server.close()


@pytest.mark.parametrize("kind", _socket_transports())
def test_an_abnormal_close_is_a_failure_on_every_websocket_line(
    kind: str, closer_1011: _Closer
) -> None:
    """Every registered WebSocket transport (each a SocketLine) ends FAILED, with the
    code and an inert reason, when its agent closes with 1011; never CLOSED."""
    from sessions.lines.registry import transport

    t = transport(kind)
    url = f"ws://127.0.0.1:{closer_1011.port}/agent"
    line = t.build(t.parse(f"{t.prefix}{url}"), LineOptions())
    assert isinstance(line, SocketLine)
    try:
        line.open(timeout_s=5)
    except LineError as exc:  # a transport that waits for the agent's hello
        assert "1011" in str(exc) and not raw_controls(str(exc))
        assert line.state is LineState.FAILED
        return
    line.send(np.zeros(LINE_RATE // 10, dtype=np.float32))
    notices = _collect(line, NoticeKind.FAILED)
    line.close()
    failed = next(n for n in notices if n.kind is NoticeKind.FAILED)
    assert failed.data == {"by": "agent", "code": 1011}
    assert "abnormally" in failed.detail and "␛]0;pwned␇" in failed.detail
    assert not [n for n in notices if n.kind is NoticeKind.CLOSED]
    assert line.state is LineState.FAILED
    _assert_inert(notices)


# ---- cutin simulate against hostile agents, end to end -----------------------------------


@dataclass
class Run:
    measured: Measured
    log: Path
    events: list[dict[str, Any]]
    report: str

    def of(self, type_: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            e for e in self.events if e["type"] == type_ and (kind is None or e.get("kind") == kind)
        ]


def _simulate(
    agent: str,
    out: Path,
    env: dict[str, str],
    max_seconds: float = 30.0,
    extra: tuple[str, ...] = (),
) -> Run:
    """``cutin simulate`` of one call against ``agent``, then ``cutin report`` (Markdown
    and JSON) of its log."""
    argv = [*simulate_argv(agent, out, max_seconds), *extra]
    measured = run_measured(argv, env, timeout=240)
    logs = sorted(out.glob("*.jsonl*"))
    assert len(logs) == 1, (measured.returncode, measured.stderr[-2000:])
    report = run_cutin("report", str(logs[0]), env=env, timeout=120)
    assert report.returncode == 0, report.stderr
    report_json = run_cutin("report", "--format", "json", str(logs[0]), env=env, timeout=120)
    assert report_json.returncode == 0, report_json.stderr
    return Run(measured, logs[0], log_events(logs[0]), report.stdout + report_json.stdout)


def _assert_nothing_raw(run: Run) -> None:
    """No escape byte in stdout, stderr, the report (Markdown and JSON) or any string
    of the log, decoded."""
    for where, text in (("stdout", run.measured.stdout), ("stderr", run.measured.stderr)):
        assert not raw_controls(text), (where, text[-500:])
    assert not raw_controls(run.report), run.report[-500:]
    assert not raw_controls(run.log.read_text(encoding="utf-8"))
    raw = [s for s in log_strings(run.log) if raw_controls(s)]
    assert not raw, raw[:3]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from tests.conftest import REPO_ROOT

    cache = tmp_path_factory.mktemp("cache")
    path = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "CUTIN_CACHE_DIR": str(cache),
        "PYTHONPATH": str(REPO_ROOT) + (os.pathsep + path if path else ""),
    }


@pytest.fixture(scope="module")
def calm_run(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Run:
    """A well-behaved Twilio agent: says a sentence's worth of audio, hangs up (1000)."""

    async def script(call: AgentCall) -> None:
        start = await call.expect("start", timeout=60)
        await call.send_media(start["streamSid"], ulaw_voice(2.0), chunk_bytes=160)
        await asyncio.sleep(3.0)
        await call.ws.close(1000, "bye")

    with TwilioAgent(script) as agent:
        return _simulate(f"twilio:{agent.url}", tmp_path_factory.mktemp("calm"), env)


@pytest.fixture(scope="module")
def flood_run(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Run:
    """A Twilio agent that floods: six near-cap media messages at once (up to 570 s of
    audio for a 120 s playout buffer), 10,000 invented event names (escape sequences in
    some), 50 marks of 100 KiB names, 12 MiB of padded messages at once (over the
    4 MiB/s budget); then hangs up (1000)."""

    async def script(call: AgentCall) -> None:
        start = await call.expect("start", timeout=60)
        sid = start["streamSid"]
        big = ulaw_voice(NEAR_CAP_ULAW / 8000)
        for _ in range(6):
            await call.send(media(sid, big))
        # The budget counts bytes as cutin reads them: what comes within a second of an
        # over-budget burst is dropped too. Time to take the burst in, so the names are not.
        await asyncio.sleep(4.0)
        for i in range(10_000):
            name = f"teleport{ESCAPES}{i}" if i % 2 else f"teleport-{i}"
            await call.send({"event": name, "streamSid": sid})
        await asyncio.sleep(1.2)
        for i in range(50):
            await call.send(mark(sid, f"{i}-" + "n" * (100 << 10)))
            if i == 24:
                await asyncio.sleep(1.2)
        # Last, so that what the budget drops (messages are counted as cutin reads them,
        # which may lag on a loaded machine) is only this: 12 MiB at once, cheap to parse.
        await asyncio.sleep(2.0)
        padding = json.dumps({"event": "padding", "streamSid": sid, "pad": "p" * (64 << 10)})
        for _ in range(192):
            await call.send(padding)
        await asyncio.sleep(2.0)
        await call.ws.close(1000, "bye")

    with TwilioAgent(script) as agent:
        return _simulate(f"twilio:{agent.url}", tmp_path_factory.mktemp("flood"), env, 60.0)


@pytest.fixture(scope="module")
def abnormal_run(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Run:
    """A Twilio agent that closes with 1011 (and escapes in the reason) mid-answer."""

    async def script(call: AgentCall) -> None:
        start = await call.expect("start", timeout=60)
        await call.send_media(start["streamSid"], ulaw_voice(6.0), chunk_bytes=8000)
        await asyncio.sleep(1.5)  # 6 s queued, 1.5 s played: mid-answer
        await call.ws.close(1011, "internal error " + ESCAPES)

    with TwilioAgent(script) as agent:
        return _simulate(f"twilio:{agent.url}", tmp_path_factory.mktemp("abnormal"), env)


@pytest.fixture(scope="module")
def realtime_run(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Run:
    """A Realtime agent: a near-cap audio delta, an ``error`` event full of escape
    sequences, 5,000 malformed events (not JSON, bad base64, invented names), then a
    1011 close with escapes in its reason mid-answer."""

    async def script(call: AgentCall) -> None:
        await realtime_hello(call)
        await asyncio.sleep(0.5)
        await call.send(audio_delta(pcm24_voice(NEAR_CAP_PCM24 / 48_000)))
        error = {"type": "invalid_request_error" + ESCAPES, "code": "x" + ESCAPES,
                 "message": "bad things " + ESCAPES}  # fmt: skip
        await call.send({"type": "error", "event_id": "e2", "error": error})
        for i in range(5_000):
            if i % 3 == 0:
                await call.send(f"not json {ESCAPES} {i}")
            elif i % 3 == 1:
                await call.send({"type": "response.output_audio.delta", "delta": "!!" + ESCAPES})
            else:
                await call.send({"type": f"weird.{ESCAPES}.{i}", "event_id": ESCAPES})
        await asyncio.sleep(1.5)
        await call.ws.close(1011, "server fault " + ESCAPES)

    with TwilioAgent(script) as agent:
        base = f"http://127.0.0.1:{agent.port}/v1"
        out = tmp_path_factory.mktemp("realtime")
        return _simulate("realtime", out, env, extra=("--base-url", base))


def test_a_well_behaved_agent_is_a_clean_call(calm_run: Run) -> None:
    """The control: the same harness with an agent that hangs up normally is a clean
    call (exit 0, end agent_hangup), with no summary (nothing was held back)."""
    assert calm_run.measured.returncode == 0, calm_run.measured.stderr
    assert calm_run.events[-1]["type"] == "end" and calm_run.events[-1]["reason"] == "agent_hangup"
    assert not calm_run.of("line", "summary") and not calm_run.of("error")


def test_near_cap_media_messages_cost_no_more_memory_than_a_calm_call(
    flood_run: Run, calm_run: Run
) -> None:
    """Four near-cap media messages (the old resampler: +500 MB each at its peak) and
    the rest of the flood: cutin's peak stays within 150 MB of a calm call's."""
    extra = flood_run.measured.peak_mb - calm_run.measured.peak_mb
    assert extra < 150, (
        f"flood {flood_run.measured.peak_mb:.0f} MB, calm {calm_run.measured.peak_mb:.0f} MB"
    )


def test_the_byte_rate_budget_drops_messages_with_a_logged_error(flood_run: Run) -> None:
    rate = [e for e in flood_run.of("line", "error") if e["data"].get("kind") == "rate"]
    assert rate and "in one second" in rate[0]["detail"]
    (summary,) = flood_run.of("line", "summary")
    assert summary["data"]["messages_dropped"] >= 2
    assert flood_run.measured.returncode == 1  # a call with errors is filed as failed


def test_invented_event_names_are_capped_and_counted(flood_run: Run) -> None:
    """10,000 distinct unknown event names once logged 10,000 events: now at most
    ERROR_KINDS kinds of a few each, the rest counted in the summary."""
    unknown = [e for e in flood_run.of("line", "error") if "unknown event" in e["detail"]]
    names = {e["data"]["kind"] for e in unknown}
    assert 0 < len(names) <= ERROR_KINDS and len(unknown) <= ERROR_KINDS * ERRORS_PER_KIND
    (summary,) = flood_run.of("line", "summary")
    assert summary["data"]["suppressed"]["error:event:*"] > 5_000  # names past the 20th
    assert summary["data"]["suppressed_total"] + len(unknown) >= 10_000  # every one counted
    assert len(flood_run.of("error")) < 100
    assert flood_run.events[-1]["reason"] == "agent_hangup"


def test_mark_names_of_100_kib_leave_the_log_small(flood_run: Run) -> None:
    too_long = [
        e for e in flood_run.of("line", "error") if e["data"].get("kind") == "mark_too_long"
    ]
    assert len(too_long) == ERRORS_PER_KIND + 1
    assert flood_run.log.stat().st_size < 400_000, flood_run.log.stat().st_size


def test_audio_beyond_the_playout_buffer_is_noted_once(flood_run: Run) -> None:
    """380 s of audio for a 120 s buffer: one note when dropping starts, the total in
    the summary."""
    (note,) = flood_run.of("line", "note")
    assert note["data"]["kind"] == "playout_full" and "120 s playout buffer" in note["detail"]
    (summary,) = flood_run.of("line", "summary")
    assert summary["data"]["audio_dropped_s"] > 200


def test_a_flood_reaches_no_terminal_log_or_report_raw(flood_run: Run) -> None:
    _assert_nothing_raw(flood_run)
    assert "␛]0;pwned␇" in flood_run.log.read_text(encoding="utf-8")  # shown, not acted on


def test_an_abnormal_close_mid_answer_is_a_failed_call(abnormal_run: Run) -> None:
    """The finding: 1011 mid-answer filed as a clean call (exit 0, agent_hangup)."""
    run = abnormal_run
    assert run.measured.returncode == 1
    assert run.events[-1]["type"] == "end" and run.events[-1]["reason"] == "line_failed"
    (failed,) = run.of("line", "failed")
    assert failed["data"] == {"by": "agent", "code": 1011}
    assert [e for e in run.of("error") if "1011" in e["message"]]
    assert "1011" in run.measured.stderr and "failed" in run.measured.stderr
    assert run.log.name.endswith(".failed")
    _assert_nothing_raw(run)


def test_a_hostile_realtime_agent_is_contained(realtime_run: Run, calm_run: Run) -> None:
    """Escapes in an error event and a close reason, 5,000 malformed events (the finding:
    4,593 logged uncapped), a near-cap delta, a 1011 close: a failed call, a small log,
    every error kind capped and counted, nothing raw anywhere, memory near a calm call's."""
    run = realtime_run
    assert run.measured.returncode == 1, run.measured.stderr
    assert run.events[-1]["reason"] == "line_failed"
    (failed,) = run.of("line", "failed")
    assert failed["data"]["code"] == 1011 and "␛]0;pwned␇" in failed["detail"]
    agent_errors = [e for e in run.of("line", "error") if e["detail"].startswith("agent error")]
    assert agent_errors and "␛]0;pwned␇" in agent_errors[0]["detail"]
    assert len(run.of("error")) < 100 and len(run.of("line")) < 200
    (summary,) = run.of("line", "summary")
    assert summary["data"]["suppressed_total"] >= 4_500
    assert run.log.stat().st_size < 400_000
    _assert_nothing_raw(run)
    assert run.measured.peak_mb - calm_run.measured.peak_mb < 150


def test_cutin_call_exits_1_when_its_line_closes_abnormally(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """``cutin call`` (the Textual app, on a pseudo-terminal) against the agent that
    closes with 1011 mid-answer: the log ends ``line_failed``, and after ctrl+q the
    program says so in one line and exits 1 (it exited 0)."""

    async def script(call: AgentCall) -> None:
        start = await call.expect("start", timeout=120)
        await call.send_media(start["streamSid"], ulaw_voice(6.0), chunk_bytes=8000)
        await asyncio.sleep(1.5)
        await call.ws.close(1011, "internal error " + ESCAPES)

    sessions = tmp_path / "sessions"

    def ended() -> bool:
        logs = list(sessions.glob("*.jsonl"))
        return bool(logs) and '"type":"end"' in logs[0].read_text(encoding="utf-8")

    with TwilioAgent(script) as agent:
        argv = ["-m", "cutin_tui", "call", "--agent", f"twilio:{agent.url}"]
        code, out = run_tui([*argv, "--sessions-dir", str(sessions)], env, ended)
    (log,) = sessions.glob("*.jsonl")
    events = log_events(log)
    assert events[-1]["type"] == "end" and events[-1]["reason"] == "line_failed"
    assert code == 1, out[-800:]
    tail = out.decode("utf-8", "replace").rpartition("\x1b")[2]  # after the app's own last
    assert "cutin call: the line to the agent failed" in tail
    assert not [s for s in log_strings(log) if raw_controls(s)]


# ---- the 1 MiB rule counts the message, not its deflated frame ----------------------------


def _slow_hello(conn: Any) -> Any:
    """The line's socket with sends that return 0.5 s late: the agent's answer to the
    hello is in before the opener goes on (the race of a loaded machine)."""
    send = conn.send

    def slow(message: str | bytes) -> None:
        send(message)
        time.sleep(0.5)

    conn.send = slow
    return conn


def _one_binary_message(
    size: int, compression: str | None, *, offer: bool | None = None, slow_hello: bool = False
) -> tuple[list[LineNotice], Any]:
    """A Vonage line to an agent (``compression``: permessage-deflate or none) that
    sends one binary message of ``size`` random (incompressible) bytes, then holds.
    ``slow_hello``: the hello's send returns only after the agent has answered it."""
    payload = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    negotiated: list[Any] = []

    def handler(ws: ServerConnection) -> None:
        negotiated.extend(ws.protocol.extensions)
        try:
            ws.recv(timeout=5)  # websocket:connected
            ws.send(payload)
            ws.recv(timeout=10)  # until the line hangs up (or drops the line)
        except Exception:
            pass

    from sessions.lines.vonage import VonageLine

    with serve(handler, "127.0.0.1", 0, compression=compression, max_size=None) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]
        line = VonageLine(f"ws://127.0.0.1:{port}/socket")
        # Deflate is offered only when asked (off by default: audio does not compress).
        line.deflate = compression is not None if offer is None else offer
        if slow_hello:
            connect = line._connect
            line._connect = lambda timeout_s: _slow_hello(connect(timeout_s))  # type: ignore[method-assign]
        line.open(timeout_s=5)
        seen: list[LineNotice] = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and line.playout.received == 0:
            seen += line.notices()
            if any(n.kind is NoticeKind.FAILED for n in seen):
                break
            time.sleep(0.02)
        line.close()
        seen += line.notices()
        server.shutdown()
    return seen, (negotiated, line)


@pytest.mark.parametrize("compression", ["deflate", None])
def test_a_message_of_1_mib_minus_2_passes_even_in_a_bigger_deflated_frame(
    compression: str | None,
) -> None:
    """The finding: 1,048,574 random bytes deflate to a 1,051,125-byte frame, which the
    socket refused (1009) though the message is within 1 MiB. The message is counted
    as sent, so it plays; compressed (negotiated, checked) or not."""
    size = (1 << 20) - 2
    seen, (negotiated, line) = _one_binary_message(size, compression)
    assert bool(negotiated) == (compression == "deflate")
    assert not [n for n in seen if n.kind in (NoticeKind.FAILED, NoticeKind.ERROR)], seen
    assert line.playout.received == size // 2  # every sample, at 16 kHz


def test_a_line_does_not_offer_deflate_unless_asked() -> None:
    """Deflating every 20 ms message costs both ends CPU for base64 audio that barely
    compresses: an agent that would take deflate gets plain frames."""
    _, (negotiated, line) = _one_binary_message(3200, "deflate", offer=False)
    assert negotiated == []
    assert line.playout.received == 1600


@pytest.mark.parametrize("compression", ["deflate", None])
def test_a_message_of_1_mib_plus_1_fails_compressed_or_not(compression: str | None) -> None:
    seen, (negotiated, line) = _one_binary_message((1 << 20) + 1, compression)
    assert bool(negotiated) == (compression == "deflate")
    failed = next(n for n in seen if n.kind is NoticeKind.FAILED)
    assert failed.data["code"] == 1009 and "1 MiB" in failed.detail
    assert line.playout.received == 0


def test_an_oversize_answer_to_the_hello_is_handled_after_the_line_opens() -> None:
    """The agent's oversize message is in before the hello's send returns: it is held
    until open has decided (open succeeds, OPEN first), then ends the line, noticed once."""
    seen, (_, line) = _one_binary_message((1 << 20) + 1, None, slow_hello=True)
    assert seen[0].kind is NoticeKind.OPEN
    (failed,) = [n for n in seen if n.kind is NoticeKind.FAILED]
    assert failed.data["code"] == 1009 and "1 MiB" in failed.detail
    assert line.state is LineState.FAILED and line.playout.received == 0


# ---- Vonage: notify payloads are bounded like mark names ------------------------------------


@pytest.fixture(scope="module")
def vonage_notify_run(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Run:
    """A Vonage agent that queues 30 s of audio, then sends 36 ``notify`` actions whose
    payloads are ~1 MB of ``[[],[],…]`` (21 MB each once parsed), four a second, under
    the 4 MiB/s budget; then one small notify and a clear (the small one must come back
    whole), then hangs up (1000). The finding: every payload kept whole, one call at
    4.0 GB in 53 s."""
    from tests.lines.wire_agent import WireAgent

    flood = json.dumps({"action": "notify", "payload": [[]] * 346_000}, separators=(",", ":"))
    audio = (np.sin(np.arange(16_000 * 30) / 4) * 8000).astype("<i2").tobytes()

    async def script(call: AgentCall) -> None:
        await call.expect("websocket:connected", timeout=60)
        for i in range(0, len(audio), 64_000):
            await call.send(audio[i : i + 64_000])
        await asyncio.sleep(1.1)
        for _ in range(9):
            for _ in range(4):
                await call.send(flood)
            await asyncio.sleep(1.05)
        await call.send(json.dumps({"action": "notify", "payload": {"small": True}}))
        # A clear is answered once cutin has read everything before it (its reader may
        # lag on a loaded machine); it makes the small notify due: echoed, whole.
        await call.send(json.dumps({"action": "clear"}))
        await call.expect("websocket:cleared", timeout=120)
        echoed = await call.expect("websocket:notify", timeout=10)
        assert echoed["payload"] == {"small": True}, echoed
        await call.ws.close(1000, "bye")

    with WireAgent(script) as agent:
        out = tmp_path_factory.mktemp("vonage_notify")
        return _simulate(f"vonage:{agent.url}", out, env, 60.0)


def test_a_vonage_notify_flood_keeps_no_payload_whole(
    vonage_notify_run: Run, calm_run: Run
) -> None:
    """36 payloads of 1 MB (756 MB kept, before: a peak of 847 MB against a calm call's
    284): each one read is over ``max_mark_chars`` and refused (``notify_too_long``,
    three errors then counted; a reader lagging on a loaded machine may take two
    batches in one second, over the byte budget: those are dropped unread, and
    counted), and cutin's peak stays near a calm call's and under 600 MB."""
    run = vonage_notify_run
    too_long = [e for e in run.of("line", "error") if e["data"].get("kind") == "notify_too_long"]
    assert len(too_long) == ERRORS_PER_KIND + 1, run.of("line", "error")
    (summary,) = run.of("line", "summary")
    refused = ERRORS_PER_KIND + summary["data"]["suppressed"]["error:notify_too_long"]
    dropped = summary["data"].get("messages_dropped", 0)
    assert refused >= 24 and refused + dropped == 36, (refused, dropped)
    assert run.events[-1]["reason"] == "agent_hangup", run.of("line", "failed")
    peak, calm = run.measured.peak_mb, calm_run.measured.peak_mb
    assert peak - calm < 100 and peak < 600, f"notify flood {peak:.0f} MB, calm {calm:.0f} MB"
    assert run.log.stat().st_size < 400_000
