"""A voice agent whose turn-taking is known by construction, for measuring cutin itself.

A WebSocket server on 127.0.0.1 speaking Twilio Media Streams (as the Pipecat bot
does), with no VAD, no STT and no model: an energy ear (RMS over 20 ms frames) and
pre-rendered espeak-ng speech (a greeting and a long reply whose pauses are exact SSML
breaks), rendered once per process. Every behaviour is an option with an exact time:

    python examples/known_agent.py --port 0 --yield-after-ms 300 --answer-after-ms 800 \\
        --truth truth.jsonl
    cutin-known-agent: listening ws://127.0.0.1:40113/

**One clock, the line's samples.** The agent counts the caller's 8 kHz samples as
they arrive (cutin sends audio, silence included, all the time), and sends exactly as
many samples back for every sample it hears, ``--lead-ms`` ahead (sent on ``start``,
before cutin plays anything). So the n-th sample it sends plays at line time n / 8000
on cutin's side, and the n-th sample it hears left cutin at n / 8000: its truth file
and cutin's log share one time axis, without wall clocks, at any pacing.

Because its audio runs ``--lead-ms`` ahead of what it hears, a decision it takes
now changes its audio from ``lead`` later at the earliest; delays shorter than that
land at the earliest sample it can still change, and the truth file says where.
Decisions that can wait (answer, talk into a pause) are taken ``lead`` early so they
play at the exact time asked.

The truth file (``--truth FILE``, JSON Lines, one object per event, every time in
seconds of line time) holds: ``sound_start``/``sound_end`` (the caller's sounds as it
heard them: first and last sample at or over the level; ``first_t``: its first sample at
or over −34 dBFS, cutin's onset, which may be a frame before the ear's), ``ignored`` (a sound it let
pass), ``speak`` (it starts its greeting or reply; ``why``: greeting, answer,
talk_into_pause), ``stop`` (it stopped for the caller: ``t`` its last sample of
sound, ``onset_t`` the sound it stopped for, ``latency_s``), ``resume`` (the short
burst after a stop), ``done`` (a turn it finished by itself) and ``call_start`` /
``call_end``. Every event carries ``call`` (the connection's number) and
``stream_sid``.

``--answers N`` makes it answer N times and then go silent for good (an agent that
stops responding); ``--level-db`` makes it deaf to quieter sounds (side talk).

**Burst pacing** (``--burst``): each turn is sent whole the moment it starts (as agents
that stream a TTS answer faster than real time do), still from where its clock says it
plays; a stop is then a Twilio ``clear`` sent at once, and the truth's stop is where
that clear took effect: the instant it went out, on the line's clock (the agent maps its
monotonic clock onto line time by the earliest any caller sample ever reached it, which
is when cutin sent it, give or take the loopback's fraction of a millisecond; the same
machine's clock as cutin's). Its later audio may play up to the jitter depth later than
its clock says (cutin's buffer ran dry at the clear).

**Stalls** (``--stall-ms N --stall-after-ms M``): ``M`` after a caller sound starts over
its speech, it sends nothing for ``N`` (a server that stalls), then goes on with its turn
where it left off; its samples in the stall are never sent, so its audio after plays
where cutin's playout puts it (``stall`` in the truth: where it began, its length). With
``--never-yield`` it does not stop: it never yielded.

One pipeline per connection (concurrent calls); a few numpy operations per 20 ms of
audio, about 2% of a core per call (4 concurrent calls measured). ``--clear`` also
sends Twilio's ``clear`` once a stop has played (it then drops only silence, so the stop
stays exact, but later times shift by up to the lead: the truth logs a ``clear``).
Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import itertools
import json
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from sessions.lines.codec import StreamResampler, decode_ulaw, encode_ulaw
from sessions.speech.tts import EspeakTts, TtsError

READY_PREFIX = "cutin-known-agent: listening "
RATE = 8000
FRAME = 160
"""The ear's frame: 20 ms at 8 kHz, Twilio's chunk."""
MARK = 0.02
"""A sample at or over this amplitude is sound, in the truth's times (cutin's level)."""

GREETING = "<speak>Hello, you are through to the test line.</speak>"
REPLY_PHRASES = (
    "I have your order open here",
    "and I can see the address we have on file",
    "which is the one on Elm Street from last year",
    "the parcel left our warehouse on Monday morning",
    "and the courier expects to deliver it by Thursday",
    "the tracking number is in the email we sent you",
)


def reply_ssml(pause_ms: int) -> str:
    return "<speak>" + f'<break time="{pause_ms}ms"/>'.join(REPLY_PHRASES) + ".</speak>"


@dataclass(frozen=True)
class Behaviour:
    yield_after: int | None
    """Samples from a caller sound's onset to the stop (None: never yields)."""
    ignore_shorter: int
    answer_after: int | None
    """Samples of caller silence before it answers (None: never answers)."""
    answers: int | None
    """How many times it answers at most (None: every time); then it goes silent."""
    talk_after: int | None
    """Samples of caller silence before it talks into a pause (None: waits to answer)."""
    resume: int
    resume_gap: int
    greet_at: int | None
    gap: int
    """Quiet samples that end a caller sound."""
    level: float
    lead: int
    clear: bool
    burst: bool = False
    stall: int = 0
    """Samples it sends nothing for, ``stall_after`` after a caller sound over its speech."""
    stall_after: int = 0


