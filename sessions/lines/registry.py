"""The transports cutin can dial, one :class:`Transport` entry each.

An entry says how ``--agent`` names the transport (a bare word, ``realtime``, or a
prefix before the agent's URL, ``twilio:ws://HOST:PORT/PATH``), what the line status
calls its audio (``μ-law 8 kHz``), whether it needs an API key, and which function
builds its :class:`~sessions.lines.base.Line` from the parsed ``--agent``
(``module:function``, imported only when a line is made, so reading the registry never
loads ``websockets`` or ``openai``). ``--agent`` parsing, ``is_line_agent``,
``LINE_KINDS`` and the CLI's list of accepted forms all come from here.

A new transport is its module (a :class:`~sessions.lines.socket_line.SocketLine`
subclass and a ``make_line(spec, options)``) plus one ``register(Transport(...))`` at
the bottom of this file; a WebSocket line dialled as ``KIND:ws://...`` whose module is
``sessions/lines/KIND.py`` registers as ``register(websocket(KIND, about, audio))``.
Stdlib only.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qs, urlsplit

from sessions.lines.base import LineError

if TYPE_CHECKING:
    from sessions.lines.base import Line


@dataclass(frozen=True)
class LineSpec:
    """A parsed ``--agent`` that names a line."""

    kind: str
    """The transport (its :attr:`Transport.kind`): twilio | realtime | ..."""
    url: str | None = None
    """The agent's URL, for a transport named by a prefix (twilio)."""

    @property
    def rate(self) -> int:
        """The wire sample rate :attr:`url` names (see :meth:`Transport.rate_of`)."""
        return transport(self.kind).rate_of(self.url or "")


@dataclass(frozen=True)
class LineOptions:
    """What the call knows beyond ``--agent`` that a transport may use."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    """Never logged."""
    instructions: str | None = None
    """The agent's instructions, for a transport that takes them (Realtime)."""


class Builder(Protocol):
    def __call__(self, spec: LineSpec, options: LineOptions) -> Line: ...


