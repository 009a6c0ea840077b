"""What the telephony media streams share: JSON text both ways, base64 audio, marks.

Twilio, Telnyx, Plivo and Exotel carry a call the same way: cutin (the provider's
side) says hello and streams the caller's audio as JSON ``media`` messages with a
base64 payload; the agent answers with its own audio, a clear (barge-in: stop playing
what is queued) and markers sent back once the audio before them has played; cutin
hangs up with a goodbye and a close (code 1000). :class:`JsonStreamLine` writes that
once; a provider's module says only what is its own:

- its messages: :meth:`~JsonStreamLine._hello` (what cutin sends first),
  :meth:`~JsonStreamLine._media_message` (one frame of the caller's audio),
  :meth:`~JsonStreamLine._message` (any other message, with its numbering) and
  :meth:`~JsonStreamLine._stop` (the goodbye's body, if it has one);
- what it takes: :meth:`~JsonStreamLine._on_message` (its event names; the default
  is ``media``, ``clear`` and ``mark``), the field naming the stream
  (:attr:`~JsonStreamLine.stream_field`), and checks of its own on the agent's media
  (:meth:`~JsonStreamLine._check_media`) and marks (:meth:`~JsonStreamLine._keep_mark`);
- its audio, both ways: :attr:`~SocketLine._frames` out, ``_in`` (a
  :class:`~sessions.lines.wire_audio.G711In` or
  :class:`~sessions.lines.wire_audio.Pcm16In`) in;
- its OPEN and FORMAT notices (:meth:`~SocketLine._opened`).

Every agent message is checked the same way, each fault one capped ERROR notice:
binary (``binary``), not JSON (``not_json``), not an object (``not_object``), another
stream's id (once), no event (``no_event``) or an unknown one (``event:NAME``), media
without a payload, not base64 or empty (``media_no_payload``, ``media_base64``,
``media_empty``), a mark without a name (``mark_no_name``) or past the limit.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from typing import Any, Protocol

from sessions.hostile.redact import redact_url
from sessions.lines.base import Audio, LineLimits, NoticeKind, PlayoutBuffer
from sessions.lines.socket_line import SocketLine
from sessions.lines.wire_audio import PlayedMarks

__all__ = ["JsonStreamLine", "WireIn", "b64", "new_sid", "wire_number"]


FORMAT_CHECKS = 50
"""The agent's first media messages (a second of 20 ms frames) each have their format
checked (:meth:`JsonStreamLine._check_media`) ..."""
FORMAT_CHECK_EVERY = 25
"""... then one in this many: an agent that changes format mid-call is still told within
half a second, and a line does not pay for the check on every message of every call."""


class WireIn(Protocol):
    """The agent's audio into the playout buffer (:class:`~sessions.lines.wire_audio.
    G711In`, :class:`~sessions.lines.wire_audio.Pcm16In`)."""

    def play(self, data: bytes) -> bool: ...

    def clear(self) -> int: ...


def b64(data: bytes) -> str:
    """``data`` as a base64 payload."""
    return base64.b64encode(data).decode("ascii")


def new_sid(prefix: str) -> str:
    """A Twilio-style id: ``prefix`` and 32 hex digits (``MZ…``, ``CA…``, ``AC…``)."""
    return prefix + uuid.uuid4().hex


def wire_number(value: Any) -> int | None:
    """A message number as the providers write it (a digit string, or an int), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 10**15 else None
    if isinstance(value, str) and value.isdigit() and len(value) < 16:
        return int(value)
    return None


class JsonStreamLine(SocketLine):
    """The shared half of a telephony media-stream line (see the module)."""

    takes = ""
    """How the binary-message error says what the provider takes ("Twilio sends text")."""
    stream_field = ""
    """The field of the agent's messages that names the stream (``streamSid``)."""
    stream_key = ""
    """The key of the ERROR notice, given once, for another stream's id (``stream_sid``)."""
    stream_events: tuple[str, ...] | None = ("media", "mark", "clear")
    """The events whose stream id is checked (None: every message's)."""
    unknown_key = ""
    """The key of an unknown event's ERROR; empty: ``event:NAME``, capped per name."""
    mark_word = "mark"
    """What the MARK notices call the agent's markers."""

    _in: WireIn

    def __init__(
        self,
        url: str,
        *,
        stream: str,
        urls: list[str],
        playout: PlayoutBuffer | None = None,
        limits: LineLimits | None = None,
    ) -> None:
        super().__init__(redact_url(url), urls=urls, limits=limits, playout=playout)
        self._url = url
        self._stream = stream
        self._marks: PlayedMarks[str] = PlayedMarks(self.playout, self.limits.max_marks)
        self.sequence = 0
        """The last sequence number sent."""
        self.chunks_sent = 0
        self.media_received = 0
        """Agent media messages taken."""
        self.bytes_received = 0

    # -- the provider's messages ------------------------------------------------------

    def _hello(self) -> list[dict[str, Any]]:
        """What cutin sends first, all at once, waiting for nothing."""
        raise NotImplementedError

    def _media_message(self, chunk: bytes) -> dict[str, Any]:
        """The message carrying ``chunk``, the :attr:`chunks_sent`-th of the caller's audio."""
        raise NotImplementedError

    def _message(self, event: str, body: dict[str, Any]) -> dict[str, Any]:
        """The next message (numbered) of ``event`` with ``body``."""
        raise NotImplementedError

    def _stop(self) -> dict[str, Any] | None:
        """The body of the ``stop`` sent before the close (None: no stop message)."""
        raise NotImplementedError

    def _mark_reply(self, name: str) -> tuple[str, dict[str, Any]]:
        """The event and body that send a played marker back."""
        return "mark", {"mark": {"name": name}}

    # -- the Line protocol -------------------------------------------------------------

    def take(self, n: int) -> Audio:
        out = self.playout.take(n)
        if self._marks:
            self._echo_marks()
        return out

    # -- SocketLine hooks --------------------------------------------------------------

    def _connect(self, timeout_s: float) -> Any:
        return self._dial(self._url, timeout_s)

    def _handshake(self, deadline: float, timeout_s: float) -> None:
        # The provider's side speaks first and waits for nothing: ready before the hello
        # goes, so an answer the agent sends at once (a playAudio right after `start`) is
        # held until the line is open and its OPEN/FORMAT notices given, never handled
        # ahead of them on the line loop.
        self._ready.set()
        for message in self._hello():
            self._conn.send(json.dumps(message))

    def _hangup(self) -> None:
        self._post(("stop", None))
        self._post_stop()

    def _ended(self) -> None:
        self._marks.drop()

    def _write(self, item: tuple[str, Any]) -> None:
        kind, payload = item
        if kind == "media":
            for chunk in payload:
                self.chunks_sent += 1
                self._conn.send(json.dumps(self._media_message(chunk)))
        elif kind == "reply":
            event, body = payload
            self._conn.send(json.dumps(self._message(event, body)))
        elif kind == "stop":
            stop = self._stop()
            if stop is not None:
                self._conn.send(json.dumps(self._message("stop", {"stop": stop})))
            self._conn.close(1000, "call ended")

    def _handle(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            self._error("binary", f"a binary message of {len(raw)} bytes ({self.takes})")
            return
        message = self._json_object(raw)
        if message is None:
            return
        sid = message.get(self.stream_field)
        checked = self.stream_events is None or message.get("event") in self.stream_events
        if sid is not None and sid != self._stream and checked:
            self._once(
                self.stream_key,
                NoticeKind.ERROR,
                f"the agent's {self.stream_field} {str(sid)[:40]!r} is not this stream's",
                {"kind": self.stream_key, "got": str(sid)[:40]},
            )
        self._on_message(message, raw)

    # -- the agent's messages ----------------------------------------------------------

    def _on_message(self, message: dict[str, Any], raw: str) -> None:
        """One JSON object from the agent (its stream id checked)."""
        self._on_event(message, raw)

    def _on_event(self, message: dict[str, Any], shown: str) -> None:
        """``media``, ``clear`` or ``mark``; anything else is an ERROR (``shown`` is the
        message as the no-event error quotes it)."""
        event = message.get("event")
        if event == "media":
            self._on_media(message)
        elif event == "clear":
            self._on_clear()
        elif event == "mark":
            self._on_mark(message)
        else:
            self._unknown_event(event, shown)

    def _unknown_event(self, event: Any, shown: str) -> None:
        if isinstance(event, str):
            key = self.unknown_key or f"event:{event[:30]}"
            self._error(key, f"an unknown event {event[:30]!r}", {"event": event})
        else:
            self._error("no_event", f"a message without an event: {shown[:60]!r}")

    def _on_media(self, message: dict[str, Any]) -> None:
        media = message.get("media")
        data = self._payload(media.get("payload") if isinstance(media, dict) else None)
        if data is not None:
            self._play(message, data)

    def _play(self, message: dict[str, Any], data: bytes) -> None:
        """The agent's audio ``data`` (from ``message``) into the playout buffer."""
        if self.media_received < FORMAT_CHECKS or self.media_received % FORMAT_CHECK_EVERY == 0:
            self._check_media(message, data)
        self.media_received += 1
        self.bytes_received += len(data)
        if not self._in.play(data):
            self._split_sample(data)
        if self._marks:
            self._echo_marks()

    def _payload(self, payload: Any, event: str = "media", key: str = "media") -> bytes | None:
        """A media payload's bytes; None (an ERROR notice) when it is missing, not base64
        or empty. ``event`` names the message, ``key`` the notices (``media_base64``)."""
        if not isinstance(payload, str):
            self._error(f"{key}_no_payload", f"a {event} message without media.payload")
            return None
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            self._error(f"{key}_base64", f"a {event} payload that is not base64")
            return None
        if not data:
            self._error(f"{key}_empty", f"an empty {event} payload")
            return None
        return data

    def _check_media(self, message: dict[str, Any], data: bytes) -> None:
        """The provider's notes on the agent's media before it plays (its format...)."""

    def _split_sample(self, data: bytes) -> None:
        """``data`` left half a PCM16 sample over (G.711 never does)."""

    def _on_clear(self) -> None:
        self._cleared(self._in.clear())
        self._echo_marks(cleared=True)

    def _on_mark(self, message: dict[str, Any]) -> None:
        mark = message.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        if not isinstance(name, str):
            self._error("mark_no_name", "a mark message without mark.name")
            return
        if self._keep_mark(name):
            self._echo_marks()

    def _keep_mark(self, name: str) -> bool:
        """Wait for the audio queued so far before sending ``name`` back; False (an ERROR
        notice) when its name is too long or the agent has too many waiting (the line's
        :class:`~sessions.lines.base.LineLimits`)."""
        return self._mark_fits(name, len(self._marks), self.mark_word) and self._marks.add(name)

    def _echo_marks(self, *, cleared: bool = False) -> None:
        """Send back the markers whose audio has played (all of them on a clear)."""
        how = "cleared" if cleared else "played"
        for name in self._marks.due(cleared=cleared):
            shown, kept = self._shown_mark(name)
            # Said before it is sent: the agent's answer to it can come at once.
            self._notify(
                NoticeKind.MARK,
                f"{self.mark_word} {shown!r} {how}",
                {"name": kept, "cleared": cleared},
            )
            self._post(("reply", self._mark_reply(name)))

    def _shown_mark(self, name: str) -> tuple[str, str]:
        """A marker's name as a MARK notice's detail and data give it."""
        return name[:80], name[:200]