@dataclass
class Speech:
    greeting: np.ndarray
    reply: np.ndarray
    burst: np.ndarray
    """The loudest stretch of the reply, played as a short resumption."""


def render(pause_ms: int, voice: str, wpm: int, level: float) -> Speech:
    """The agent's speech at 8 kHz, rendered once, with near-silence made exact zero."""
    tts = EspeakTts(voice=voice, words_per_minute=wpm)
    down = StreamResampler(16000, RATE)

    def at_8k(ssml: str) -> np.ndarray:
        audio = down.process(tts.synthesize_ssml(ssml))
        down.reset()
        # Below a tenth of the ear's level is silence, exactly, so silences are exact;
        # the silence espeak leaves after the last word is cut (it would hold the floor).
        audio[np.abs(audio) < level / 10] = 0.0
        loud = np.flatnonzero(np.abs(audio) >= MARK)
        end = int(loud[-1]) + 1 + RATE // 100 if loud.size else audio.size
        return audio[:end].astype(np.float32)

    greeting, reply = at_8k(GREETING), at_8k(reply_ssml(pause_ms))
    energy = np.convolve(reply**2, np.ones(FRAME * 10), mode="valid")
    i = int(np.argmax(energy))
    return Speech(greeting, reply, reply[i : i + FRAME * 10].copy())


@dataclass
class Turn:
    audio: np.ndarray
    start: int
    stop: int | None = None
    resume: tuple[int, int] | None = None
    done_logged: bool = False
    stalled: bool = False

    @property
    def end(self) -> int:
        natural = self.start + self.audio.size
        return natural if self.stop is None else min(natural, self.stop)

    def first_sound(self) -> int:
        nz = np.flatnonzero(np.abs(self.audio) >= MARK)
        return self.start + (int(nz[0]) if nz.size else 0)

    def last_sound(self, before: int) -> int | None:
        """The line time just after its last sample of sound before ``before``."""
        upto = min(before, self.end) - self.start
        if upto <= 0:
            return None
        nz = np.flatnonzero(np.abs(self.audio[:upto]) >= MARK)
        return None if nz.size == 0 else self.start + int(nz[-1]) + 1