@dataclass(frozen=True)
class Transport:
    """One way to reach a black-box agent."""

    kind: str
    """The line's name and the log header's ``agent.kind``."""
    about: str
    """What it is, in a few words ("Twilio Media Streams")."""
    audio: str
    """Its wire audio as the line status shows it ("μ-law 8 kHz")."""
    builder: str
    """``module:function`` making the (unopened) line from a :class:`LineSpec`."""
    prefix: str = ""
    """``"twilio:"``: ``--agent`` is the prefix and a URL; empty: the bare :attr:`kind`."""
    schemes: tuple[str, ...] = ("ws", "wss")
    """The URL schemes it dials (prefixed transports only)."""
    needs_key: bool = False
    """Refused without an API key unless ``--base-url`` names a local server."""
    options: str = ""
    """The other options it reads, for help ("--base-url, --model")."""
    parser: str = ""
    """``module:function`` parsing ``--agent`` itself, for an address that is no URL of
    :attr:`schemes` (``sip:USER@HOST``); the module must be stdlib only."""
    shape: str = ""
    """How ``--agent`` names it when :attr:`parser` is set and it is no URL
    ("sip:USER@HOST[:PORT]")."""
    query: str = ""
    """The URL's optional query as :attr:`form` shows it (``[?codec=PCMU|PCMA]``);
    empty: the :attr:`rate_param`'s, if any."""
    also: tuple[str, ...] = ()
    """Other prefixes it answers to, to refuse them with the reason ("sips:")."""
    rate_param: str = ""
    """The URL query parameter that names its wire sample rate (``rate``), if any."""
    rates: tuple[int, ...] = ()
    """The sample rates ``rate_param`` may name; the first is the default."""
    dtmf: bool = False
    """Its line sends the caller's keypad digits (``send_dtmf``): a scenario's keypad
    steps and the call screen's DTMF key need it."""

    @property
    def form(self) -> str:
        """How ``--agent`` names it, as help and refusals say it."""
        if not self.prefix:
            return self.kind
        if self.shape:
            return self.shape
        first, *others = self.schemes
        tail = "".join(f" (or {self.prefix}{s}://)" for s in others)
        query = self.query or (f"[?{self.rate_param}={self.rates[0]}]" if self.rate_param else "")
        return f"{self.prefix}{first}://HOST:PORT/PATH{query}{tail}"

    def matches(self, agent: str) -> bool:
        if not self.prefix:
            return agent == self.kind
        return agent.startswith(self.prefix) or agent.lower().startswith(self.also)

    def parse(self, agent: str) -> LineSpec:
        """The :class:`LineSpec` of ``agent``; :class:`LineError` with the fix if malformed."""
        if not self.prefix:
            return LineSpec(self.kind)
        if self.parser:
            module, _, function = self.parser.partition(":")
            parse: Callable[[str], LineSpec] = getattr(importlib.import_module(module), function)
            return parse(agent)
        url = agent.removeprefix(self.prefix)
        try:
            parts = urlsplit(url)
        except ValueError:  # an unclosed IPv6 bracket and the like
            raise LineError(f"--agent {agent!r}: not a valid URL; use {agent_forms()}") from None
        if parts.scheme.lower() not in self.schemes or not parts.hostname:
            raise LineError(f"--agent {agent!r}: a {self.about} agent is {self.form}")
        try:
            parts.port  # noqa: B018 -- validates the port number
        except ValueError:
            raise LineError(
                f"--agent {agent!r}: the port is not a number from 0 to 65535"
            ) from None
        if self.rate_param:
            try:
                self.rate_of(url)
            except LineError as exc:
                raise LineError(f"--agent {agent!r}: {exc}") from None
        return LineSpec(self.kind, url)

    def rate_of(self, url: str) -> int:
        """The wire sample rate ``url`` names in its :attr:`rate_param` (the first of
        :attr:`rates` when it names none); :class:`LineError` for any other value."""
        values = parse_qs(urlsplit(url).query, keep_blank_values=True).get(self.rate_param, [])
        if not self.rate_param or not values:
            return self.rates[0] if self.rates else 0
        rates = sorted(self.rates)
        allowed = ", ".join(str(r) for r in rates[:-1]) + f" or {rates[-1]}"
        if len(values) > 1:
            raise LineError(f"{self.rate_param} is given {len(values)} times; give it once")
        text = values[0].strip()
        if not (text.isdigit() and len(text) < 7 and int(text) in self.rates):
            raise LineError(f"{self.rate_param} must be {allowed} (Hz), not {text[:20]!r}")
        return int(text)

    def build(self, spec: LineSpec, options: LineOptions) -> Line:
        """The line (not yet open), from the transport's own module."""
        module, _, function = self.builder.partition(":")
        make: Builder = getattr(importlib.import_module(module), function)
        return make(spec, options)


_TRANSPORTS: dict[str, Transport] = {}


def register(transport: Transport) -> None:
    """Add a transport (a kind already registered is replaced)."""
    _TRANSPORTS[transport.kind] = transport


def websocket(
    kind: str,
    about: str,
    audio: str,
    *,
    parser: str = "",
    query: str = "",
    rate_param: str = "",
    rates: tuple[int, ...] = (),
) -> Transport:
    """A WebSocket line's entry: ``--agent KIND:ws://HOST:PORT/PATH`` (or ``wss://``),
    the line built by ``make_line`` in ``sessions/lines/KIND.py``."""
    return Transport(
        kind=kind,
        about=about,
        audio=audio,
        builder=f"sessions.lines.{kind}:make_line",
        prefix=f"{kind}:",
        parser=parser,
        query=query,
        rate_param=rate_param,
        rates=rates,
    )


def unregister(kind: str) -> None:
    _TRANSPORTS.pop(kind, None)


def transports() -> list[Transport]:
    """Every registered transport, bare words first (as help lists them)."""
    return sorted(_TRANSPORTS.values(), key=lambda t: bool(t.prefix))  # stable: as registered


def transport(kind: str) -> Transport:
    try:
        return _TRANSPORTS[kind]
    except KeyError:
        raise LineError(f"no line transport named {kind!r}") from None


def transport_for(agent: str) -> Transport | None:
    """The transport an ``--agent`` value names, if any."""
    return next((t for t in _TRANSPORTS.values() if t.matches(agent)), None)


