"""RealtimeLine against the loopback Realtime server, through the real ``openai`` client.

The calls here run at real time, 32 ms a frame, the way the call loop drives a line:
``send`` the caller's frame, ``take`` the agent's. The caller is espeak-ng speech, the
server's answer too, so its VAD hears real speech and the playout carries real speech.
"""

from __future__ import annotations

import functools
import json
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, LineError, LineNotice, LineState, NoticeKind
from sessions.lines.realtime import AUDIO_FORMAT, RealtimeLine
from tests.support.realtime_server import WIRE_RATE, RealtimeServer, synthesize_reply

KEY = "sk-test-not-a-key-7f3a9c"
MODEL = "test-realtime"
FRAME = 512
FRAME_S = FRAME / LINE_RATE

# websockets 17 warns that the openai client enters its sync connection without a ``with``.
pytestmark = pytest.mark.filterwarnings(
    "ignore:connect\\(\\) must be used as a context manager:DeprecationWarning"
)
needs_espeak = pytest.mark.skipif(
    shutil.which("espeak-ng") is None,
    reason="espeak-ng is not installed (apt-get install espeak-ng)",
)

FIRST_WORDS = "Hi, I would like to change the delivery address on my order."
BARGE_IN = "Sorry, can I just give you the new one?"
TALKED_ON = "agent talked on after truncate"


@functools.lru_cache(maxsize=4)
def speech(text: str) -> np.ndarray:
    from sessions.speech.tts import EspeakTts

    return EspeakTts().synthesize(text).audio


def reply_reference() -> np.ndarray:
    """The server's answer at 16 kHz, resampled offline (what the playout should carry)."""
    from sessions.speech.wav import pcm16_to_float, resample

    pcm, _ = synthesize_reply()
    return resample(pcm16_to_float(pcm), WIRE_RATE, LINE_RATE)


def rms_db(x: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(np.square(x, dtype=np.float64))) + 1e-12))


@pytest.fixture
def servers() -> Iterator[Callable[..., RealtimeServer]]:
    started: list[RealtimeServer] = []

    def make(**options: object) -> RealtimeServer:
        server = RealtimeServer(**options).start()  # type: ignore[arg-type]
        started.append(server)
        return server

    yield make
    for server in started:
        server.close()


@pytest.fixture
def lines() -> Iterator[Callable[..., RealtimeLine]]:
    made: list[RealtimeLine] = []

    def make(server: RealtimeServer | None = None, **options: object) -> RealtimeLine:
        base_url = options.pop("base_url", server.base_url if server else None)
        options.setdefault("api_key", KEY)
        line = RealtimeLine(model=MODEL, base_url=base_url, **options)  # type: ignore[arg-type]
        made.append(line)
        return line

    yield make
    for line in made:
        line.close()


def assert_no_key(line: RealtimeLine, notices: list[LineNotice]) -> None:
    assert KEY not in line.target
    for notice in notices:
        assert KEY not in notice.detail
        assert KEY not in json.dumps(notice.data, default=str)


# -- driving a call at real time -------------------------------------------------------


@dataclass
class Caller:
    """The caller's side: utterances queued with ``say``, silence between them."""

    queue: list[np.ndarray] = field(default_factory=list)
    onsets: list[float] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)
    _current: np.ndarray | None = None
    _pos: int = 0

    def say(self, audio: np.ndarray) -> None:
        self.queue.append(audio)

    @property
    def speaking(self) -> bool:
        return self._current is not None or bool(self.queue)

    def frame(self) -> np.ndarray:
        if self._current is None and self.queue:
            self._current, self._pos = self.queue.pop(0), 0
            self.onsets.append(time.monotonic())
        if self._current is None:
            return np.zeros(FRAME, dtype=np.float32)
        out = np.zeros(FRAME, dtype=np.float32)
        piece = self._current[self._pos : self._pos + FRAME]
        out[: piece.size] = piece
        self._pos += FRAME
        if self._pos >= self._current.size:
            self._current = None
            self.ends.append(time.monotonic())
        return out


