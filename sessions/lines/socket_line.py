"""What every line over a WebSocket shares: one event loop, states, notices, wording, limits.

A transport subclasses :class:`SocketLine` and writes only its protocol:

- :meth:`SocketLine._connect` opens the socket (:meth:`SocketLine._dial`: a
  ``websockets`` connection on the line loop; or a sync one of its own, as the
  ``openai`` client's) with the options of :func:`SocketLine.socket_options` (its
  ``max_size``);
- :meth:`SocketLine._handshake` says hello and waits for the agent if it must;
- :meth:`SocketLine._handle` takes one message from the agent (on the reader);
- :meth:`SocketLine._write` sends one item queued with :meth:`SocketLine._post` (on the
  writer, so ``send`` from the call loop never blocks on the network);
- optionally :meth:`SocketLine._hangup` (say goodbye before the socket closes) and
  :meth:`SocketLine._opened` (the OPEN/FORMAT notices).

A line that frames the caller's audio sets :attr:`SocketLine._frames` (a
:class:`~sessions.lines.wire_audio.WireFrames`) and leaves ``send`` to the base, which
queues ``("media", frames)`` for :meth:`SocketLine._write`. The base also words what
lines say alike: :meth:`SocketLine._json_object` (a text message that must be a JSON
object), :meth:`SocketLine._cleared` (the CLEAR notice), :meth:`SocketLine._format`
(the FORMAT notice) and :meth:`SocketLine._counted` (a note on the 1st, 10th, 100th...
time).

The base keeps the rest the same for every line: a reader and a writer, nothing ever
raised out of them; a state that moves CONNECTING → OPEN → CLOSED|FAILED
once (the first cause is the one reported); a notice queue whose text is one line,
bounded, free of secrets and escape sequences; ERROR notices of one kind shown three
times, then counted; the :class:`~sessions.lines.base.LineLimits`; and the close code
rule of :func:`~sessions.lines.base.is_clean_close` (an abnormal close is FAILED).

One loop for every line: a socket dialled with :meth:`SocketLine._dial` is a
``websockets`` asyncio connection on the one event loop of the process
(:func:`line_loop`, thread ``cutin-lines``), and its reader and writer are two
coroutines there, not two threads per line. The transport does not see it: its
:meth:`~SocketLine._write` and :meth:`~SocketLine._handle` run on that loop and must
never block (``self._conn.send`` there only queues the message, sent in order once
``_write`` returns); a hello sent from :meth:`~SocketLine._handshake` (the opener's
thread) is sent and waited for. A line whose :meth:`~SocketLine._connect` returns a
connection of its own (the Realtime line's, the ``openai`` client's sync one) keeps
a reader and a writer thread.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import json
import math
import queue
import threading
import time
from collections.abc import Coroutine, Iterable
from typing import Any, NoReturn, TypeVar, cast

from websockets.exceptions import ConnectionClosed

from sessions.hostile.redact import Redactor
from sessions.lines.base import (
    LINE_RATE,
    Audio,
    ByteRate,
    LineError,
    LineLimits,
    LineNotice,
    LineState,
    NoticeKind,
    PlayoutBuffer,
    is_clean_close,
)
from sessions.lines.notices import (
    NoticeBoard,
    check_ws_url,
    close_detail,
    connect_failure,
    handshake_failure,
    size_text,
    why,
)
from sessions.lines.wire_audio import WireFrames

_STOP = object()
"""Ends the writer."""
SEND_WAIT_S = 10.0
"""How long the opener's thread waits for a message it sends on the loop (the hello)."""
CLOSE_TIMEOUT_S = 2.0
"""How long a closing socket waits for the agent's close frame."""
HOLD_POLL_S = 0.005
POST_TICK_S = 0.004
"""How often the line loop picks up what other threads posted (the caller's audio from
the pump): at most this much later on the wire, well within a 20 ms frame."""
_T = TypeVar("_T")