def agent_forms() -> str:
    """``realtime or twilio:ws://HOST:PORT/PATH (or twilio:wss://)``: every line form."""
    forms = [t.form for t in transports()]
    return forms[0] if len(forms) == 1 else ", ".join(forms[:-1]) + " or " + forms[-1]


def _shortened(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unknown_agent(value: str, others: Sequence[str] = ()) -> str:
    """One short line for an ``--agent`` value that names no kind: the closest kind(s)
    (``twillio:ws://h/`` → ``twilio:ws://h/``) or, with none close, the kinds' names;
    the caller says where every form is listed (``cutin call --help``). ``others`` are
    the kinds that are not lines (``scripted``, ``openai``)."""
    lines = transports()
    kinds = [*others, *(t.kind for t in lines)]
    word, colon, rest = value.partition(":")
    word = word.strip().lower()
    close = difflib.get_close_matches(word, kinds, n=2, cutoff=0.6)
    shown = repr(_shortened(value))
    if not close:
        return f"unknown agent {shown}; the kinds are {', '.join(kinds)}"
    prefixed = {t.kind for t in lines if t.prefix}
    guesses = [f"{k}:{rest}" if colon and k in prefixed else k for k in close]
    said = " or ".join(repr(_shortened(g)) for g in guesses)
    return f"unknown agent {shown}; did you mean {said}?"


def line_help() -> str:
    """Every line form with what it is, for ``--help``: ``realtime (OpenAI Realtime,
    PCM16 24 kHz; --base-url, --model) or twilio:ws://HOST:PORT/PATH (...)``."""
    described = []
    for t in transports():
        options = f"; {t.options}" if t.options else ""
        described.append(f"{t.form.partition(' ')[0]} ({t.about}, {t.audio}{options})")
    if len(described) == 1:
        return described[0]
    return ", ".join(described[:-1]) + " or " + described[-1]


# -- the transports --------------------------------------------------------------------

register(
    Transport(
        kind="realtime",
        about="OpenAI Realtime",
        audio="PCM16 24 kHz",
        builder="sessions.lines.realtime:make_line",
        needs_key=True,
        options="--base-url, --model, the key from OPENAI_API_KEY",
    )
)
register(websocket("twilio", "Twilio Media Streams", "μ-law 8 kHz"))
register(
    websocket(
        "exotel",
        "Exotel voice streaming",
        "PCM16 8, 16 or 24 kHz",
        rate_param="sample-rate",
        rates=(8000, 16000, 24000),
    )
)
register(
    websocket(
        "vonage",
        "Vonage Voice WebSocket",
        "L16 (PCM16) 16 or 8 kHz",
        rate_param="rate",
        rates=(16000, 8000),
    )
)
register(
    websocket(
        "pcm",
        "raw PCM16 WebSocket",
        "PCM16 16, 8 or 24 kHz",
        rate_param="rate",
        rates=(16000, 8000, 24000),
    )
)
register(
    Transport(
        kind="sip",
        about="SIP",
        audio="PCMU/PCMA 8 kHz over RTP",
        builder="sessions.lines.sip.line:make_line",
        prefix="sip:",
        schemes=(),
        parser="sessions.lines.sip.uri:parse_agent",
        shape="sip:USER@HOST[:PORT]",
        also=("sips:",),
        options="DTMF; CUTIN_SIP_USER, CUTIN_SIP_PASSWORD, CUTIN_SIP_REGISTRAR",
        dtmf=True,
    )
)
register(
    websocket(
        "telnyx",
        "Telnyx media streaming",
        "PCMU or PCMA 8 kHz",
        parser="sessions.lines.stream_query:parse_telnyx",
        query="[?codec=PCMU|PCMA]",
    )
)
register(
    websocket(
        "plivo",
        "Plivo audio streams",
        "μ-law 8 kHz or L16 8/16 kHz",
        parser="sessions.lines.stream_query:parse_plivo",
        query="[?codec=mulaw|l16&rate=8000|16000]",
        rate_param="rate",
        rates=(8000, 16000),
    )
)
register(
    Transport(
        kind="webrtc",
        about="WebRTC (Pipecat SmallWebRTC)",
        audio="Opus 48 kHz",
        builder="sessions.lines.webrtc:make_line",
        prefix="webrtc:",
        schemes=("http", "https"),
        options="CUTIN_WEBRTC_ICE_SERVERS",
    )
)