@dataclass
class Run:
    """What a driven call produced, frame by frame."""

    frames: list[np.ndarray] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    """``time.monotonic()`` after each frame was taken."""
    played: list[int] = field(default_factory=list)
    """``line.playout.played`` after each frame."""
    notices: list[tuple[int, LineNotice]] = field(default_factory=list)

    @property
    def audio(self) -> np.ndarray:
        return np.concatenate(self.frames) if self.frames else np.zeros(0, np.float32)

    def of(self, kind: NoticeKind, detail: str | None = None) -> list[tuple[int, LineNotice]]:
        return [
            (i, n)
            for i, n in self.notices
            if n.kind is kind and (detail is None or n.detail == detail)
        ]

    def all_notices(self) -> list[LineNotice]:
        return [n for _, n in self.notices]


def drive(
    line: RealtimeLine,
    caller: Caller,
    seconds: float,
    *,
    hook: Callable[[int, Run], bool | None] | None = None,
    run: Run | None = None,
) -> Run:
    """Run the line at real time for ``seconds`` (or until ``hook`` returns True)."""
    run = run or Run()
    start = time.monotonic()
    for i in range(round(seconds / FRAME_S)):
        line.send(caller.frame())
        run.frames.append(line.take(FRAME))
        run.times.append(time.monotonic())
        run.played.append(line.playout.played)
        index = len(run.frames) - 1
        run.notices.extend((index, n) for n in line.notices())
        if hook is not None and hook(index, run):
            break
        time.sleep(max(0.0, start + (i + 1) * FRAME_S - time.monotonic()))
    return run


def played_s(run: Run) -> float:
    return run.played[-1] / LINE_RATE if run.played else 0.0


def until_played(seconds: float) -> Callable[[int, Run], bool]:
    return lambda _i, run: played_s(run) >= seconds


# -- handshake -------------------------------------------------------------------------


def test_open_connects_at_the_realtime_path_and_sends_the_session_update(servers, lines) -> None:
    server = servers()
    line = lines(
        server, instructions="You are the retail agent.", voice="marin", silence_duration_ms=600
    )
    assert line.target == f"ws://127.0.0.1:{server.port}/v1/realtime?model={MODEL}"
    assert line.audio_format == AUDIO_FORMAT == "audio/pcm;rate=24000"
    assert line.state is LineState.CONNECTING
    line.open(timeout_s=5.0)
    assert line.state is LineState.OPEN

    assert server.paths == [f"/v1/realtime?model={MODEL}"]
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"
    (update,) = server.events("session.update")
    session = update["session"]
    assert session["type"] == "realtime"
    assert session["instructions"] == "You are the retail agent."
    assert session["output_modalities"] == ["audio"]
    pcm = {"type": "audio/pcm", "rate": 24000}
    assert session["audio"]["input"]["format"] == pcm
    assert session["audio"]["output"] == {"format": pcm, "voice": "marin"}
    turn = session["audio"]["input"]["turn_detection"]
    assert turn["type"] == "server_vad"
    assert turn["silence_duration_ms"] == 600
    assert turn["create_response"] is True and turn["interrupt_response"] is True

    notices = line.notices()
    kinds = [n.kind for n in notices]
    assert NoticeKind.OPEN in kinds and NoticeKind.FORMAT in kinds
    (fmt,) = [n for n in notices if n.kind is NoticeKind.FORMAT]
    assert fmt.data["rate"] == 24000 and fmt.data["encoding"] == "pcm16"
    assert fmt.data["session"] == pcm  # as the server confirmed it
    assert "session.updated" in [n.detail for n in notices if n.kind is NoticeKind.AGENT_EVENT]

    line.close()
    line.close()
    assert line.state is LineState.CLOSED
    closing = line.notices()
    assert [n.kind for n in closing] == [NoticeKind.CLOSED]
    assert closing[0].data["by"] == "cutin"
    line.send(np.ones(FRAME, dtype=np.float32))  # a no-op once closed
    assert line.take(FRAME).tolist() == [0.0] * FRAME
    assert_no_key(line, notices + closing)