@dataclass
class Pipeline:
    """One call: the ear, the agent's turns and its output clock."""

    b: Behaviour
    speech: Speech
    log: Any
    heard: int = 0
    sent: int = 0
    pending: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    sound_on: int | None = None
    last_loud: int | None = None
    quiet_since_answer: bool = True
    """No caller sound since the agent last started a turn."""
    stopped_for: int | None = None
    turn: Turn | None = None
    cleared: bool = False
    clear_due: int | None = None
    answered: int = 0
    quiet_mark: int | None = None
    """The first sample at or over MARK in the quiet frames just before (a sound's
    first sample, as cutin reads it, may come a frame before the ear calls it sound)."""
    burst_stop: int | None = None
    """Burst pacing: the onset of the caller sound it stops for, until its clear is out."""
    stall_span: tuple[int, int] | None = None
    """Line times [a, b) of its audio it does not send (a stall)."""
    offset: float = float("inf")
    """Its monotonic clock minus line time: the least over every caller message (burst)."""

    @property
    def heard_end(self) -> int:
        """Line time up to which it has received the caller's audio."""
        return self.heard + self.pending.size

    def hear(self, audio: np.ndarray) -> None:
        self.pending = np.concatenate([self.pending, audio])
        while self.pending.size >= FRAME:
            frame, self.pending = self.pending[:FRAME], self.pending[FRAME:]
            self._frame(frame)
            self.heard += FRAME

    def _frame(self, frame: np.ndarray) -> None:
        b, n0 = self.b, self.heard
        loud_idx = np.flatnonzero(np.abs(frame) >= MARK)
        if loud_idx.size == 0:
            loud_idx = np.flatnonzero(np.abs(frame) >= b.level)
        loud = float(np.sqrt(np.mean(frame.astype(np.float64) ** 2))) >= b.level
        marks = np.flatnonzero(np.abs(frame) >= MARK)
        if loud and loud_idx.size:
            if self.sound_on is None:
                self.sound_on = n0 + int(loud_idx[0])
                first = self.quiet_mark if self.quiet_mark is not None else self.sound_on
                self.log("sound_start", self.sound_on, first_t=first / RATE)
            self.quiet_mark = None
            self.last_loud = n0 + int(loud_idx[-1]) + 1
            long_enough = self.last_loud - self.sound_on >= b.ignore_shorter
            if long_enough and not self._speaking_at(n0):
                self.quiet_since_answer = False  # a sound it did not talk over wants an answer
            self._maybe_stall()
            self._maybe_stop()
        elif self.sound_on is not None and self.last_loud is not None:
            tail = np.flatnonzero(np.abs(frame) >= MARK)
            if tail.size:  # a sound's quiet tail: its end is its last sample of sound
                self.last_loud = n0 + int(tail[-1]) + 1
            if n0 + FRAME - self.last_loud >= b.gap:
                self._sound_ended()
        if not loud and self.sound_on is None:  # where a sound's first sample may be
            if not marks.size:
                self.quiet_mark = None
            elif self.quiet_mark is None:
                self.quiet_mark = n0 + int(marks[0])
        self._maybe_talk()
        if self.clear_due is not None and n0 + FRAME >= self.clear_due:
            self.clear_due = None
            self.cleared = True
            self.log("clear", n0 + FRAME)

    def _sound_ended(self) -> None:
        assert self.sound_on is not None and self.last_loud is not None
        length = self.last_loud - self.sound_on
        self.log("sound_end", self.last_loud, duration_s=length / RATE)
        t = self.turn
        if t is not None and t.stop is None and t.start <= self.sound_on < t.end:
            self.log("ignored", self.last_loud, onset_t=self.sound_on / RATE)
        self.sound_on = None

    def _speaking_at(self, n: int) -> bool:
        t = self.turn
        return t is not None and t.start <= n < t.end

    def _maybe_stop(self) -> None:
        b, t, on = self.b, self.turn, self.sound_on
        if b.yield_after is None or t is None or on is None or t.stop is not None:
            return
        if not self._speaking_at(on) or self.last_loud is None:
            return
        if self.last_loud - on < b.ignore_shorter:
            return
        if b.burst:  # all of it is sent: its clear stops it, where it takes effect
            if self.heard + FRAME < on + b.yield_after:
                return  # decided once it has heard that much (this frame's end)
            t.stop = self.sent
            self.stopped_for = on
            self.burst_stop = on
            return
        stop = max(on + b.yield_after, self.sent)
        t.stop = stop
        self.stopped_for = on
        end = t.last_sound(stop)
        final = end if end is not None else stop
        if b.resume:
            r0 = stop + b.resume_gap
            t.resume = (r0, r0 + b.resume)
            burst = np.flatnonzero(np.abs(self.speech.burst[: b.resume]) >= MARK)
            final = r0 + (int(burst[-1]) + 1 if burst.size else b.resume)
            self.log("resume", r0, end_t=final / RATE, length_s=b.resume / RATE)
        self.log(
            "stop", final, onset_t=on / RATE, latency_s=(final - on) / RATE, decided_t=stop / RATE
        )
        if b.clear:
            self.clear_due = final

    def clear_out(self, at_s: float) -> None:
        """Burst pacing: its clear went out at line time ``at_s``; it stopped there."""
        t, on = self.turn, self.burst_stop
        self.burst_stop = None
        if t is None or on is None:
            return
        at = max(round(at_s * RATE), self.heard_end)
        t.stop = at
        end = t.last_sound(at)
        final = end if end is not None else at
        self.log(
            "stop", final, onset_t=on / RATE, latency_s=(final - on) / RATE, decided_t=at / RATE
        )
        self.log("clear", at, clear_t=round(at_s, 6))
        self.sent = at  # what it sent beyond is dropped: it goes on from here

    def _maybe_stall(self) -> None:
        """``stall_after`` into a caller sound over its speech: ``stall`` of nothing sent."""
        b, t, on = self.b, self.turn, self.sound_on
        if not b.stall or t is None or on is None or t.stalled or not self._speaking_at(on):
            return
        a = max(on + b.stall_after, self.sent)
        k = a - t.start
        if not 0 <= k < t.audio.size:
            return
        t.stalled = True
        t.audio = np.concatenate([t.audio[:k], np.zeros(b.stall, np.float32), t.audio[k:]])
        self.stall_span = (a, a + b.stall)
        self.log("stall", a, length_s=b.stall / RATE, onset_t=on / RATE)

    def _maybe_talk(self) -> None:
        """Answer (or talk into a pause) once the caller has been quiet long enough."""
        b, t = self.b, self.turn
        if t is not None:
            busy_until = max(t.end, t.resume[1] if t.resume else 0)
            played_to = self.heard_end + b.lead if b.burst else self.sent
            if played_to < busy_until:
                return  # its own audio is still going out
            if not t.done_logged:
                t.done_logged = True
                if t.stop is None:
                    self.log("done", t.last_sound(t.end) or t.end)
        if self.quiet_since_answer or self.last_loud is None:
            return
        waits = [w for w in (b.answer_after, b.talk_after) if w is not None]
        if not waits or (b.answers is not None and self.answered >= b.answers):
            return
        wait = min(waits)
        # Decided a lead early (the audio it sends now plays that much later), so the
        # turn starts exactly ``wait`` after the caller's last sound.
        if self.heard + FRAME + b.lead <= self.last_loud + wait:
            return
        start = max(self.last_loud + wait, self.sent)
        talks_early = b.talk_after is not None and (
            b.answer_after is None or b.talk_after < b.answer_after
        )
        self.answered += 1
        self._speak(self.speech.reply, start, "talk_into_pause" if talks_early else "answer")

    def _speak(self, audio: np.ndarray, start: int, why: str) -> None:
        if self.sound_on is not None:
            self._sound_ended()  # what the caller says from now on is a new sound
        self.turn = Turn(audio, start)
        self.stopped_for = None
        self.quiet_since_answer = True
        sound = self.turn.first_sound()
        self.log("speak", start, why=why, sound_t=sound / RATE, duration_s=audio.size / RATE)

    def produce(self, n: int) -> np.ndarray:
        """The next ``n`` samples of the agent's audio (line times sent .. sent + n)."""
        b = self.b
        if self.turn is None and b.greet_at is not None and self.sent + n > b.greet_at:
            self._speak(self.speech.greeting, max(b.greet_at, self.sent), "greeting")
        out = np.zeros(n, np.float32)
        t, m0 = self.turn, self.sent
        if t is not None:
            lo, hi = max(m0, t.start), min(m0 + n, t.end)
            if hi > lo:
                out[lo - m0 : hi - m0] = t.audio[lo - t.start : hi - t.start]
            if t.resume is not None:
                r0, r1 = t.resume
                lo, hi = max(m0, r0), min(m0 + n, r1)
                if hi > lo:
                    out[lo - m0 : hi - m0] = self.speech.burst[lo - r0 : hi - r0]
        self.sent += n
        span = self.stall_span
        if span is not None and span[0] < m0 + n and m0 < span[1]:
            keep = np.ones(n, bool)
            keep[max(0, span[0] - m0) : min(n, span[1] - m0)] = False
            return out[keep]  # a stall: these are never sent
        return out

    def owed(self) -> int:
        """How many samples to send now: up to ``lead`` ahead of what it heard, or (burst
        pacing) the whole turn in progress."""
        upto = self.heard_end + self.b.lead
        t = self.turn
        if self.b.burst and t is not None:
            upto = max(upto, t.end)
        return upto - self.sent


