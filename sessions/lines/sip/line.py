"""A SIP call to a black-box agent: ``--agent sip:USER@HOST[:PORT]``.

cutin places a real SIP call with PJSIP (the ``pjsua2`` wheel, the ``sip`` extra):
INVITE offering G.711 μ-law and A-law only, RTP both ways at 8 kHz in 20 ms frames,
DTMF as RFC 4733 telephone events (:meth:`SipLine.send_dtmf`), BYE at the end. PJSIP
runs in a worker process of its own (:mod:`sessions.lines.sip.worker`, which says
why); this module is the :class:`~sessions.lines.base.Line` cutin's call loop drives:
the caller's 16 kHz audio is resampled to 8 kHz and piped to the worker, the agent's
8 kHz audio comes back, is resampled to 16 kHz and queued in the
:class:`~sessions.lines.base.PlayoutBuffer`.

A phone line has no ``clear``: when the agent yields, its audio simply ends (or turns
to comfort noise), which the call loop's VAD sees as the agent stopping.

A call that cannot start (busy, not found, no answer, no common codec, unreachable,
registration refused) fails :meth:`SipLine.open` with one line (:mod:`.sip_words`);
an optional account (``CUTIN_SIP_USER``, ``CUTIN_SIP_PASSWORD``,
``CUTIN_SIP_REGISTRAR``) registers first and answers digest challenges; the password
never reaches a notice, the log or the screen.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import queue
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from sessions.hostile.redact import Redactor
from sessions.lines.base import (
    LINE_RATE,
    Audio,
    LineError,
    LineNotice,
    LineState,
    NoticeKind,
    PlayoutBuffer,
)
from sessions.lines.codec import StreamResampler
from sessions.lines.notices import NoticeBoard
from sessions.lines.sip import wire as wire
from sessions.lines.sip.uri import SipAccount, parse_sip, sip_account
from sessions.lines.sip.words import ended_words, failure_words

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

SIP_RATE = 8000
AUDIO_FORMAT = "audio/PCMU or PCMA;rate=8000 (SIP/RTP)"
DTMF_DIGITS = frozenset("0123456789*#ABCD")
MAX_DTMF = 32
"""Digits in one :meth:`SipLine.send_dtmf`."""
OUTBOX_FRAMES = 200
"""Caller frames waiting for the worker's pipe (about 6 s); more are dropped."""


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``sip:USER@HOST[:PORT]``."""
    assert spec.url is not None
    return SipLine(spec.url)


def sip_available() -> bool:
    return importlib.util.find_spec("pjsua2") is not None


class SipLine:
    """A SIP call as a :class:`~sessions.lines.base.Line` (see the module)."""

    name = "sip"

    def __init__(
        self,
        agent: str,
        *,
        account: SipAccount | None = None,
        playout: PlayoutBuffer | None = None,
        bind: str = "",
    ) -> None:
        address = parse_sip(agent)
        self.account = account if account is not None else sip_account()
        self.uri = address.uri
        self.target = address.shown
        self.audio_format = AUDIO_FORMAT
        self.playout = playout if playout is not None else PlayoutBuffer()
        loopback = address.host == "localhost" or address.host.startswith("127.")
        self.bind = bind or ("127.0.0.1" if loopback else "")
        """Local address for SIP and RTP: loopback for an agent on loopback (so the SDP
        offers an address it can reach), else every interface."""
        self._password = address.password or self.account.password
        self._board = NoticeBoard(
            Redactor(secrets=[self._password], shown=[self.target]),
        )
        self._lock = threading.Lock()
        self._state = LineState.CONNECTING
        self._used = False
        self._closing = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._outbox: queue.Queue[bytes | None] = queue.Queue(OUTBOX_FRAMES)
        self._decided = threading.Event()
        self._answered: dict[str, Any] | None = None
        self._ended: dict[str, Any] | None = None
        self._ended_event = threading.Event()
        self._rang = False
        self._replied = False
        self._stderr: deque[str] = deque(maxlen=20)
        self._up = StreamResampler(SIP_RATE, LINE_RATE)
        self._down = StreamResampler(LINE_RATE, SIP_RATE)
        self._timeout_s = 10.0
        self.frames_dropped = 0
        """Caller frames dropped because the worker's pipe was full."""
        self.codec = ""
        self.dtmf_sent: list[str] = []

    # -- the Line protocol ---------------------------------------------------------------

    @property
    def state(self) -> LineState:
        with self._lock:
            return self._state

    def open(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            if self._used:
                raise LineError(f"sip: the line to {self.target} was already used")
            self._used = True
        self._timeout_s = timeout_s
        if not sip_available():
            self._fail_open("sip: SIP lines need PJSIP's Python binding: pip install 'cutin[sip]'")
        self._proc = self._spawn()
        config = {
            "uri": self.uri,
            "id_uri": self._id_uri(),
            "answer_timeout_s": timeout_s,
            "bind": self.bind,
            "registrar": self.account.registrar,
            "user": self.account.user,
            "password": self._password,
        }
        self._write(wire.frame(wire.CONFIG, json.dumps(config).encode()))
        self._start(self._read_loop, "reader")
        self._start(self._stderr_loop, "stderr")
        # The worker gives up ringing at timeout_s; registration may take as long before.
        if not self._decided.wait(2 * timeout_s + 15.0):
            self._fail_open(f"sip: the SIP worker did not answer within {2 * timeout_s + 15:g} s")
        if self._answered is None:
            self._fail_open(self._failure())
        with self._lock:
            if self._closing or self._state is not LineState.CONNECTING:
                opened = False
            else:
                self._state, opened = LineState.OPEN, True
        if not opened:
            self._fail_open(f"sip: the call to {self.target} ended as it was answered")
        self._start(self._write_loop, "writer")
        codec = self.codec or "G.711"
        self._board.notify(
            NoticeKind.OPEN,
            f"connected to {self.target} (SIP, {codec})",
            {"target": self.target, "codec": codec},
        )
        encoding = "audio/x-alaw" if codec.upper().startswith("PCMA") else "audio/x-mulaw"
        self._board.notify(
            NoticeKind.FORMAT,
            f"the agent's audio: {codec} over RTP",
            {"encoding": encoding, "sampleRate": SIP_RATE, "channels": 1},
        )

    def send(self, samples: Audio) -> None:
        if self.state is not LineState.OPEN:
            return
        audio = self._down.process(np.asarray(samples, dtype=np.float32))
        if audio.size == 0:
            return
        pcm = np.round(np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
        try:
            self._outbox.put_nowait(wire.frame(wire.AUDIO, pcm))
        except queue.Full:
            self.frames_dropped += 1

    def take(self, n: int) -> Audio:
        return self.playout.take(n)

    def notices(self) -> list[LineNotice]:
        return self._board.drain()

    def send_dtmf(self, digits: str) -> None:
        """Send ``digits`` (0-9, *, #, A-D) as RFC 4733 events; a DTMF notice follows
        once they are on the wire. :class:`LineError` for anything else."""
        digits = digits.strip().upper()
        if not digits or len(digits) > MAX_DTMF or not set(digits) <= DTMF_DIGITS:
            raise LineError(f"DTMF is 1 to {MAX_DTMF} of 0-9 * # A-D, got {digits[:40]!r}")
        if self.state is not LineState.OPEN:
            raise LineError(f"sip: the call to {self.target} is not connected")
        try:  # never waits: the call's frame clock may be the one asking
            self._outbox.put_nowait(wire.frame(wire.DTMF, digits.encode("ascii")))
        except queue.Full:
            raise LineError(
                f"sip: DTMF {digits} not sent: the SIP worker is behind (its pipe is full)"
            ) from None

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            was_open = self._state is LineState.OPEN
        if was_open:
            with contextlib.suppress(queue.Full):
                self._outbox.put(wire.frame(wire.HANGUP), timeout=1.0)
            self._ended_event.wait(8.0)
        self._stop_process()
        ended = self._ended or {}
        if was_open and ended.get("by", "cutin") == "cutin":
            self._end(
                LineState.CLOSED, f"hung up on {self.target} (BYE)", {"by": "cutin", "code": 200}
            )
        with self._lock:
            if self._state is LineState.CONNECTING:
                self._state = LineState.CLOSED

    # -- the worker ----------------------------------------------------------------------

    def _spawn(self) -> subprocess.Popen[bytes]:
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        for name in ("CUTIN_SIP_PASSWORD",):  # passed in the config frame, not inherited
            env.pop(name, None)
        try:
            return subprocess.Popen(
                [sys.executable, "-m", "sessions.lines.sip.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,  # Ctrl-C in the terminal is cutin's to handle
            )
        except OSError as exc:
            self._fail_open(f"sip: cannot start the SIP worker: {exc}")

    def _id_uri(self) -> str:
        user = self.account.user or "cutin"
        if self.account.registrar:
            host = parse_sip(self.account.registrar).host
        else:
            host = parse_sip(self.uri).host
        host = f"[{host}]" if ":" in host else host
        return f"sip:{user}@{host}"

    def _write(self, data: bytes) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(data)
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the reader reports how the worker ended

    def _write_loop(self) -> None:
        while True:
            item = self._outbox.get()
            if item is None:
                return
            self._write(item)

    def _read_loop(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        try:
            while True:
                got = wire.read_frame(proc.stdout)
                if got is None:
                    break
                kind, payload = got
                if kind == wire.AUDIO:
                    self._on_audio(payload)
                elif kind == wire.EVENT:
                    self._on_event(json.loads(payload))
        except Exception as exc:  # never out of the thread
            self._stderr.append(f"{type(exc).__name__}: {exc}")
        if self._ended is None:  # the worker died without saying how the call ended
            tail = " ".join(self._stderr)[-200:]
            detail = f"sip: the SIP worker stopped unexpectedly{': ' + tail if tail else ''}"
            self._ended = {"code": 0, "reason": detail, "worker_died": True}
            self._ended_event.set()
            self._decided.set()
            self._end(LineState.FAILED, detail, {"by": "cutin"})

    def _stderr_loop(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stderr is not None
        for raw in proc.stderr:
            self._stderr.append(raw.decode("utf-8", "replace").strip()[:300])

    def _on_audio(self, payload: bytes) -> None:
        if len(payload) % 2 or not self.is_open:
            return
        pcm = np.frombuffer(payload, dtype="<i2").astype(np.float32) / 32768.0
        self.playout.push(self._up.process(pcm))

    def _on_event(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        if name == "ringing":
            self._rang = self._replied = True
        elif name in ("answered", "media"):
            self._replied = True
            self.codec = str(event.get("codec") or self.codec)
            if name == "answered":
                self._answered = event
                self._decided.set()
        elif name == "registered":
            self._board.notify(NoticeKind.AGENT_EVENT, "registered with the SIP registrar",
                               {"event": "sip_registered"})  # fmt: skip
        elif name == "register_failed":
            self._ended = {**event, "register_failed": True}
            self._ended_event.set()
            self._decided.set()
        elif name == "dtmf":
            digits = str(event.get("digits", ""))
            self.dtmf_sent.append(digits)
            self._board.notify(NoticeKind.DTMF, f"sent DTMF {digits}", {"digits": digits})
        elif name == "dtmf_failed":
            self._board.error("dtmf", f"DTMF {event.get('digits')} not sent: "
                              f"{event.get('reason')}")  # fmt: skip
        elif name == "log":
            # After the line has ended, PJSIP's complaints are about its own teardown
            # ("INVITE session already terminated" when a call that never opened is hung
            # up): not a second notice after the one that ended the line.
            if self._state not in (LineState.CLOSED, LineState.FAILED):
                self._board.error("sip_log", f"PJSIP: {event.get('text', '')}")
        elif name == "error":
            self._stderr.append(str(event.get("text", "")))
        elif name == "ended":
            self._on_ended(event)

    def _on_ended(self, event: dict[str, Any]) -> None:
        self._ended = event
        self._ended_event.set()
        self._decided.set()
        if not self._decided_open():
            return  # open() words the failure
        if event.get("by") == "cutin" and self._closing:
            return  # close() reports the hang-up
        detail, clean = ended_words(self.target, event)
        state = LineState.CLOSED if clean else LineState.FAILED
        by = "agent" if event.get("by") == "agent" else "cutin"
        self._end(state, detail, {"by": by, "code": event.get("code"), "reason":
                                  str(event.get("reason", ""))[:100]})  # fmt: skip

    def _decided_open(self) -> bool:
        return self._answered is not None

    def _failure(self) -> str:
        return failure_words(
            self.target,
            self._ended or {},
            timeout_s=self._timeout_s,
            rang=self._rang,
            replied=self._replied,
            registrar=self.account.registrar,
        )

    def _stop_process(self) -> None:
        with contextlib.suppress(queue.Full):
            self._outbox.put_nowait(None)
        proc = self._proc
        if proc is None:
            return
        with contextlib.suppress(Exception):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            proc.wait(timeout=8.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5.0)

    # -- states --------------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self.state is LineState.OPEN

    def _start(self, run: Any, role: str) -> None:
        threading.Thread(target=run, name=f"cutin-sip-{role}", daemon=True).start()

    def _end(self, state: LineState, detail: str, data: dict[str, Any]) -> None:
        with self._lock:
            if self._state in (LineState.CLOSED, LineState.FAILED):
                return
            self._state = state
            kind = NoticeKind.CLOSED if state is LineState.CLOSED else NoticeKind.FAILED
            self._summarize()
            self._board.notify(kind, detail, data)
        with contextlib.suppress(queue.Full):
            self._outbox.put_nowait(None)

    def _summarize(self) -> None:
        """The summary every line gives before its last notice (see
        :meth:`NoticeBoard.summarize`): here also caller frames the worker's pipe could
        not take and agent audio beyond the playout buffer."""
        audio_s = round(self.playout.dropped / LINE_RATE, 3)
        self._board.summarize(
            [
                (
                    "caller_frames_dropped",
                    self.frames_dropped,
                    f"{self.frames_dropped} caller frames dropped",
                ),
                ("audio_dropped_s", audio_s, f"{audio_s:.2f} s of agent audio dropped"),
            ]
        )

    def _fail_open(self, message: str) -> NoReturn:
        message = self._board.clean(message)
        with self._lock:
            self._closing = True
        self._end(LineState.FAILED, message, {"stage": "open"})
        self._stop_process()
        raise LineError(message)

    def __repr__(self) -> str:
        return f"SipLine({self.target!r}, {self.state})"
