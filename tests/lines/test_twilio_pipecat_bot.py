"""TwilioLine against the real Pipecat bot (examples/pipecat_bot.py) on 127.0.0.1.

The test plays the call loop's part on the real clock: every 32 ms it sends one frame
of caller audio (espeak-ng speech or silence) and takes one frame of agent audio.
Speech in the agent's audio is found by frame energy (the bot's audio is espeak
speech over digital silence). Latencies are printed, not asserted.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from sessions.lines.base import LINE_RATE, LineNotice, LineState, NoticeKind
from sessions.lines.codec import StreamResampler, encode_ulaw
from sessions.lines.twilio import TwilioLine
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.pipecat_bot import Bot, BotPool, running_bot

pytestmark = [pytest.mark.slow, pytest.mark.audio]

FRAME = 512
FRAME_S = FRAME / LINE_RATE
SPEECH_RMS = 0.01

QUESTION = "Hello. Can you tell me where my order is?"
BARGE_IN = "Sorry, wait a moment, I need to change the delivery address, please."


def espeak(text: str) -> np.ndarray:
    from sessions.speech.tts import EspeakTts

    return EspeakTts().synthesize(text).audio


def rms(frame: np.ndarray) -> float:
    return float(np.sqrt(np.mean(frame.astype(np.float64) ** 2))) if frame.size else 0.0


@dataclass
class LiveCall:
    """The call loop's side, on the real clock: one frame out, one frame in, every 32 ms."""

    line: TwilioLine
    t0: float = field(default_factory=time.monotonic)
    frames: int = 0
    agent: list[float] = field(default_factory=list)
    """Agent RMS per frame."""
    agent_audio: list[np.ndarray] = field(default_factory=list)
    caller: list[float] = field(default_factory=list)
    notices: list[LineNotice] = field(default_factory=list)
    _queue: list[np.ndarray] = field(default_factory=list)

    def time_of(self, frame: int) -> float:
        return self.t0 + frame * FRAME_S

    def frame_at(self, mono: float) -> int:
        return int((mono - self.t0) / FRAME_S)

    def speak(self, audio: np.ndarray) -> int:
        """Queue caller audio; returns the frame where its first sound will go out."""
        pending = sum(a.size for a in self._queue)
        start = self.frames + pending // FRAME
        loud = np.flatnonzero(np.abs(audio) > 0.02)
        self._queue.append(audio.astype(np.float32))
        return start + (int(loud[0]) // FRAME if loud.size else 0)

    def caller_busy(self) -> bool:
        return bool(self._queue)

    def _next_caller_frame(self) -> np.ndarray:
        out = np.zeros(FRAME, dtype=np.float32)
        filled = 0
        while filled < FRAME and self._queue:
            head = self._queue[0]
            k = min(FRAME - filled, head.size)
            out[filled : filled + k] = head[:k]
            filled += k
            if k == head.size:
                self._queue.pop(0)
            else:
                self._queue[0] = head[k:]
        return out

    def run(self, seconds: float, until: Callable[[LiveCall], bool] | None = None) -> bool:
        """Run for up to ``seconds``; True if ``until`` became true first."""
        end = self.frames + int(seconds / FRAME_S)
        while self.frames < end:
            wait = self.time_of(self.frames) - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            caller = self._next_caller_frame()
            self.line.send(caller)
            heard = self.line.take(FRAME)
            self.agent_audio.append(heard)
            self.agent.append(rms(heard))
            self.caller.append(rms(caller))
            self.notices += self.line.notices()
            self.frames += 1
            if until is not None and until(self):
                return True
        return False

    def speech_runs(self, start: int = 0, min_gap_frames: int = 20) -> list[tuple[int, int]]:
        """(first, last) frames of agent speech from ``start``, gaps under ``min_gap`` bridged."""
        runs: list[tuple[int, int]] = []
        for i in range(start, len(self.agent)):
            if self.agent[i] < SPEECH_RMS:
                continue
            if runs and i - runs[-1][1] <= min_gap_frames:
                runs[-1] = (runs[-1][0], i)
            else:
                runs.append((i, i))
        return runs

    def agent_silent_for(self, frames: int) -> bool:
        tail = self.agent[-frames:]
        return len(tail) == frames and max(tail) < SPEECH_RMS

    def of(self, kind: NoticeKind) -> list[LineNotice]:
        return [n for n in self.notices if n.kind is kind]


def speaking_since(call: LiveCall, frame: int, frames: int = 5) -> bool:
    tail = call.agent[max(frame, len(call.agent) - frames) :]
    return len(tail) >= frames and min(tail) >= SPEECH_RMS


@pytest.fixture
def bot(pipecat_bot: Bot) -> Iterator[Bot]:
    """The session's bot, idle before and after the test: every call it took has ended
    on its side, so a call is never refused as a second client nor cut by the end of the
    last one (the bot ends a call asynchronously after the line closes)."""
    yield pipecat_bot
    pipecat_bot.wait_idle()


@pytest.fixture
def stubborn_bot(pipecat_bots: BotPool) -> Iterator[Bot]:
    """The session's bot with ``--no-interruptions``, idle before and after the test."""
    bot = pipecat_bots.get("--no-interruptions")
    yield bot
    bot.wait_idle()


def greet(bot: Bot) -> LiveCall:
    """Dial, and play the call until the greeting has been said and has ended."""
    line = TwilioLine(bot.url)
    line.open(timeout_s=10)
    call = LiveCall(line)
    assert call.run(10.0, until=lambda c: bool(c.speech_runs()) and c.agent_silent_for(25)), (
        f"no greeting, or it never ended: {call.speech_runs()}; bot: {bot.said('')}"
    )
    return call


def ask_and_get_reply(bot: Bot, call: LiveCall) -> tuple[int, int]:
    """Ask the question; returns (the caller's last speech frame, the reply's first frame)."""
    question = espeak(QUESTION)
    start = call.speak(question)
    asked_end = start + int(np.flatnonzero(np.abs(question) > 0.02)[-1]) // FRAME
    got = call.run(20.0, until=lambda c: c.frames > asked_end and speaking_since(c, asked_end))
    assert got, f"the bot never replied; it said {bot.said('')}\n{bot.stderr_tail()}"
    reply_start = call.speech_runs(asked_end)[0][0]
    return asked_end, reply_start


def test_greeting_arrives_as_speech(bot: Bot) -> None:
    call = greet(bot)
    try:
        first, last = call.speech_runs()[0]
        seconds = (last - first + 1) * FRAME_S
        assert 1.0 < seconds < 8.0
        # It is speech (Silero VAD agrees), not noise or a tone.
        from sessions.speech.vad import SileroOnnxVad

        probs = SileroOnnxVad().run(np.concatenate(call.agent_audio[first : last + 1]))
        assert float(np.mean(probs > 0.5)) > 0.5
        quiet = np.concatenate(call.agent_audio[last + 5 :])
        assert float(np.mean(SileroOnnxVad().run(quiet) > 0.5)) < 0.1
        fmt = call.of(NoticeKind.FORMAT)[0].data
        assert (fmt["encoding"], fmt["rate"]) == ("audio/x-mulaw", 8000)
        assert call.of(NoticeKind.ERROR) == []
        bot.wait_line("call started " + call.line.stream_sid)
        media_s = call.line.bytes_received / 8000
        print(
            f"\ngreeting: {seconds:.2f} s of speech starting {first * FRAME_S:.2f} s into the"
            f" call; {call.line.media_received} media messages carrying {media_s:.2f} s of"
            f" audio in {call.frames * FRAME_S:.2f} s of call"
        )
    finally:
        call.line.close()
    assert call.line.state is LineState.CLOSED
    bot.wait_line("caller hung up", timeout=10)


def test_question_gets_a_reply_and_barge_in_stops_it(bot: Bot) -> None:
    call = greet(bot)
    try:
        asked_end, reply_start = ask_and_get_reply(bot, call)
        heard = bot.wait_line("heard ", timeout=5)[1]
        assert "order" in heard.lower()
        reply_latency = (reply_start - asked_end) * FRAME_S
        # Let the reply play 2.5 s, then speak over it.
        call.run(2.5)
        assert max(call.agent[-20:]) >= SPEECH_RMS, (
            f"the reply ended before the barge-in: {call.speech_runs(reply_start)}"
        )
        onset = call.speak(espeak(BARGE_IN))
        stopped = call.run(
            8.0,
            until=lambda c: any(c.frame_at(n.mono) >= onset for n in c.of(NoticeKind.CLEAR)),
        )
        assert stopped, f"no clear after the barge-in; notices {call.notices}"
        clear = next(n for n in call.of(NoticeKind.CLEAR) if call.frame_at(n.mono) >= onset)
        clear_frame = call.frame_at(clear.mono)
        # After the clear, the agent is silent while the caller is still talking.
        call.run(1.0)
        after = call.agent[clear_frame + 2 : clear_frame + 2 + 25]
        assert max(after) < SPEECH_RMS, "agent audio went on after its clear"
        speaking = [i for i in range(onset, clear_frame + 27) if call.agent[i] >= SPEECH_RMS]
        stop_latency = ((speaking[-1] + 1 - onset) * FRAME_S) if speaking else 0.0
        clear_latency = clear.mono - call.time_of(onset)
        assert clear.data["dropped_s"] > 0
        print(
            f"\nreply latency (caller speech end → agent speech): {reply_latency * 1000:.0f} ms"
            f"\nbarge-in → clear notice: {clear_latency * 1000:.0f} ms"
            f"\nbarge-in → end of the last agent speech frame: {stop_latency * 1000:.0f} ms"
            f"\nclear dropped {clear.data['dropped_s']:.2f} s of queued agent audio"
        )
        bot.wait_line("interrupted", timeout=5)
    finally:
        call.line.close()


def test_without_interruptions_the_bot_talks_over_the_caller(stubborn_bot: Bot) -> None:
    bot = stubborn_bot
    call = greet(bot)
    try:
        asked_end, reply_start = ask_and_get_reply(bot, call)
        call.run(2.5)
        onset = call.speak(espeak(BARGE_IN))
        call.run(5.0)
        assert call.of(NoticeKind.CLEAR) == []
        # The agent kept speaking through the caller's speech.
        window = call.agent[onset + 10 : onset + 10 + 60]
        talk_over = sum(1 for r in window if r >= SPEECH_RMS) * FRAME_S
        assert talk_over > 1.0, f"only {talk_over:.2f} s of agent speech over the caller"
        print(
            f"\nno-interruptions: reply latency {(reply_start - asked_end) * FRAME_S:.2f} s;"
            f" {talk_over:.2f} s of agent speech in the 1.9 s after barge-in + 0.3 s"
        )
        assert bot.said("interrupted") == []
    finally:
        call.line.close()


def test_llm_replies_and_no_greeting(openai_server: OpenAIServer) -> None:
    answer = "Your parcel left the warehouse this morning and arrives on Friday."
    openai_server.default = Reply(answer)
    args = ("--llm-base-url", openai_server.base_url, "--model", "test-model", "--greeting", "")
    with running_bot(*args) as bot:
        line = TwilioLine(bot.url)
        line.open(timeout_s=10)
        call = LiveCall(line)
        try:
            call.run(2.0)
            assert call.speech_runs() == [], "the bot spoke without a greeting"
            asked_end, reply_start = ask_and_get_reply(bot, call)
            assert bot.wait_line("replying ", timeout=5)[1] == f"replying {json.dumps(answer[:60])}"
            call.run(1.5)
        finally:
            line.close()
    (body,) = openai_server.chat_bodies()
    assert body["model"] == "test-model"
    assert body["messages"][0]["role"] == "system"
    assert "order" in body["messages"][-1]["content"].lower()
    print(f"\nLLM reply latency (loopback server): {(reply_start - asked_end) * FRAME_S:.2f} s")


def test_a_caller_who_drops_mid_reply_leaves_nothing_for_the_next(bot: Bot) -> None:
    """The bot is a test agent for many calls in a row: a dropped call (no ``stop``)
    must not leave its reply playing into the next call's greeting."""

    t0 = time.monotonic()
    ended = bot.hung_up_count()

    async def drop_mid_reply() -> None:
        from websockets.asyncio.client import connect

        question = encode_ulaw(StreamResampler(LINE_RATE, 8000).process(espeak(QUESTION)))
        audio = question + encode_ulaw(np.zeros(8000 * 6, dtype=np.float32))
        sid = "MZ" + "0" * 32
        async with connect(bot.url) as ws:
            await ws.send(json.dumps({"event": "connected", "protocol": "Call"}))
            start = {"streamSid": sid, "callSid": "CA1", "accountSid": "AC1", "tracks": []}
            await ws.send(json.dumps({"event": "start", "streamSid": sid, "start": start}))
            for i in range(0, len(audio), 160):
                payload = base64.b64encode(audio[i : i + 160]).decode("ascii")
                await ws.send(
                    json.dumps({"event": "media", "streamSid": sid, "media": {"payload": payload}})
                )
                await asyncio.sleep(0.02)
                if any(t >= t0 for t, _ in bot.said("replying")):
                    break
            await asyncio.sleep(1.0)  # the reply is on its way
            ws.transport.abort()

    asyncio.run(drop_mid_reply())
    bot.wait_line("replying ", after=t0, timeout=1)
    # This call's own end (a late line of the previous test's call is not it).
    bot.wait_hung_up(ended + 1, timeout=20)
    call = greet(bot)  # the next call: its greeting, then silence
    try:
        (first, last), *rest = call.speech_runs()
        assert (last - first + 1) * FRAME_S < 5.0, "the old reply played into this call"
        assert rest == []
    finally:
        call.line.close()


def test_the_default_reply_is_long_with_pauses_and_no_question() -> None:
    """What the bot says by default leaves a caller room to barge in at its pauses."""
    import subprocess

    example = _example_bot()
    text = example.DEFAULT_REPLY
    assert "?" not in text
    ssml = example.text_to_ssml(text, 350)
    assert ssml.count('<break time="350ms"/>') >= 3
    wav = subprocess.run(
        ["espeak-ng", "-m", "-v", "en-us", "-s", "165", "--stdout", ssml],
        capture_output=True,
        check=True,
    ).stdout
    rate, pcm = example.wav_to_pcm16(wav)
    seconds = pcm.size / rate
    hop = rate // 100
    level = np.sqrt(np.mean((pcm[: pcm.size // hop * hop] / 32768.0).reshape(-1, hop) ** 2, 1))
    pauses, quiet = [], 0
    for loud in level >= 0.003:
        if loud and quiet:
            pauses.append(quiet / 100)
        quiet = 0 if loud else quiet + 1
    long_pauses = [p for p in pauses if p >= 0.3]
    print(f"\ndefault reply: {seconds:.1f} s, {len(long_pauses)} pauses of 300 ms or more")
    assert 12.0 < seconds < 20.0
    assert len(long_pauses) >= 4


def test_the_long_greeting_pauses_after_twelve_words_and_talks_on() -> None:
    """``--long-greeting`` (the README's black-box tour): a rule at β 1 may cut into an
    agent's first turn only at a pause past 12 heard words, and the cut needs the bot
    still talking after it; ``--greeting TEXT`` and it do not go together."""
    import subprocess

    example = _example_bot()
    assert example.parse_args(["--long-greeting"]).greeting == example.LONG_GREETING
    assert example.parse_args([]).greeting == example.DEFAULT_GREETING
    with pytest.raises(SystemExit):
        example.parse_args(["--long-greeting", "--greeting", "hi"])
    text = example.LONG_GREETING
    assert "?" not in text
    words = [w for w in text.split() if w not in example.PAUSE_TOKENS]
    before = text.split(" — ")[0].split()
    assert len(before) >= 15  # tiny.en hears fewer words than were said
    wav = subprocess.run(
        [
            "espeak-ng",
            "-m",
            "-v",
            "en-us",
            "-s",
            "165",
            "--stdout",
            example.text_to_ssml(text, 350),
        ],
        capture_output=True,
        check=True,
    ).stdout
    rate, pcm = example.wav_to_pcm16(wav)
    hop = rate // 100
    level = np.sqrt(np.mean((pcm[: pcm.size // hop * hop] / 32768.0).reshape(-1, hop) ** 2, 1))
    loud_at = np.flatnonzero(level >= 0.003) / 100
    gaps = np.diff(loud_at)
    pauses = [(float(loud_at[i]), float(g)) for i, g in enumerate(gaps) if g >= 0.3]
    seconds, last = pcm.size / rate, float(loud_at[-1])
    print(f"\nlong greeting: {seconds:.1f} s, {len(words)} words, pauses (at, s) {pauses}")
    assert 9.0 < seconds < 13.0
    assert len(pauses) >= 2 and all(at > 4.0 for at, _ in pauses)
    assert last - pauses[0][0] > 4.0  # room for the cut and the bot's yield after it


def _example_bot() -> Any:
    """examples/pipecat_bot.py as a module (its top level imports only the stdlib and
    numpy); skips without espeak-ng, which its texts are measured with."""
    import importlib.util
    import shutil

    from tests.support.pipecat_bot import BOT

    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    spec = importlib.util.spec_from_file_location("pipecat_bot_example", BOT)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example