class Truth:
    """The ground-truth file: one JSON object a line, flushed as it is written."""

    def __init__(self, out: TextIO | None) -> None:
        self._out = out

    def write(self, record: dict[str, Any]) -> None:
        if self._out is not None:
            self._out.write(json.dumps(record) + "\n")
            self._out.flush()


async def serve_call(ws: Any, number: int, b: Behaviour, speech: Speech, truth: Truth) -> None:
    sid = ""

    def log(event: str, n: int, **extra: Any) -> None:
        record = {"call": number, "stream_sid": sid, "event": event, "t": round(n / RATE, 6)}
        record.update({k: round(v, 6) if isinstance(v, float) else v for k, v in extra.items()})
        truth.write(record)

    p = Pipeline(b, speech, log)

    async def send(samples: np.ndarray) -> None:
        payload = base64.b64encode(encode_ulaw(samples)).decode("ascii")
        await ws.send(
            json.dumps({"event": "media", "streamSid": sid, "media": {"payload": payload}})
        )

    try:
        async for raw in ws:
            try:
                message = json.loads(raw)
            except (ValueError, TypeError):
                continue
            if not isinstance(message, dict):
                continue
            event = message.get("event")
            if event == "start":
                sid = str(message.get("streamSid") or message.get("start", {}).get("streamSid", ""))
                log("call_start", 0, lead_s=b.lead / RATE)
                await send(p.produce(b.lead))
            elif event == "media" and sid:
                media = message.get("media")
                payload = media.get("payload") if isinstance(media, dict) else None
                if not isinstance(payload, str):
                    continue
                try:
                    audio = decode_ulaw(base64.b64decode(payload, validate=True))
                except ValueError:
                    continue
                p.hear(audio)
                # Its clock onto the line's: this sample left cutin no later than now.
                p.offset = min(p.offset, time.monotonic() - p.heard_end / RATE)
                out = p.produce(p.owed())
                if out.size:
                    await send(out)
                if p.burst_stop is not None:
                    await ws.send(json.dumps({"event": "clear", "streamSid": sid}))
                    p.clear_out(time.monotonic() - p.offset)
                    continue
                if p.cleared:
                    p.cleared = False
                    await ws.send(json.dumps({"event": "clear", "streamSid": sid}))
            elif event == "stop":
                break
    except Exception as exc:  # a broken connection ends this call, never the server
        if not type(exc).__name__.startswith("Connection"):
            print(f"known_agent: call {number}: {exc}", file=sys.stderr, flush=True)
    finally:
        log("call_end", p.heard)