def test_the_key_comes_from_the_environment_and_stays_out_of_everything(
    servers, lines, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = servers()
    line = lines(server, api_key=None)
    line.open(timeout_s=5.0)
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert KEY not in line.target
    assert_no_key(line, line.notices())


def test_no_key_and_no_base_url_is_a_one_line_error(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LineError, match="OPENAI_API_KEY"):
        RealtimeLine(model=MODEL)


# -- a call ----------------------------------------------------------------------------


@pytest.mark.parametrize("beta_names", [False, True], ids=["ga-events", "beta-events"])
@pytest.mark.slow
@pytest.mark.audio
@needs_espeak
def test_the_callers_speech_gets_the_agents_spoken_reply(servers, lines, beta_names) -> None:
    server = servers(beta_names=beta_names)
    line = lines(server)
    line.open(timeout_s=5.0)
    caller = Caller()
    words = speech(FIRST_WORDS)
    caller.say(words)
    run = drive(line, caller, 10.0, hook=until_played(2.5))
    assert played_s(run) >= 2.5, "no reply audio was played"

    # The server heard the caller: all of it, at 24 kHz, as the same waveform.
    from sessions.speech.wav import pcm16_to_float, resample

    heard = resample(pcm16_to_float(bytes(server.input_audio)), WIRE_RATE, LINE_RATE)
    assert abs(heard.size - len(run.frames) * FRAME) <= 2 * FRAME + 0.1 * LINE_RATE
    lag = _best_lag(words, heard[: words.size + 64], 64)
    assert lag[1] > 0.95, f"caller audio reached the server distorted (corr {lag[1]:.3f})"
    started = server.sent_events("input_audio_buffer.speech_started")
    stopped = server.sent_events("input_audio_buffer.speech_stopped")
    assert len(started) == 1 and len(stopped) == 1

    # What played is the server's espeak answer, sample for sample (a resampler's delay aside).
    out = run.audio
    first = FRAME * next(i for i, p in enumerate(run.played) if p > 0)
    reference = reply_reference()
    shift, corr = _best_lag(reference[: 2 * LINE_RATE], out[first : first + 2 * LINE_RATE + 64], 64)
    assert corr > 0.98, f"played audio differs from the agent's (corr {corr:.3f})"
    assert shift < 32
    from sessions.speech.vad import vad_probs

    probs = vad_probs(out[first : first + 2 * LINE_RATE])
    assert float(np.mean(probs > 0.5)) > 0.6, "the reply does not sound like speech to Silero"

    events = [n.detail for n in run.all_notices() if n.kind is NoticeKind.AGENT_EVENT]
    transcript = (
        "response.audio_transcript.delta"
        if beta_names
        else ("response.output_audio_transcript.delta")
    )
    assert transcript in events
    assert "agent audio started" in events
    assert not run.of(NoticeKind.ERROR)

    audio_end = caller.ends[0]
    (_, audio_started), *_ = run.of(NoticeKind.AGENT_EVENT, "agent audio started")
    (_, vad_stop), *_ = run.of(NoticeKind.AGENT_EVENT, "input_audio_buffer.speech_stopped")
    first_heard = run.times[first // FRAME]
    print(
        f"\nreply latency ({'beta' if beta_names else 'GA'}): caller audio end → speech_stopped "
        f"{vad_stop.mono - audio_end:.3f} s (espeak's trailing silence counts toward the 500 ms), "
        f"speech_stopped → first delta {audio_started.mono - vad_stop.mono:.3f} s, "
        f"→ first agent sample played {first_heard - vad_stop.mono:.3f} s"
    )
    assert_no_key(line, run.all_notices())


def _best_lag(reference: np.ndarray, signal: np.ndarray, max_lag: int) -> tuple[int, float]:
    """The lag (0..max_lag samples) where ``signal`` best matches ``reference``; the correlation."""
    best = (0, -1.0)
    n = min(reference.size, signal.size - max_lag)
    ref = reference[:n].astype(np.float64)
    for lag in range(max_lag + 1):
        seg = signal[lag : lag + n].astype(np.float64)
        denom = np.linalg.norm(ref) * np.linalg.norm(seg)
        corr = float(ref @ seg / denom) if denom else 0.0
        if corr > best[1]:
            best = (lag, corr)
    return best


def _barge_in_call(line: RealtimeLine, after_s: float, total_s: float) -> tuple[Run, Caller]:
    """The caller speaks, the agent answers, the caller barges in ``after_s`` into the answer."""
    caller = Caller()
    caller.say(speech(FIRST_WORDS))
    run = drive(line, caller, 12.0, hook=until_played(after_s))
    assert played_s(run) >= after_s, "the agent never answered"
    caller.say(speech(BARGE_IN))
    drive(line, caller, total_s, run=run)
    return run, caller


@pytest.mark.slow
@pytest.mark.audio
@needs_espeak
def test_barging_in_flushes_the_playout_truncates_and_the_agent_stops(servers, lines) -> None:
    server = servers()
    line = lines(server)
    line.open(timeout_s=5.0)
    run, caller = _barge_in_call(line, after_s=2.0, total_s=3.0)
    onset = caller.onsets[1]

    clears = run.of(NoticeKind.CLEAR)
    assert len(clears) == 1, [n for _, n in run.notices if n.kind is not NoticeKind.AGENT_EVENT]
    k, clear = clears[0]
    assert clear.mono > onset
    assert clear.data["dropped_s"] > 1.0, "the agent streams ahead of real time; that was flushed"

    # conversation.item.truncate at what was actually played (± one frame).
    (truncate,) = server.events("conversation.item.truncate")
    answer = server.answers[0]
    assert truncate["item_id"] == answer.item_id and truncate["content_index"] == 0
    end_samples = truncate["audio_end_ms"] * LINE_RATE // 1000
    assert run.played[k - 1] - FRAME <= end_samples <= run.played[k] + FRAME
    assert clear.data["truncated"] == [
        {"item_id": answer.item_id, "audio_end_ms": truncate["audio_end_ms"]}
    ]
    assert server.sent_events("conversation.item.truncated"), "the server refused the truncate"
    assert not server.sent_events("error")

    # The agent yielded: its response was cancelled, no audio after that, silence on the line
    # until it answers the barge-in with a new response.
    (done, *_) = server.sent_events("response.done")
    assert done.event["response"]["status"] == "cancelled"
    assert done.event["response"]["id"] == answer.response_id
    late = [
        d
        for d in server.sent_events("response.output_audio.delta")
        if d.arrived > done.arrived and d.event["item_id"] == answer.item_id
    ]
    assert not late
    starts = run.of(NoticeKind.AGENT_EVENT, "agent audio started")
    assert starts[0][1].data["item_id"] == answer.item_id
    next_answer = starts[1][0] if len(starts) > 1 else len(run.frames)
    after = run.audio[(k + 1) * FRAME : next_answer * FRAME]
    assert after.size >= LINE_RATE and not np.any(after), "agent audio went on after the flush"
    before = run.audio[(k - 10) * FRAME : k * FRAME]
    assert rms_db(before) > -40, "the agent was not audible just before the barge-in"

    silent_from = next(
        i for i in range(len(run.frames)) if run.times[i] > onset and not run.frames[i].any()
    )
    print(
        f"\nbarge-in: caller onset → CLEAR on the line {clear.mono - onset:.3f} s, → agent silent "
        f"{run.times[silent_from] - onset:.3f} s; flushed {clear.data['dropped_s']:.2f} s, "
        f"truncated at {truncate['audio_end_ms']} ms"
    )
    assert clear.mono - onset < 1.0
    assert line.state is LineState.OPEN
    assert_no_key(line, run.all_notices())


@pytest.mark.slow
@pytest.mark.audio
@needs_espeak
def test_an_agent_that_does_not_yield_keeps_talking_over_the_caller(servers, lines) -> None:
    server = servers(yield_to_speech=False)
    line = lines(server)
    line.open(timeout_s=5.0)
    run, caller = _barge_in_call(line, after_s=2.0, total_s=2.5)
    onset = caller.onsets[1]

    assert not run.of(NoticeKind.CLEAR)
    assert not server.events("conversation.item.truncate")
    start = next(i for i, t in enumerate(run.times) if t > onset)
    over = run.audio[start * FRAME : start * FRAME + 2 * LINE_RATE]
    windows = over[: over.size - over.size % 3200].reshape(-1, 3200)
    loud = [rms_db(w) > -40 for w in windows]
    assert sum(loud) >= 0.6 * len(loud), "the agent went quiet although it does not yield"
    assert played_s(run) >= 4.0
    statuses = [d.event["response"]["status"] for d in server.sent_events("response.done")]
    assert "cancelled" not in statuses
    assert len(server.sent_events("input_audio_buffer.speech_started")) == 1  # the first words
    print(f"\nno yield: agent audible in {sum(loud)}/{len(loud)} 200 ms windows after the barge-in")
    assert_no_key(line, run.all_notices())


# -- failures --------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _assert_one_line(exc: LineError) -> str:
    message = str(exc)
    assert "\n" not in message and "Traceback" not in message
    assert KEY not in message
    assert exc.__cause__ is None  # no chained traceback under the one line
    assert exc.__context__ is None or exc.__suppress_context__
    return message


def test_connection_refused_is_one_line_naming_the_url(lines) -> None:
    port = _free_port()
    line = lines(base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(LineError) as info:
        line.open(timeout_s=3.0)
    message = _assert_one_line(info.value)
    assert f"ws://127.0.0.1:{port}/v1/realtime?model={MODEL}" in message
    assert "refused" in message
    assert line.state is LineState.FAILED
    (failed,) = line.notices()
    assert failed.kind is NoticeKind.FAILED and failed.detail == message
    line.close()
    assert line.state is LineState.FAILED


def test_a_rejected_upgrade_says_the_status_and_hints_at_the_key(servers, lines) -> None:
    server = servers(reject_status=401)
    line = lines(server)
    with pytest.raises(LineError) as info:
        line.open(timeout_s=3.0)
    message = _assert_one_line(info.value)
    assert "HTTP 401" in message and "OPENAI_API_KEY" in message and line.target in message
    assert line.state is LineState.FAILED


def test_no_session_updated_times_out(servers, lines) -> None:
    server = servers(answer_session_update=False)
    line = lines(server)
    t0 = time.monotonic()
    with pytest.raises(LineError) as info:
        line.open(timeout_s=0.5)
    assert time.monotonic() - t0 < 2.0
    message = _assert_one_line(info.value)
    assert "no session.updated" in message and "0.5 s" in message
    assert line.state is LineState.FAILED


def test_a_refused_session_update_fails_the_open(servers, lines) -> None:
    server = servers(session_update_error=True)
    line = lines(server)
    with pytest.raises(LineError) as info:
        line.open(timeout_s=3.0)
    assert "scripted session error" in _assert_one_line(info.value)
    assert line.state is LineState.FAILED


def test_a_stalled_handshake_times_out(lines) -> None:
    with socket.socket() as listener:  # accepts TCP, never answers the upgrade
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        line = lines(base_url=f"http://127.0.0.1:{port}/v1")
        with pytest.raises(LineError) as info:
            line.open(timeout_s=0.5)
    message = _assert_one_line(info.value)
    assert "no answer within 0.5 s" in message or "handshake" in message, message
    assert line.state is LineState.FAILED


@pytest.mark.slow
@pytest.mark.audio
@needs_espeak
def test_a_connection_dropped_mid_answer_fails_the_line(servers, lines) -> None:
    server = servers(drop_after_s=1.5)
    line = lines(server)
    line.open(timeout_s=5.0)
    caller = Caller()
    caller.say(speech(FIRST_WORDS))
    run = drive(line, caller, 9.0, hook=lambda _i, r: bool(r.of(NoticeKind.FAILED)))
    (failed,) = [n for _, n in run.of(NoticeKind.FAILED)]
    assert "lost" in failed.detail and line.target in failed.detail
    assert line.state is LineState.FAILED
    assert line.playout.received > 0  # what arrived before the drop still plays
    drive(line, caller, 0.5, run=run)  # send/take after the drop: quiet no-ops
    assert not run.of(NoticeKind.CLOSED)
    line.close()
    assert line.state is LineState.FAILED
    assert_no_key(line, run.all_notices() + line.notices())


def test_malformed_and_unknown_events_are_reported_and_the_call_goes_on(servers, lines) -> None:
    server = servers()
    line = lines(server)
    line.open(timeout_s=5.0)
    line.notices()
    server.push_raw("{this is not json")
    server.push_raw("[1, 2, 3]")
    server.push({"type": "mystery.event", "x": 1})
    server.push(
        {"type": "response.output_audio.delta", "item_id": "item_x", "delta": "@@not base64@@"}
    )
    server.push(
        {"type": "error", "error": {"type": "server_error", "code": "boom", "message": "it broke"}}
    )
    server.push({"type": "error", "error": {"type": "auth", "message": f"bad key {KEY}"}})
    server.push({"type": "mystery.echo", "echo": KEY, "item": {"id": KEY}})
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(WIRE_RATE // 2) / WIRE_RATE) * 32767).astype(
        "<i2"
    )
    import base64

    server.push(
        {
            "type": "response.audio.delta",  # a beta name, still audio
            "response_id": "resp_x",
            "item_id": "item_tone",
            "content_index": 0,
            "delta": base64.b64encode(tone.tobytes()).decode(),
        }
    )
    run = drive(line, Caller(), 1.0)
    errors = [n.detail for _, n in run.of(NoticeKind.ERROR)]
    assert "malformed event from the agent (not JSON)" in errors
    assert "malformed event from the agent (no type)" in errors
    assert any(e.startswith("malformed response.output_audio.delta") for e in errors)
    assert "agent error server_error boom: it broke" in errors
    assert "agent error auth: bad key ***" in errors  # a key the server echoes is blanked
    unknown = [n for _, n in run.of(NoticeKind.AGENT_EVENT, "mystery.event")]
    assert unknown and unknown[0].data["unknown"] is True
    assert line.state is LineState.OPEN
    assert abs(played_s(run) - 0.5) < 0.01  # the good delta after the bad ones played
    assert rms_db(run.audio) > -30
    assert server.input_seconds > 0.8  # and the caller's audio still flows
    assert_no_key(line, run.all_notices())


def test_the_agent_hanging_up_closes_the_line(servers, lines) -> None:
    server = servers()
    line = lines(server)
    line.open(timeout_s=5.0)
    server.hangup(1000, "goodbye")
    run = drive(line, Caller(), 1.0, hook=lambda _i, r: bool(r.of(NoticeKind.CLOSED)))
    (closed,) = [n for _, n in run.of(NoticeKind.CLOSED)]
    assert closed.data == {"by": "agent", "code": 1000}
    assert "goodbye" in closed.detail
    assert line.state is LineState.CLOSED


@pytest.mark.parametrize("play_after_truncate", [False, True], ids=["dropped", "played"])
@pytest.mark.slow
@pytest.mark.audio
@needs_espeak
def test_a_model_that_hears_the_caller_but_talks_on_is_reported(
    servers: Callable[..., RealtimeServer],
    lines: Callable[..., RealtimeLine],
    play_after_truncate: bool,
) -> None:
    # interrupt_response false: the server signals speech_started but does not cancel.
    # The caller barges in twice while the answer goes on.
    server = servers()
    line = lines(server, interrupt_response=False, play_after_truncate=play_after_truncate)
    line.open(timeout_s=5.0)
    run, caller = _barge_in_call(line, after_s=2.0, total_s=0.1)
    caller.say(np.zeros(LINE_RATE, dtype=np.float32))
    caller.say(speech(BARGE_IN))
    talked_on = lambda _i, r: bool(r.of(NoticeKind.AGENT_EVENT, TALKED_ON))  # noqa: E731
    drive(line, caller, 9.0, run=run, hook=talked_on)
    answer = server.answers[0]
    statuses = [d.event["response"]["status"] for d in server.sent_events("response.done")]
    assert statuses[:1] == ["completed"]  # it finished its answer regardless
    started = server.sent_events("input_audio_buffer.speech_started")
    assert len(started) == 3  # the first words and both barge-ins

    clears = run.of(NoticeKind.CLEAR)
    truncates = server.events("conversation.item.truncate")
    assert {t["item_id"] for t in truncates} == {answer.item_id}
    if play_after_truncate:  # the late audio played, so the second barge-in cut it again
        assert len(clears) == len(truncates) == 2
        assert truncates[1]["audio_end_ms"] > truncates[0]["audio_end_ms"] + 1000
    else:  # nothing of it played after the first cut: nothing to flush or cut again
        assert len(clears) == len(truncates) == 1
    assert not server.sent_events("error")

    assert len(run.of(NoticeKind.AGENT_EVENT, "agent audio after truncate")) == 1
    (talked,) = run.of(NoticeKind.AGENT_EVENT, TALKED_ON)
    sent_after = sum(
        len(d.event["delta"]) * 3 // 4 // 2
        for d in server.sent_events("response.output_audio.delta")
        if d.arrived > started[1].arrived
    )
    assert sent_after > 0
    assert talked[1].data["late_s"] == pytest.approx(sent_after / WIRE_RATE, abs=0.01)
    assert talked[1].data["audio_end_ms"] == truncates[-1]["audio_end_ms"]

    k = clears[0][0]
    second = next(i for i, t in enumerate(run.times) if t > caller.onsets[2])
    after = run.audio[(k + 1) * FRAME : second * FRAME]
    if play_after_truncate:
        assert rms_db(after) > -40, "the late audio was to be played"
    else:
        assert after.size >= LINE_RATE and not np.any(after)
    assert_no_key(line, run.all_notices())


def test_a_malformed_base_url_is_a_one_line_error() -> None:
    with pytest.raises(LineError) as info:
        RealtimeLine(model=MODEL, base_url="http://[::1/v1", api_key=KEY)
    assert "bad Realtime base URL" in _assert_one_line(info.value)


def test_a_line_opens_once(
    servers: Callable[..., RealtimeServer], lines: Callable[..., RealtimeLine]
) -> None:
    server = servers()
    line = lines(server)
    line.open(timeout_s=5.0)
    with pytest.raises(LineError, match="already used"):
        line.open(timeout_s=5.0)
    closed_first = lines(server)
    closed_first.close()
    with pytest.raises(LineError, match="already used"):
        closed_first.open(timeout_s=5.0)
    assert len(server.paths) == 1


@pytest.mark.parametrize(("append_ms", "per_event"), [(32.0, 768), (100.0, 4 * 768)])
def test_caller_audio_goes_out_in_append_batches(
    servers: Callable[..., RealtimeServer],
    lines: Callable[..., RealtimeLine],
    append_ms: float,
    per_event: int,
) -> None:
    server = servers()
    line = lines(server, append_ms=append_ms)
    line.open(timeout_s=5.0)
    caller = Caller()
    caller.say((0.01 * np.random.default_rng(7).standard_normal(LINE_RATE)).astype(np.float32))
    drive(line, caller, 1.024)  # 32 frames
    deadline = time.monotonic() + 2.0
    while server.input_seconds < 1.024 and time.monotonic() < deadline:
        time.sleep(0.01)
    sizes = [len(e["audio"]) * 3 // 4 // 2 for e in server.events("input_audio_buffer.append")]
    assert sizes and set(sizes) == {per_event}
    assert server.input_seconds == pytest.approx(1.024)  # 16 → 24 kHz, nothing lost or added
    assert line.sent_samples == 32 * FRAME
    assert not server.sent_events("input_audio_buffer.speech_started")  # faint noise is no speech


# -- a whole black-box call ------------------------------------------------------------


def _remote_call(tmp_path: Path, server: RealtimeServer, seconds: float) -> Path:
    """``cutin call --agent realtime --base-url ...`` at β = 1, in real time, hung up 3 s
    after the first yield to a barge-in (at most ``seconds`` long); the log."""
    from controls.tendencies import Tendencies
    from sessions.call.config import CallConfig
    from sessions.call.engine.engine import CallEngine
    from sessions.call.recorder import Recorder
    from sessions.call.setup.line_call import RemoteSpec, build_line_call
    from sessions.callers.users import ScriptedUser
    from sessions.lines.realtime import RealtimeLine
    from sessions.scenarios import load_scenario
    from tests.support.bot_calls import hang_up_after, yield_after

    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 1.0, 0.0), seed=2)
    spec = RemoteSpec(
        agent="realtime",
        base_url=server.base_url,
        model=MODEL,
        api_key=KEY,
        instructions=scenario.agent.system_prompt or None,
        cache_dir=tmp_path / "cache",
    )
    recorder = Recorder.create(
        tmp_path, config, spec.agent_info(scenario.agent.name), speech=spec.speech_info()
    )
    user = ScriptedUser(scenario, barge_in_with_next_line=True)
    loop = build_line_call(
        spec, config, recording_path=recorder.path.with_suffix(".wav"), user=user
    )
    # The one engine steps a Realtime line call, as it steps every other kind.
    assert isinstance(loop, CallEngine) and isinstance(loop.line, RealtimeLine)
    loop.listeners.append(recorder)
    # Hung up 3 s after the first yield to a barge-in is logged: what the checks need.
    hang_up_after(loop, yield_after("interruption"), 3.0)
    try:
        loop.run_for(seconds)
    finally:
        recorder.close()
    return recorder.path


@pytest.mark.slow
@pytest.mark.audio
@needs_espeak
def test_a_black_box_call_over_the_realtime_line_measures_the_yield(
    servers: Callable[..., RealtimeServer], tmp_path: Path
) -> None:
    from sessions.log.reader import read_session
    from sessions.scenarios import load_scenario

    server = servers()
    log = _remote_call(tmp_path, server, seconds=25.0)
    events = read_session(log).events
    cuts = [e for e in events if e.type == "interruption"]
    assert cuts, "β = 1 never barged in on the agent's long answer"
    yields = [e for e in events if e.type == "agent_yield" and e.after == "interruption"]
    assert yields and yields[0].yielded, yields
    assert yields[0].clear_t is not None  # the line's flush at speech_started
    (truncate, *_) = server.events("conversation.item.truncate")
    assert truncate["item_id"] == server.answers[0].item_id
    # The answer streamed 4x faster than real time, so it was often complete server-side
    # when the barge-in came: the truncate is what kept the unheard rest out of it.
    assert server.sent_events("conversation.item.truncated")
    assert not server.sent_events("error")
    assert truncate["audio_end_ms"] / 1000 < server.answers[0].duration_s - 1.0
    assert KEY not in log.read_text()
    (update,) = server.events("session.update")
    assert update["session"].get("instructions") == (
        load_scenario("retail-order-change").agent.system_prompt or None
    )
    print(
        f"\nblack-box call: agent yield latency {yields[0].latency_s:.3f} s, "
        f"clear {yields[0].clear_t - yields[0].onset_t:.3f} s after the caller's onset; "
        f"truncated at {truncate['audio_end_ms']} ms of {server.answers[0].duration_s:.1f} s"
    )