class _LineLoop:
    """The one asyncio event loop every socket line of the process runs on, on a daemon
    thread of its own (started at the first dial)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._posted: set[SocketLine] = set()
        """Lines with items posted from other threads since the last :meth:`_deliver`."""
        self._post_lock = threading.Lock()

    def get(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=self._run, args=(loop,), name="cutin-lines", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
                loop.call_soon_threadsafe(self._tick)
            return self._loop

    def here(self) -> bool:
        """Whether this is the loop's thread."""
        return self._thread is not None and threading.current_thread() is self._thread

    def posted(self, line: SocketLine) -> None:
        """``line`` has items waiting in its :attr:`SocketLine._posted` (another thread
        posted them): the loop moves them at its next tick (every :data:`POST_TICK_S`).
        Nobody wakes the loop: a wake-up is a system call during which the poster (the
        pump, for every call's every frame) gives up the interpreter and then waits to
        get it back."""
        with self._post_lock:
            self._posted.add(line)

    def _tick(self) -> None:
        """Every :data:`POST_TICK_S` on the loop: what other threads posted goes to the
        lines' writers."""
        try:
            with self._post_lock:
                lines, self._posted = self._posted, set()
            for line in lines:
                line._deliver()
        finally:
            loop = self._loop
            if loop is not None:
                loop.call_later(POST_TICK_S, self._tick)

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()


_LOOP = _LineLoop()


def line_loop() -> asyncio.AbstractEventLoop:
    """The event loop of every socket line of this process."""
    return _LOOP.get()