def ms(value: int | None) -> int | None:
    return None if value is None else round(value * RATE / 1000)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="known_agent.py",
        description="A Twilio Media Streams voice agent whose turn-taking is known exactly.",
    )
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on")
    ap.add_argument("--port", type=int, default=8766, help="port (0 picks a free one)")
    ap.add_argument("--truth", type=Path, help="write the ground truth here (JSON Lines)")
    ap.add_argument(
        "--yield-after-ms",
        type=int,
        default=300,
        help="stop this long after a caller sound starts over its speech",
    )
    ap.add_argument("--never-yield", action="store_true", help="talk on over the caller")
    ap.add_argument(
        "--ignore-shorter-ms",
        type=int,
        default=0,
        help="caller sounds shorter than this never stop it nor get an answer",
    )
    ap.add_argument(
        "--answer-after-ms",
        type=int,
        default=800,
        help="answer this long after the caller's sound ends",
    )
    ap.add_argument("--never-answer", action="store_true", help="never answer")
    ap.add_argument("--answers", type=int, help="answer this many times, then go silent")
    ap.add_argument(
        "--talk-into-pauses-after-ms",
        type=int,
        help="start talking once the caller paused this long, mid-turn or not",
    )
    ap.add_argument(
        "--resume-ms",
        type=int,
        default=0,
        help="after a stop, a burst of sound this long, then silence",
    )
    ap.add_argument(
        "--resume-gap-ms",
        type=int,
        default=100,
        help="silence between the stop and the resumption burst",
    )
    ap.add_argument(
        "--greet-after-ms",
        type=int,
        default=500,
        help="when it greets (line time); negative: no greeting",
    )
    ap.add_argument(
        "--gap-ms",
        type=int,
        default=200,
        help="quiet that ends a caller sound (shorter gaps are inside it)",
    )
    ap.add_argument(
        "--level-db",
        type=float,
        default=-40.0,
        help="RMS level (dBFS) of a 20 ms frame that counts as sound",
    )
    ap.add_argument(
        "--lead-ms", type=int, default=200, help="how far its audio runs ahead of what it hears"
    )
    ap.add_argument("--pause-ms", type=int, default=400, help="pauses inside its reply")
    ap.add_argument(
        "--clear",
        action="store_true",
        help="send Twilio's clear once a stop has played (module help)",
    )
    ap.add_argument(
        "--burst",
        action="store_true",
        help="send each turn whole at once; stop with a clear (module help)",
    )
    ap.add_argument(
        "--stall-ms",
        type=int,
        default=0,
        help="after a caller sound over its speech, send nothing for this long (module help)",
    )
    ap.add_argument(
        "--stall-after-ms",
        type=int,
        default=100,
        help="how long into that caller sound the stall begins",
    )
    ap.add_argument("--voice", default="en-us", help="espeak-ng voice")
    ap.add_argument("--wpm", type=int, default=165, help="espeak-ng speaking rate")
    args = ap.parse_args(argv)
    if args.lead_ms < 60:
        ap.error("--lead-ms must be at least 60 (cutin takes 32 ms frames)")
    if not 0 <= args.port <= 65535:
        ap.error("--port must be 0-65535")
    return args


