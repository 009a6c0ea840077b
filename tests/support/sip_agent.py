"""A SIP far end on loopback for the SIP line's tests: a second, real PJSIP endpoint.

    python tests/support/sip_agent.py [--bot ws://127.0.0.1:PORT/] [--busy | --not-found
        | --no-answer | --codecs G722/16000] [--hangup-after S]
    sip-agent: listening sip:agent@127.0.0.1:PORT

It listens on a free UDP port of 127.0.0.1 and answers every INVITE as told: 200 OK
(the default), 486 Busy Here, 404 Not Found, ringing forever (180, never answered),
or with only the codecs named (so a G.711-only caller gets 488 Not Acceptable Here).
An answered call's audio goes to the Pipecat bot (``--bot``: the bot's Twilio Media
Streams WebSocket, dialled with cutin's own Twilio line, so the bot hears the SIP
caller and the caller hears the bot, its ``clear`` included) or, without ``--bot``, is
echoed back to the caller 0.2 s later. What happened is printed on stdout, one
``sip-agent:`` line each: ``incoming``, ``answered CODEC``, ``dtmf D`` (each RFC 4733
digit received, in order), ``bot connected``, ``ended by=caller|agent code=N``.
Runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np
import pjsua2 as pj

from sessions.lines.codec import StreamResampler
from sessions.lines.sip import stack as sip_stack

TAG = "sip-agent: "
ECHO_DELAY_FRAMES = 10
"""Echo mode plays the caller back 10 frames (200 ms) later."""


def say(text: str) -> None:
    print(TAG + text, flush=True)


class Bridge:
    """The answered call's audio: to and from the bot, or echoed."""

    def __init__(self, bot_url: str) -> None:
        self.bot_url = bot_url
        self.line: Any = None
        self._echo: deque[bytes] = deque()
        self._up = StreamResampler(8000, 16000)
        self._down = StreamResampler(16000, 8000)
        self._pending = np.zeros(0, dtype=np.float32)
        self._lock = threading.Lock()

    def connect(self) -> None:
        if not self.bot_url:
            return
        from sessions.lines.twilio import TwilioLine

        line = TwilioLine(self.bot_url)
        line.open(20.0)
        self.line = line
        say("bot connected")

    def pull(self) -> bytes:
        if self.line is None:
            if len(self._echo) > ECHO_DELAY_FRAMES:
                return self._echo.popleft()
            return sip_stack.SILENCE
        with self._lock:
            while self._pending.size < sip_stack.FRAME_SAMPLES:
                audio = self._down.process(self.line.take(sip_stack.FRAME_SAMPLES * 2))
                self._pending = np.concatenate([self._pending, audio])
            frame, self._pending = (
                self._pending[: sip_stack.FRAME_SAMPLES],
                self._pending[sip_stack.FRAME_SAMPLES :],
            )
        return np.round(np.clip(frame, -1, 1) * 32767).astype("<i2").tobytes()

    def push(self, data: bytes) -> None:
        if self.line is None:
            self._echo.append(data)
            return
        pcm = np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0
        self.line.send(self._up.process(pcm))

    def close(self) -> None:
        if self.line is not None:
            self.line.close()


class Agent:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.jobs: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.calls: list[Any] = []
        self.bridges: list[Bridge] = []


def make_classes(agent: Agent) -> tuple[type, type]:
    states = sip_stack.active_call_state()

    class Call(pj.Call):  # type: ignore[misc]
        def __init__(self, account: Any, call_id: int) -> None:
            super().__init__(account, call_id)
            self.bridge = Bridge(agent.args.bot)
            self.port: Any = None
            self.we_hung_up = False

        def onCallState(self, prm: Any) -> None:
            info = self.getInfo()
            if info.state == states["confirmed"]:
                say(f"answered {sip_stack.codec_of(self)}")
                if agent.args.hangup_after:
                    agent.jobs.put(("hangup_later", self))
            elif info.state == states["disconnected"]:
                by = "agent" if self.we_hung_up else "caller"
                say(f"ended by={by} code={info.lastStatusCode}")
                agent.jobs.put(("ended", self))

        def onCallMediaState(self, prm: Any) -> None:
            if self.port is None:
                self.port = sip_stack.BridgePort(self.bridge.pull, self.bridge.push)
            sip_stack.connect_audio(self, self.port)

        def onDtmfDigit(self, prm: Any) -> None:
            say(f"dtmf {prm.digit}")

    class Account(pj.Account):  # type: ignore[misc]
        def onIncomingCall(self, prm: Any) -> None:
            call = Call(self, prm.callId)
            agent.calls.append(call)
            say("incoming")
            agent.jobs.put(("incoming", call))

    return Call, Account


def answer(agent: Agent, call: Any) -> None:
    args = agent.args
    param = pj.CallOpParam()
    if args.busy:
        param.statusCode = 486
    elif args.not_found:
        param.statusCode = 404
    elif args.no_answer:
        param.statusCode = 180
    else:
        try:
            call.bridge.connect()  # the bot first, so its greeting is not cut
        except Exception as exc:
            say(f"bot failed {type(exc).__name__}: {exc}")
            param.statusCode = 503
            call.answer(param)
            return
        param.statusCode = 200
    call.answer(param)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--bot", default="", help="the Pipecat bot's Twilio WebSocket URL")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--busy", action="store_true")
    mode.add_argument("--not-found", action="store_true")
    mode.add_argument("--no-answer", action="store_true")
    parser.add_argument("--codecs", default="PCMU/8000,PCMA/8000")
    parser.add_argument("--hangup-after", type=float, default=0.0)
    args = parser.parse_args()

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())

    stack = sip_stack.start_endpoint(
        lambda level, text: None,
        bind="127.0.0.1",
        port=args.port,
        codecs=tuple(args.codecs.split(",")),
        user_agent="cutin-test-agent",
    )
    agent = Agent(args)
    _, account_class = make_classes(agent)
    account = account_class()
    account.create(sip_stack.account_config("sip:agent@127.0.0.1", bind="127.0.0.1"))
    say(f"listening sip:agent@127.0.0.1:{stack.local_port()}")
    hangups: list[tuple[float, Any]] = []
    try:
        while not stop.is_set():
            try:
                job, call = agent.jobs.get(timeout=0.05)
            except queue.Empty:
                job, call = "", None
            if job == "incoming":
                answer(agent, call)
            elif job == "hangup_later":
                hangups.append((time.monotonic() + args.hangup_after, call))
            elif job == "ended":
                call.bridge.close()
            for due, due_call in list(hangups):
                if time.monotonic() >= due:
                    hangups.remove((due, due_call))
                    due_call.we_hung_up = True
                    due_call.hangup(pj.CallOpParam())
    finally:
        for call in agent.calls:
            call.bridge.close()
        agent.calls.clear()
        account = None
        stack.destroy()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