def _on_loop(coro: Coroutine[Any, Any, _T], timeout_s: float) -> _T:
    """Run ``coro`` on the line loop from another thread and wait for its result."""
    future = asyncio.run_coroutine_threadsafe(coro, line_loop())
    try:
        return future.result(timeout_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError(f"no answer within {timeout_s:g} s") from None


class _Close:
    def __init__(self, code: int, reason: str) -> None:
        self.code, self.reason = code, reason


class LoopSocket:
    """A ``websockets`` asyncio connection on the line loop, used as the transports use
    a sync one: ``send`` and ``close`` from the loop's thread queue the message (sent
    in order by :meth:`flush`, which the writer awaits after every ``_write``); from
    any other thread they are sent and waited for."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._out: list[str | bytes | _Close] = []
        self._flushing: asyncio.Lock | None = None

    def send(self, message: str | bytes) -> None:
        if _LOOP.here():
            self._out.append(message)
        else:
            _on_loop(self.conn.send(message), SEND_WAIT_S)

    def close(self, code: int = 1000, reason: str = "") -> None:
        if _LOOP.here():
            self._out.append(_Close(code, reason))
            task = asyncio.get_running_loop().create_task(self._quiet_flush())
            task.add_done_callback(lambda t: None)
        else:
            _on_loop(self.conn.close(code, reason), CLOSE_TIMEOUT_S + 1.0)

    async def flush(self) -> None:
        """Send what was queued, in order (raises ``ConnectionClosed`` as ``send`` does)."""
        if self._flushing is None:
            self._flushing = asyncio.Lock()
        async with self._flushing:
            while self._out:
                item = self._out.pop(0)
                if isinstance(item, _Close):
                    await self.conn.close(item.code, item.reason)
                else:
                    await self.conn.send(item)

    async def _quiet_flush(self) -> None:
        with contextlib.suppress(Exception):
            await self.flush()


WIRE_ALLOWANCE = 2
"""The socket's own cap, in ``max_message_bytes``: room for a message within the limit
that deflates to more than it is (any real compressor stays far within 2×); bigger
frames are refused unread, bigger inflating stopped."""


class SocketLine:
    """The shared half of a :class:`~sessions.lines.base.Line` over a WebSocket."""

    name = "line"
    audio_format = ""
    refused_hint = ""
    """Words added when the agent refuses the upgrade with HTTP 401/403 ("check the key")."""
    deflate = False
    """Offer permessage-deflate. Off: base64 audio barely compresses, and deflating every
    20 ms message cost a line a tenth of its CPU (and the agent as much again)."""

    def __init__(
        self,
        target: str,
        *,
        secrets: Iterable[str | None] = (),
        urls: Iterable[str | None] = (),
        limits: LineLimits | None = None,
        playout: PlayoutBuffer | None = None,
    ) -> None:
        self.target = target
        """Already redacted by the transport; shown as is wherever it appears in text."""
        self.limits = limits or LineLimits()
        self.playout = playout if playout is not None else PlayoutBuffer()
        board = NoticeBoard(Redactor(secrets=secrets, urls=urls, shown=[target]))
        self._board = board
        # The transport's words for notices (see NoticeBoard): cleaned and bounded.
        self._notify, self._error, self._once = board.notify, board.error, board.once
        self._capped = board.capped
        self._clean = board.clean
        self._lock = threading.Lock()
        self._state = LineState.CONNECTING
        self._used = False
        self._closing = False
        self._conn: Any = None
        self._outbox: queue.Queue[Any] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._aoutbox: asyncio.Queue[Any] | None = None
        """The writer's queue when the socket is on the line loop (see :meth:`_dial`)."""
        self._posted: collections.deque[Any] = collections.deque()
        """Items posted from other threads, moved to :attr:`_aoutbox` on the loop."""
        self._tasks: dict[str, concurrent.futures.Future[None]] = {}
        self._shaking = False
        """The opener is sending its hello (:meth:`_handshake`): a close the reader sees
        meanwhile waits for it, as one after :attr:`_ready` does (see :attr:`_decided`)."""
        self._ready = threading.Event()
        """Set by the transport when its handshake is answered (or by a failure)."""
        self._handshake_error: str | None = None
        self._decided = threading.Event()
        """Set when :meth:`open` has succeeded or failed: until then the reader holds what
        arrives after the handshake, so OPEN comes first and an early hang-up is not
        mistaken for a failed handshake."""
        self._send_lock = threading.Lock()
        self._frames: WireFrames | None = None
        """The caller's audio as wire frames, for the base's :meth:`send`."""
        self._rate = ByteRate(self.limits.max_bytes_per_s)
        self.messages_dropped = 0
        """Agent messages dropped unread for going over the byte rate."""
        self.bytes_dropped = 0

    # -- for the transport ---------------------------------------------------------------

    def _connect(self, timeout_s: float) -> Any:
        """Open the socket; an exception is worded by :meth:`_connect_failure`."""
        raise NotImplementedError

    def _handshake(self, deadline: float, timeout_s: float) -> None:
        """Say hello (directly on ``self._conn``); raise :class:`LineError` if refused."""

    def _opened(self) -> None:
        """The line is open: say so (OPEN and FORMAT notices)."""
        self._notify(NoticeKind.OPEN, f"connected to {self.target}", {"target": self.target})

    def _recv(self) -> str | bytes:
        return cast("str | bytes", self._conn.recv())

    def _handle(self, raw: str | bytes) -> None:
        """One message from the agent (the reader: on the line loop, never blocking).
        Raising reports it, no more."""
        raise NotImplementedError

    def _write(self, item: Any) -> None:
        """Send one item from the outbox (the writer: on the line loop, where
        ``self._conn.send`` queues the message, sent in order when this returns)."""
        raise NotImplementedError

    def _hangup(self) -> None:
        """Called once by :meth:`close` on an open line: queue any goodbye, then
        :meth:`_post_stop`; the base closes the socket once the writer is done."""
        self._post_stop()

    def _ended(self) -> None:
        """The line reached CLOSED or FAILED (any thread): drop what waits on it."""

    def socket_options(self, timeout_s: float) -> dict[str, Any]:
        """Options for ``websockets``' ``connect``. Its ``max_size`` caps both a frame as
        it comes (refused before its payload is read) and, with permessage-deflate, what
        the frame inflates to; but a message of at most ``max_message_bytes`` can come
        in a bigger deflated frame (random bytes grow by a few KiB). So the socket is
        given :data:`WIRE_ALLOWANCE` times the limit, which bounds both the frame read
        and the inflating, and :meth:`_admit` holds the message itself, as the agent
        sent it (decompressed), to ``max_message_bytes`` exactly."""
        wire = self.limits.max_message_bytes * WIRE_ALLOWANCE
        options: dict[str, Any] = {"open_timeout": timeout_s, "max_size": wire}
        if not self.deflate:
            options["compression"] = None
        return options

    # -- the Line protocol ---------------------------------------------------------------

    @property
    def state(self) -> LineState:
        with self._lock:
            return self._state

    def open(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            if self._used or self._closing:
                raise LineError(f"{self.name}: the line to {self.target} was already used")
            self._used = True
        deadline = time.monotonic() + timeout_s
        try:
            self._conn = self._connect(timeout_s)
        except LineError as exc:
            self._fail_open(str(exc))
        except Exception as exc:  # every failure becomes one line
            words = connect_failure(self.name, self.target, exc, timeout_s, self.refused_hint)
            self._fail_open(words)
        self._start("reader")
        self._shaking = True
        try:
            self._handshake(deadline, timeout_s)
        except LineError as exc:
            self._fail_open(str(exc))
        except Exception as exc:
            self._fail_open(handshake_failure(self.name, self.target, self._why(exc), exc))
        finally:
            self._shaking = False
        with self._lock:
            ready = self._state is LineState.CONNECTING and not self._closing
            if ready:
                self._state = LineState.OPEN
        if not ready:
            self._fail_open(f"{self.name}: the line to {self.target} ended during the handshake")
        self._start("writer")
        self._opened()
        self._decided.set()

    def send(self, samples: Audio) -> None:
        """Queue the caller's audio as :attr:`_frames` cuts it: one ``("media", frames)``
        item, posted under the send lock so frames leave in audio order."""
        if self._frames is None:
            raise NotImplementedError
        if not self.is_open:
            return
        with self._send_lock:
            frames = self._frames.frames(samples)
            if frames:
                self._post(("media", frames))

    def take(self, n: int) -> Audio:
        return self.playout.take(n)

    def notices(self) -> list[LineNotice]:
        return self._board.drain()

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            was_open = self._state is LineState.OPEN
        if was_open:
            self._hangup()
        else:
            self._post_stop()
        self._join("writer", 5.0)
        self._close_socket()
        self._join("reader", 2.0)
        with self._lock:
            never_opened = self._state is LineState.CONNECTING
            if never_opened:
                self._state = LineState.CLOSED
        if not never_opened:
            self._end(LineState.CLOSED, f"hung up on {self.target}", {"by": "cutin", "code": 1000})

    # -- helpers for the transport -------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self._state is LineState.OPEN

    def _post(self, item: Any) -> None:
        """Queue ``item`` for :meth:`_write` (any thread; dropped once the line ended)."""
        box = self._aoutbox
        if box is None:
            self._outbox.put(item)
        elif _LOOP.here():
            self._deliver()  # what other threads posted first
            box.put_nowait(item)
        else:
            self._posted.append(item)
            _LOOP.posted(self)

    def _deliver(self) -> None:
        """Move what other threads posted to the writer's queue, in order (the loop)."""
        box = self._aoutbox
        if box is None:
            return
        while self._posted:
            box.put_nowait(self._posted.popleft())

    def _post_stop(self) -> None:
        self._post(_STOP)

    def _dial(self, url: str, timeout_s: float) -> Any:
        """A ``websockets`` connection to ``url`` (checked first), for :meth:`_connect`:
        an asyncio one on the line loop (a :class:`LoopSocket`)."""
        check_ws_url(url, self.name, self.target)
        from websockets.asyncio.client import connect

        options = self.socket_options(timeout_s)

        async def dial() -> Any:
            return await connect(url, close_timeout=CLOSE_TIMEOUT_S, **options)

        conn = _on_loop(dial(), timeout_s + 5.0)
        self._aoutbox = asyncio.Queue()
        return LoopSocket(conn)

    def _json_object(self, raw: str, what: str = "a message") -> dict[str, Any] | None:
        """The agent's text message as a JSON object; None (an ERROR notice) if it is not."""
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError):
            self._error("not_json", f"{what} that is not JSON: {raw[:60]!r}")
            return None
        if not isinstance(message, dict):
            self._error("not_object", f"a JSON message that is not an object: {raw[:60]!r}")
            return None
        return message

    def _cleared(self, dropped: int, said: str = "") -> float:
        """The CLEAR notice for ``dropped`` samples the agent's clear (``said``: its
        name, when the words should give it) emptied from the playout; the seconds."""
        seconds = dropped / LINE_RATE
        named = f" ({said})" if said else ""
        self._notify(
            NoticeKind.CLEAR,
            f"the agent cleared {seconds:.2f} s of queued audio{named}",
            {"dropped_s": seconds, "dropped_samples": dropped},
        )
        return seconds

    def _format(self, detail: str, encoding: str, rate: int) -> None:
        """The FORMAT notice of a mono wire format the protocol states."""
        self._notify(
            NoticeKind.FORMAT,
            detail,
            {"encoding": encoding, "rate": rate, "channels": 1, "stated": True},
        )

    def _counted(
        self, key: str, count: int, detail: str, data: dict[str, Any] | None = None
    ) -> None:
        """An AGENT_EVENT note of the ``count``-th time of ``key``, given on the 1st,
        10th, 100th... (bounded however long the call)."""
        if count == 1 or math.log10(count).is_integer():
            self._notify(
                NoticeKind.AGENT_EVENT, detail, {"kind": key, "count": count, **(data or {})}
            )

    def _mark_fits(self, name: str, waiting: int, word: str = "mark") -> bool:
        """Whether an agent's marker (its protocol's ``word`` for one) may wait for its
        audio, ERROR notices ``WORD_too_long`` / ``WORD_limit`` if not: its name within
        :attr:`LineLimits.max_mark_chars`, fewer than ``max_marks`` waiting."""
        if len(name) > self.limits.max_mark_chars:
            self._error(
                f"{word}_too_long",
                f"a {word} name of {len(name)} characters (over {self.limits.max_mark_chars});"
                " it is not echoed",
                {"length": len(name), "limit": self.limits.max_mark_chars},
            )
            return False
        if waiting >= self.limits.max_marks:
            self._error(
                f"{word}_limit",
                f"over {self.limits.max_marks} {word}s wait for their audio; this one is dropped",
                {"limit": self.limits.max_marks},
            )
            return False
        return True

    def _wait_ready(self, deadline: float, what: str, timeout_s: float) -> None:
        """Wait for :attr:`_ready` (the transport's handshake answer) until ``deadline``."""
        self._shaking = False  # sent: a close from here on is the answer
        if not self._ready.wait(max(0.0, deadline - time.monotonic())):
            raise LineError(f"{self.name}: no {what} from {self.target} within {timeout_s:g} s")
        if self._handshake_error is not None:
            raise LineError(self._handshake_error)

    def _refuse_handshake(self, detail: str) -> None:
        """The agent refused the handshake (the reader): :meth:`open` raises ``detail``."""
        if not self._ready.is_set():
            self._handshake_error = self._clean(detail)
            self._ready.set()

    def _end(self, state: LineState, detail: str, data: dict[str, Any]) -> None:
        """Move to a final state once; the first cause is the one reported."""
        with self._lock:
            if self._state in (LineState.CLOSED, LineState.FAILED):
                return
            self._state = state
            kind = NoticeKind.CLOSED if state is LineState.CLOSED else NoticeKind.FAILED
            self._summarize()
            self._notify(kind, detail, data)  # under the lock: no second final notice
        self._post_stop()
        self._ended()

    # -- reader and writer ---------------------------------------------------------------

    def _start(self, role: str) -> None:
        """Start the reader or the writer: coroutines on the line loop for a socket
        there, else a thread each."""
        if isinstance(self._conn, LoopSocket):
            run = self._aread_loop if role == "reader" else self._awrite_loop
            self._tasks[role] = asyncio.run_coroutine_threadsafe(run(), line_loop())
            return
        target = self._read_loop if role == "reader" else self._write_loop
        thread = threading.Thread(target=target, name=f"cutin-{self.name}-{role}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _join(self, role: str, timeout_s: float) -> None:
        task = self._tasks.get(role)
        if task is not None:
            if not _LOOP.here():
                concurrent.futures.wait([task], timeout=timeout_s)
            return
        current = threading.current_thread()
        for thread in self._threads:
            if thread.name.endswith(role) and thread is not current and thread.is_alive():
                thread.join(timeout=timeout_s)

    def _close_socket(self, code: int = 1000, reason: str = "") -> None:
        if self._conn is not None:
            try:
                self._conn.close(code=code, reason=reason)
            except TypeError:  # a connection whose close takes no code
                with contextlib.suppress(Exception):
                    self._conn.close()
            except Exception:
                pass

    def _read_loop(self) -> None:
        try:
            while True:
                try:
                    raw = self._recv()
                except ConnectionClosed as exc:
                    self._hold_until_decided()
                    self._socket_closed(exc)
                    return
                self._hold_until_decided()
                self._take(raw)
        except Exception as exc:  # never out of the thread
            self._broke(exc)

    def _hold_until_decided(self) -> None:
        if self._ready.is_set() and not self._decided.is_set():
            self._decided.wait(5.0)

    async def _ahold_until_decided(self, *, closed: bool = False) -> None:
        """:meth:`_hold_until_decided` on the loop; a close (``closed``) also waits while
        the opener is still sending its hello (its send is waited for on another
        thread, so the agent's answer can come first)."""
        deadline = time.monotonic() + 5.0
        while not self._decided.is_set() and time.monotonic() < deadline:
            if not (self._ready.is_set() or (closed and self._shaking)):
                return
            await asyncio.sleep(HOLD_POLL_S)

    def _take(self, raw: str | bytes) -> None:
        """One message from the agent, admitted: handled, its playout drops noted."""
        if not self._admit(raw):
            return
        try:
            self._handle(raw)
        except Exception as exc:  # one bad message never ends the line
            self._error("unhandled", f"a message cutin could not handle: {exc!r:.80}")
        if self.playout.dropped:
            self._note_playout()

    def _broke(self, exc: Exception) -> None:
        if not self._closing:
            detail = f"{self.name}: the line to {self.target} broke: {self._why(exc)}"
            self._refuse_handshake(detail)
            self._end(LineState.FAILED, detail, {"by": "cutin"})

    async def _aread_loop(self) -> None:
        """The reader on the line loop."""
        conn = cast(LoopSocket, self._conn).conn
        try:
            while True:
                try:
                    raw = await conn.recv()
                except ConnectionClosed as exc:
                    await self._ahold_until_decided(closed=True)
                    self._socket_closed(exc)
                    return
                await self._ahold_until_decided()
                self._take(raw)
        except Exception as exc:  # never out of the task
            self._broke(exc)

    async def _awrite_loop(self) -> None:
        """The writer on the line loop."""
        box, conn = self._aoutbox, cast(LoopSocket, self._conn)
        assert box is not None
        while True:
            item = await box.get()
            if item is _STOP:
                return
            try:
                self._write(item)
                await conn.flush()
            except ConnectionClosed:
                return  # the reader reports how it ended
            except Exception as exc:  # never out of the task
                if self.state is not LineState.OPEN:
                    return
                self._error("send", f"could not send to the agent: {self._why(exc)}")

    def _write_loop(self) -> None:
        while True:
            item = self._outbox.get()
            if item is _STOP:
                return
            try:
                self._write(item)
            except ConnectionClosed:
                return  # the reader reports how it ended
            except Exception as exc:  # never out of the thread
                if self.state is not LineState.OPEN:
                    return
                self._error("send", f"could not send to the agent: {self._why(exc)}")

    def _admit(self, raw: str | bytes) -> bool:
        """Whether a message fits the limits; those over them are dropped unread."""
        size = len(raw)
        if isinstance(raw, str) and size * 4 > self.limits.max_message_bytes:
            size = len(raw.encode("utf-8", "surrogatepass"))  # as it came: UTF-8 bytes
        if size > self.limits.max_message_bytes:  # within the socket's wire allowance
            self._too_big(size)
            self._close_socket(1009, "message too big")
            return False
        if self._rate.admit(size, time.monotonic()):
            return True
        self.messages_dropped += 1
        self.bytes_dropped += size
        rate = size_text(self.limits.max_bytes_per_s)
        self._error(
            "rate",
            f"the agent sent over {rate} in one second; its messages are dropped unread",
            {"limit_bytes_per_s": self.limits.max_bytes_per_s},
        )
        return False

    def _note_playout(self) -> None:
        """Say once that agent audio is dropped beyond the playout buffer (the summary
        at the line's end has the total)."""
        dropped = self.playout.dropped / LINE_RATE
        self._once(
            "playout_full",
            NoticeKind.NOTE,
            f"the agent sent audio beyond the {self.playout.max_s:g} s playout buffer:"
            f" {dropped:.2f} s dropped; further drops are counted in the line's summary",
            {"kind": "playout_full", "dropped_s": round(dropped, 3), "max_s": self.playout.max_s},
        )

    def _summarize(self) -> None:
        """The line's SUMMARY notice (see :meth:`NoticeBoard.summarize`): here also
        messages and agent audio dropped."""
        audio_s = round(self.playout.dropped / LINE_RATE, 3)
        self._board.summarize(
            [
                (
                    "messages_dropped",
                    self.messages_dropped,
                    f"{self.messages_dropped} messages dropped",
                ),
                ("bytes_dropped", self.bytes_dropped if self.messages_dropped else 0, ""),
                ("audio_dropped_s", audio_s, f"{audio_s:.2f} s of agent audio dropped"),
            ]
        )

    def _too_big(self, size: int | None) -> None:
        limit = size_text(self.limits.max_message_bytes)
        got = f" ({size_text(size)})" if size else ""
        self._error(
            "too_big",
            f"the agent sent a message over the {limit} limit{got}; cutin hangs up",
            {"limit_bytes": self.limits.max_message_bytes, "size": size},
        )
        detail = f"{self.name}: cutin dropped the line: a message over {limit} (code 1009)"
        self._refuse_handshake(detail)
        self._end(LineState.FAILED, detail, {"by": "cutin", "code": 1009})

    def _socket_closed(self, exc: ConnectionClosed) -> None:
        """How the socket ended, as a notice: the one close-code rule of every line."""
        if self._closing:
            return  # close() reports the hang-up
        rcvd, sent = exc.rcvd, exc.sent
        if sent is not None and sent.code == 1009 and (rcvd is None or rcvd.code == 1009):
            self._too_big(None)  # refused by the socket before it was read
            return
        code = rcvd.code if rcvd is not None else None
        reason = rcvd.reason if rcvd is not None else ""
        detail = close_detail(self.target, code, reason, clean=is_clean_close(code))
        code = 1006 if code is None else code
        handshaking = not self._decided.is_set()
        clean = is_clean_close(code) and not handshaking
        state = LineState.CLOSED if clean else LineState.FAILED
        self._refuse_handshake(f"{self.name}: {detail} during the handshake")
        self._end(state, detail, {"by": "agent", "code": code})

    # -- wording -------------------------------------------------------------------------

    def _fail_open(self, message: str) -> NoReturn:
        """End a failed :meth:`open`: state FAILED, one FAILED notice, socket closed."""
        message = self._clean(message)
        self._end(LineState.FAILED, message, {"stage": "open"})
        with self._lock:
            self._closing = True
        self._decided.set()
        self._post_stop()
        self._close_socket()
        self._join("reader", 2.0)
        raise LineError(message) from None

    def _why(self, exc: BaseException) -> str:
        return self._clean(why(exc))
