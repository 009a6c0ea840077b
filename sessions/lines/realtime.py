"""OpenAI Realtime as a line: a speech-to-speech model is the agent, cutin the client app.

cutin connects with the real ``openai`` client (``client.realtime.connect``, the sync
WebSocket API, ``ws(s)://BASE/realtime?model=M``), sends one ``session.update`` (PCM16
at 24 kHz both ways, server VAD turn detection, the instructions and voice) and waits
for ``session.updated``. After that two threads of its own carry the call:

- the *reader* turns server events into playout and notices: audio deltas
  (``response.output_audio.delta``, or the beta ``response.audio.delta``) are decoded,
  resampled 24 → 16 kHz and pushed into the :class:`PlayoutBuffer`; transcripts and
  the rest of the protocol become ``AGENT_EVENT`` notices, ``error`` events and
  unparsable messages ``ERROR`` notices; a closed socket ends the line (CLOSED when
  closed cleanly, FAILED otherwise) and is never reconnected;
- the *writer* sends what :meth:`RealtimeLine.send` queued: caller audio resampled
  16 → 24 kHz, as ``input_audio_buffer.append`` batches of ``append_ms``.

Barge-in is what a client app does: on ``input_audio_buffer.speech_started`` the queued
agent audio is flushed (a ``CLEAR`` notice with the seconds dropped) and every agent
item still playing is truncated (``conversation.item.truncate``) at the audio that was
actually played. Whether the model then stops is up to the agent: audio it still sends
for a truncated item is dropped and reported as an ``AGENT_EVENT`` (the seconds it
talked on), a new response plays as usual, and a server that never signals the
caller's speech simply keeps talking over them, which the caller hears.

The threads, states, notices, limits and failure wording are
:class:`~sessions.lines.socket_line.SocketLine`'s, the barge-in bookkeeping
:class:`~sessions.lines.realtime_items.AgentItems`'; this module is the protocol.

The API key comes from ``api_key`` or ``OPENAI_API_KEY``. Neither it nor the user
info (nor its Basic-auth base64), query values or path parameters of ``base_url``
appear in any notice, message or :attr:`RealtimeLine.target` (see
:mod:`sessions.hostile.redact`).
"""

from __future__ import annotations

import base64
import json
import os
import threading
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from sessions.hostile.redact import Redactor, public_url
from sessions.lines.base import (
    LINE_RATE,
    Audio,
    LineError,
    LineLimits,
    NoticeKind,
    PlayoutBuffer,
)
from sessions.lines.codec import StreamResampler
from sessions.lines.realtime_items import (
    AUDIO_DELTA,
    KNOWN_EVENTS,
    QUIET_EVENTS,
    WIRE_RATE,
    AgentItems,
    summary,
)
from sessions.lines.socket_line import SocketLine
from sessions.llm_client import PLACEHOLDER_KEY, split_query
from sessions.speech.wav import float_to_pcm16

if TYPE_CHECKING:
    from sessions.lines.base import Line
    from sessions.lines.registry import LineOptions, LineSpec

__all__ = ["AUDIO_FORMAT", "DEFAULT_MODEL", "WIRE_RATE", "RealtimeLine", "make_line"]

AUDIO_FORMAT = "audio/pcm;rate=24000"
DEFAULT_MODEL = "gpt-realtime-1.5"
"""A current, non-reasoning Realtime model (the bare ``gpt-realtime`` is deprecated)."""


def make_line(spec: LineSpec, options: LineOptions) -> Line:
    """The registry's builder: ``realtime`` (``--base-url``, ``--model``, the key)."""
    return RealtimeLine(
        model=options.model or DEFAULT_MODEL,
        base_url=options.base_url,
        api_key=options.api_key,
        instructions=options.instructions,
    )