def behaviour(args: argparse.Namespace) -> Behaviour:
    lead = ms(args.lead_ms)
    assert lead is not None
    return Behaviour(
        yield_after=None if args.never_yield else ms(max(0, args.yield_after_ms)),
        ignore_shorter=ms(max(0, args.ignore_shorter_ms)) or 0,
        answer_after=None if args.never_answer else ms(max(0, args.answer_after_ms)),
        answers=None if args.answers is None else max(0, args.answers),
        talk_after=ms(args.talk_into_pauses_after_ms),
        resume=ms(max(0, args.resume_ms)) or 0,
        resume_gap=ms(max(0, args.resume_gap_ms)) or 0,
        greet_at=None if args.greet_after_ms < 0 else ms(args.greet_after_ms),
        gap=ms(max(20, args.gap_ms)) or FRAME,
        level=float(10 ** (args.level_db / 20)),
        lead=lead,
        clear=bool(args.clear),
        burst=bool(args.burst),
        stall=ms(max(0, args.stall_ms)) or 0,
        stall_after=ms(max(0, args.stall_after_ms)) or 0,
    )


async def main(args: argparse.Namespace) -> int:
    from websockets.asyncio.server import serve

    b = behaviour(args)
    try:
        speech = render(args.pause_ms, args.voice, args.wpm, b.level)
    except TtsError as exc:
        print(f"known_agent: {exc}", file=sys.stderr)
        return 2
    out = args.truth.open("a", encoding="utf-8") if args.truth else None
    if args.truth:
        # Its speech beside the truth, so a test can find any of its samples in a recording.
        np.savez(
            args.truth.with_suffix(".speech.npz"),
            greeting=speech.greeting,
            reply=speech.reply,
            burst=speech.burst,
        )
    truth, numbers = Truth(out), itertools.count()

    async def handler(ws: Any) -> None:
        await serve_call(ws, next(numbers), b, speech, truth)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        async with serve(handler, args.host, args.port, max_size=1 << 20) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            print(f"{READY_PREFIX}ws://{args.host}:{port}/", flush=True)
            await stop.wait()
    except OSError as exc:
        print(f"known_agent: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    finally:
        if out is not None:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
