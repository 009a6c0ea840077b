"""The process that holds a SIP line's call: PJSIP, its threads, its one endpoint.

A SIP line runs ``python -m sessions.lines.sip.worker`` and talks to it over its stdin
and stdout (:mod:`sessions.lines.sip.wire`). Keeping PJSIP in a process of its own is
what makes it safe to drive from cutin: PJSIP allows one endpoint per process and only
threads it knows may call it (cutin's call loop, its UI and its tests run on threads
of their own, and a test dials many calls); a crash in the C library ends this process
and fails the line, never cutin; and whatever PJSIP writes to the terminal goes to
``/dev/null`` (its log, level 2 and below, comes back as ``log`` events instead).

Every PJSIP call happens on this process's main thread (the one that created the
endpoint); a reader thread only queues what cutin sends, and PJSIP's own threads run
the callbacks. The caller's audio waits in a bounded FIFO that the media clock drains
every 20 ms; the agent's audio goes back frame by frame as it is decoded.

Events (JSON): ``ready`` (the SIP port), ``registered``/``register_failed``,
``ringing`` (the provisional code), ``answered`` (the codec), ``media``, ``dtmf`` (the
digits sent) or ``dtmf_failed``, ``ended`` (final SIP code and reason, whether the call
was answered, who ended it, ``no_answer`` when cutin gave up ringing), ``log``,
``error``. After ``ended`` the process exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sys
import threading
import time
from typing import IO, Any

from sessions.lines.sip import wire as wire

MAX_FIFO_S = 2.0
"""Caller audio held for the media clock; older audio is dropped beyond this."""
MAX_LOG_EVENTS = 50
HANGUP_WAIT_S = 5.0


class Worker:
    def __init__(self, out: IO[bytes], config: dict[str, Any]) -> None:
        self._out = out
        self._out_lock = threading.Lock()
        self.config = config
        self._fifo = bytearray()
        self._fifo_lock = threading.Lock()
        self._commands: queue.Queue[tuple[bytes, bytes]] = queue.Queue()
        self._logs = 0
        self.call: Any = None
        self.account: Any = None
        self.port: Any = None
        self.answered = False
        self.ended = threading.Event()
        self.hung_up_by_cutin = False
        self.no_answer = False
        self.reg_state: tuple[int, str] | None = None
        self.dropped_bytes = 0

    # -- to cutin ------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        try:
            with self._out_lock:
                self._out.write(data)
        except (BrokenPipeError, OSError, ValueError):
            self._commands.put((wire.HANGUP, b""))  # cutin is gone: hang up

    def emit(self, name: str, **data: Any) -> None:
        self.send(wire.event(name, **data))

    def log(self, level: int, text: str) -> None:
        if level > 2 or self._logs >= MAX_LOG_EVENTS:
            return
        self._logs += 1
        self.emit("log", level=level, text=text.strip()[:300])

    # -- audio (PJSIP's media thread) ------------------------------------------------------

    def pull(self) -> bytes:
        from sessions.lines.sip.stack import FRAME_BYTES, SILENCE

        with self._fifo_lock:
            if len(self._fifo) < FRAME_BYTES:
                return SILENCE  # the caller's audio is late: a moment of silence
            data = bytes(self._fifo[:FRAME_BYTES])
            del self._fifo[:FRAME_BYTES]
        return data

    def push(self, data: bytes) -> None:
        self.send(wire.frame(wire.AUDIO, data))

    def queue_audio(self, data: bytes) -> None:
        from sessions.lines.sip.stack import RATE

        limit = int(MAX_FIFO_S * RATE) * 2
        with self._fifo_lock:
            self._fifo += data
            over = len(self._fifo) - limit
            if over > 0:
                over += over % 2
                del self._fifo[:over]
                self.dropped_bytes += over

    # -- cutin's commands ------------------------------------------------------------------

    def read_commands(self, stream: IO[bytes]) -> None:
        """Reader thread: audio into the FIFO, everything else to the main thread."""
        try:
            while True:
                got = wire.read_frame(stream)
                if got is None:
                    break
                kind, payload = got
                if kind == wire.AUDIO:
                    self.queue_audio(payload)
                else:
                    self._commands.put((kind, payload))
        except Exception as exc:  # a broken pipe from cutin: hang up
            self.emit("error", text=f"the pipe from cutin broke: {exc}")
        self._commands.put((wire.HANGUP, b""))

    def run(self) -> int:
        """Main thread: start PJSIP, place the call, serve commands until it ends."""
        import pjsua2 as pj

        from sessions.lines.sip import stack as sip_stack

        cfg = self.config
        stack = sip_stack.start_endpoint(self.log, bind=cfg.get("bind", ""))
        try:
            self.emit("ready", port=stack.local_port())
            if not self._register(pj, sip_stack, cfg):
                return 0
            self.call = _make_call_class(pj, sip_stack, self)(self.account)
            param = pj.CallOpParam(True)
            try:
                self.call.makeCall(cfg["uri"], param)
            except pj.Error as exc:
                self.emit("ended", code=0, reason=_pj_reason(exc), answered=False, by="cutin")
                return 0
            self._serve(pj, float(cfg.get("answer_timeout_s", 30.0)))
            # ``ended`` is set inside PJSIP's DISCONNECTED callback: let it return before
            # the call object goes (its destructor would hang up a call still active).
            deadline = time.monotonic() + 1.0
            while self.call.isActive() and time.monotonic() < deadline:
                time.sleep(0.01)
            return 0
        finally:
            self.call = None
            self.port = None
            self.account = None
            stack.destroy()

    def _register(self, pj: Any, sip_stack: Any, cfg: dict[str, Any]) -> bool:
        registrar = cfg.get("registrar", "")
        account = _make_account_class(pj, self)()
        account.create(
            sip_stack.account_config(
                cfg["id_uri"],
                registrar=registrar,
                user=cfg.get("user", ""),
                password=cfg.get("password", ""),
                bind=cfg.get("bind", ""),
            )
        )
        self.account = account
        if not registrar:
            return True
        deadline = time.monotonic() + float(cfg.get("answer_timeout_s", 30.0))
        while self.reg_state is None and time.monotonic() < deadline:
            time.sleep(0.02)
        code, reason = self.reg_state or (408, "no answer")
        if 200 <= code < 300:
            self.emit("registered", code=code)
            return True
        self.emit("register_failed", code=code, reason=reason)
        return False

    def _serve(self, pj: Any, answer_timeout_s: float) -> None:
        ring_deadline = time.monotonic() + answer_timeout_s
        hangup_deadline: float | None = None
        while not self.ended.is_set():
            try:
                kind, payload = self._commands.get(timeout=0.05)
            except queue.Empty:
                kind, payload = b"", b""
            now = time.monotonic()
            if kind == wire.HANGUP or (not self.answered and now > ring_deadline):
                if hangup_deadline is None:
                    self.no_answer = kind != wire.HANGUP
                    self.hung_up_by_cutin = True
                    hangup_deadline = now + HANGUP_WAIT_S
                    self._hangup(pj)
            elif kind == wire.DTMF:
                self._dtmf(pj, payload.decode("ascii", "replace"))
            if hangup_deadline is not None and now > hangup_deadline:
                self.emit("ended", code=0, reason="no reply to the hang-up", answered=self.answered,
                          by="cutin", no_answer=self.no_answer)  # fmt: skip
                return

    def _hangup(self, pj: Any) -> None:
        if self.ended.is_set():
            return
        with contextlib.suppress(pj.Error):  # already ending: DISCONNECTED follows
            self.call.hangup(pj.CallOpParam())

    def _dtmf(self, pj: Any, digits: str) -> None:
        if not self.answered:
            self.emit("dtmf_failed", digits=digits, reason="the call is not answered yet")
            return
        param = pj.CallSendDtmfParam()
        param.digits = digits
        param.method = pj.PJSUA_DTMF_METHOD_RFC2833
        try:
            self.call.sendDtmf(param)
        except pj.Error as exc:
            self.emit("dtmf_failed", digits=digits, reason=_pj_reason(exc))
            return
        self.emit("dtmf", digits=digits)


def _pj_reason(exc: Any) -> str:
    return str(getattr(exc, "reason", "") or getattr(exc, "info", lambda: "")() or exc)


def _make_account_class(pj: Any, worker: Worker) -> Any:
    class Account(pj.Account):  # type: ignore[misc]
        def onRegState(self, prm: Any) -> None:
            worker.reg_state = (int(prm.code), str(prm.reason))

    return Account


def _make_call_class(pj: Any, sip_stack: Any, worker: Worker) -> Any:
    states = sip_stack.active_call_state()

    class Call(pj.Call):  # type: ignore[misc]
        def onCallState(self, prm: Any) -> None:
            info = self.getInfo()
            state = info.state
            if state == states["early"]:
                worker.emit("ringing", code=int(info.lastStatusCode))
            elif state == states["confirmed"] and not worker.answered:
                worker.answered = True
                worker.emit("answered", codec=sip_stack.codec_of(self))
            elif state == states["disconnected"]:
                by = "cutin" if worker.hung_up_by_cutin else "agent"
                worker.emit(
                    "ended",
                    code=int(info.lastStatusCode),
                    reason=str(info.lastReason),
                    answered=worker.answered,
                    by=by,
                    no_answer=worker.no_answer,
                    dropped_bytes=worker.dropped_bytes,
                )
                worker.ended.set()

        def onCallMediaState(self, prm: Any) -> None:
            if worker.port is None:
                worker.port = sip_stack.BridgePort(worker.pull, worker.push)
            if sip_stack.connect_audio(self, worker.port):
                worker.emit("media", codec=sip_stack.codec_of(self))

    return Call


def main() -> None:
    # The pipe to cutin is the stdout this process was given; anything else that
    # writes to fd 1 (PJSIP's first lines are printed before its log is configured)
    # goes nowhere.
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 -- for the life of the process
    stdin = sys.stdin.buffer
    got = wire.read_frame(stdin)
    if got is None or got[0] != wire.CONFIG:
        os._exit(2)
    worker = Worker(out, json.loads(got[1]))
    threading.Thread(target=worker.read_commands, args=(stdin,), daemon=True).start()
    code = 1
    try:
        code = worker.run()
    except Exception as exc:
        worker.emit("error", text=f"{type(exc).__name__}: {exc}")
        worker.emit("ended", code=0, reason=str(exc), answered=worker.answered, by="cutin")
    finally:
        # PJSIP's objects must not be collected after the library is gone.
        os._exit(code)


if __name__ == "__main__":
    main()