class RealtimeLine(SocketLine):
    """A line to an OpenAI Realtime (or compatible) speech-to-speech session.

    ``base_url`` is the API base (``http://127.0.0.1:8000/v1`` for a local server; none:
    the ``openai`` client's default); the socket goes to ``BASE/realtime?model=MODEL``,
    dialled as the URL says: ``http://`` and ``ws://`` in the clear, ``https://`` and
    ``wss://`` with TLS. User info in ``base_url`` is sent as HTTP Basic auth (by
    ``websockets``) and blanked, in every spelling, from whatever the agent echoes.
    ``instructions`` (the scenario's system prompt or ``--agent-prompt``) and ``voice``
    go into the ``session.update``; ``silence_duration_ms``, ``vad_threshold`` and
    ``prefix_padding_ms`` configure the server's VAD, ``interrupt_response`` whether it
    may cancel a response when the caller starts speaking. Audio the agent still sends
    for an item after cutin truncated it is dropped, as client apps do, and reported
    (``agent audio after truncate``, then ``agent talked on after truncate`` with the
    seconds); ``play_after_truncate`` plays it instead.

    ``append_ms`` batches caller audio into ``input_audio_buffer.append`` events of at
    least that much. The default sends every 32 ms frame at once: a batch delays the
    server's VAD, and so the barge-in cutin measures, by up to its length (on loopback
    the caller's onset → CLEAR took 65 ms with 32 ms batches, 130 ms with 100 ms ones).
    """

    name = "realtime"
    audio_format = AUDIO_FORMAT
    refused_hint = "; check OPENAI_API_KEY"

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        instructions: str | None = None,
        voice: str = "alloy",
        silence_duration_ms: int = 500,
        vad_threshold: float = 0.5,
        prefix_padding_ms: int = 300,
        interrupt_response: bool = True,
        play_after_truncate: bool = False,
        append_ms: float = 32.0,
        playout_max_s: float = 120.0,
        limits: LineLimits | None = None,
    ) -> None:
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None and base_url is None:
            raise LineError(
                "the Realtime line needs OPENAI_API_KEY (or --base-url for a local server)"
            )
        self._key = key or PLACEHOLDER_KEY
        self.model = model
        import openai  # heavy: loaded when a line is made, not when the module is imported

        try:
            base, query = split_query(base_url)
            self._client = openai.OpenAI(
                api_key=self._key,
                base_url=base,
                websocket_base_url=websocket_base(base),
                default_query=query or None,
                max_retries=0,
            )
            target = self._websocket_url()
        except Exception as exc:  # a malformed base URL
            blank = Redactor(secrets=[key], urls=[base_url])
            message = " ".join(blank(f"bad Realtime base URL {base_url}: {exc}").split())
            raise LineError(message[:500]) from None
        super().__init__(
            target,
            secrets=[key],
            urls=[base_url],
            limits=limits,
            playout=PlayoutBuffer(playout_max_s),
        )
        self.instructions = instructions
        self.voice = voice
        self.turn_detection: dict[str, Any] = {
            "type": "server_vad",
            "threshold": vad_threshold,
            "prefix_padding_ms": prefix_padding_ms,
            "silence_duration_ms": silence_duration_ms,
            "create_response": True,
            "interrupt_response": interrupt_response,
        }
        self._append_n = max(1, round(append_ms / 1000.0 * WIRE_RATE))
        self._send_lock = threading.Lock()
        self._up = StreamResampler(LINE_RATE, WIRE_RATE)
        self._pending: list[Audio] = []
        self._pending_n = 0
        self.sent_samples = 0
        """Caller samples (16 kHz) handed to :meth:`send` while open."""
        self.items = AgentItems(self.playout, play_after_truncate=play_after_truncate)
        self.session: dict[str, Any] = {}
        """The session as the server last described it (``session.created``/``updated``)."""

    @property
    def play_after_truncate(self) -> bool:
        return self.items.play_after_truncate

    # -- the Line protocol -------------------------------------------------------------

    def send(self, samples: Audio) -> None:
        if not self.is_open:
            return
        with self._send_lock:
            chunk = np.asarray(samples, dtype=np.float32).reshape(-1)
            self.sent_samples += chunk.size
            wire = self._up.process(chunk)
            if wire.size:
                self._pending.append(wire)
                self._pending_n += wire.size
            if self._pending_n < self._append_n:
                return
            batch = np.concatenate(self._pending)
            self._pending = []
            self._pending_n = 0
        audio = base64.b64encode(float_to_pcm16(batch)).decode("ascii")
        self._post({"type": "input_audio_buffer.append", "audio": audio})

    # -- SocketLine hooks --------------------------------------------------------------

    def _connect(self, timeout_s: float) -> Any:
        manager = self._client.realtime.connect(
            model=self.model,
            websocket_connection_options=cast(Any, self.socket_options(timeout_s)),
        )
        return manager.enter()

    def _handshake(self, deadline: float, timeout_s: float) -> None:
        try:
            self._conn.send(cast(Any, self.session_update()))
        except Exception as exc:
            raise LineError(
                f"realtime: could not send session.update to {self.target}: {type(exc).__name__}"
            ) from None
        self._wait_ready(deadline, "session.updated", timeout_s)

    def _opened(self) -> None:
        self._notify(
            NoticeKind.OPEN, f"realtime {self.model}: {AUDIO_FORMAT}", {"target": self.target}
        )
        self._notify(
            NoticeKind.FORMAT,
            AUDIO_FORMAT,
            {
                "encoding": "pcm16",
                "rate": WIRE_RATE,
                "channels": 1,
                "session": self._format_of_session(),
            },
        )

    def _recv(self) -> bytes:
        raw: bytes = self._conn.recv_bytes()
        return raw

    def _write(self, item: dict[str, Any]) -> None:
        self._conn.send(cast(Any, item))

    def session_update(self) -> dict[str, Any]:
        """The ``session.update`` event sent on open (GA shape)."""
        pcm = {"type": "audio/pcm", "rate": WIRE_RATE}
        session: dict[str, Any] = {
            "type": "realtime",
            "output_modalities": ["audio"],
            "audio": {
                "input": {"format": dict(pcm), "turn_detection": dict(self.turn_detection)},
                "output": {"format": dict(pcm), "voice": self.voice},
            },
        }
        if self.instructions:
            session["instructions"] = self.instructions
        return {"type": "session.update", "session": session}

    # -- what comes in -----------------------------------------------------------------

    def _handle(self, raw: str | bytes) -> None:
        try:
            event = json.loads(raw)
        except (ValueError, RecursionError):
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            self._error(
                "not_json", "malformed event from the agent (not JSON)", {"raw": text[:200]}
            )
            return
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            self._error(
                "no_type",
                "malformed event from the agent (no type)",
                {"raw": json.dumps(event)[:200]},
            )
            return
        try:
            self._on_event(event)
        except Exception as exc:  # one bad event never ends the line
            kind = event["type"][:60]
            self._error(
                f"malformed:{kind}",
                f"malformed {kind} event: {type(exc).__name__}: {exc}",
                {"type": kind},
            )

    def _on_event(self, event: dict[str, Any]) -> None:
        kind: str = event["type"]
        if kind in AUDIO_DELTA:
            pcm = base64.b64decode(event["delta"], validate=True)
            self._report(self.items.audio(event, pcm))
            return
        if kind == "input_audio_buffer.speech_started":
            self._notify(NoticeKind.AGENT_EVENT, kind, summary(event))
            self._barge_in(event)
            return
        if kind == "error":
            error = event.get("error")
            error = error if isinstance(error, dict) else {"message": str(error)}
            detail = (
                "agent error"
                + "".join(f" {error[k]}" for k in ("type", "code") if error.get(k))
                + f": {error.get('message', '')}"
            )
            # Capped like every error: an agent repeating its error event is counted.
            code = str(error.get("code") or error.get("type") or "")[:40]
            self._error(f"agent_error:{code}", detail, summary(event))
            self._refuse_handshake(f"realtime: {self.target} refused the session: {detail}")
            return
        if kind in ("session.created", "session.updated"):
            session = event.get("session")
            if isinstance(session, dict):
                self.session = session
            if kind == "session.updated":
                self._ready.set()
        elif kind in ("response.done", "response.output_item.done"):
            self._report(self.items.finish(event))
        if kind in QUIET_EVENTS:
            return
        data = summary(event)
        if kind in KNOWN_EVENTS:
            self._notify(NoticeKind.AGENT_EVENT, kind, data)
            return
        # An event name is the agent's to invent: a few of each, of a few names, are
        # logged; the rest are counted (the line's summary).
        data["unknown"] = True
        self._capped(f"unknown:{kind[:40]}", NoticeKind.AGENT_EVENT, kind, data)

    def _barge_in(self, event: dict[str, Any]) -> None:
        """The caller started speaking: flush the playout and truncate what was not heard."""
        dropped, truncates = self.items.barge_in()
        for truncate in truncates:
            self._post(truncate)
        if dropped or truncates:
            self._notify(
                NoticeKind.CLEAR,
                f"agent audio flushed at caller speech ({dropped / LINE_RATE:.2f} s unplayed)",
                {
                    "dropped_s": dropped / LINE_RATE,
                    "truncated": [
                        {"item_id": t["item_id"], "audio_end_ms": t["audio_end_ms"]}
                        for t in truncates
                    ],
                    "audio_start_ms": event.get("audio_start_ms"),
                },
            )

    def _report(self, reports: list[tuple[str, dict[str, Any]]]) -> None:
        for detail, data in reports:
            self._notify(NoticeKind.AGENT_EVENT, detail, data)

    # -- bookkeeping -------------------------------------------------------------------

    def _websocket_url(self) -> str:
        base = str(self._client.websocket_base_url or websocket_base(str(self._client.base_url)))
        # Shown and logged: no user info or query of the base URL (the model is cutin's).
        return f"{public_url(base).rstrip('/')}/realtime?model={self.model}"

    def _format_of_session(self) -> Any:
        audio = self.session.get("audio")
        if isinstance(audio, dict) and isinstance(audio.get("output"), dict):
            return audio["output"].get("format")
        return self.session.get("output_audio_format")


def websocket_base(base_url: str | None) -> str | None:
    """The socket's base for ``base_url``: what the URL says, ``ws://`` (and ``http://``)
    dialled in the clear, ``wss://`` (and ``https://``) with TLS; None for the ``openai``
    client's default. (Left to the client, a ``ws://`` base would be dialled with TLS.)"""
    if base_url is None:
        return None
    scheme, sep, rest = base_url.partition("://")
    dial = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(scheme.lower())
    if not sep or dial is None:
        raise ValueError("give http://, https://, ws:// or wss://")
    return f"{dial}://{rest}"
