"""The audio format a telephony line's URL asks for, checked when ``--agent`` is parsed.

A provider fixes the stream's format in its own call set-up (Telnyx's
``stream_bidirectional_codec``, Plivo's ``<Stream contentType=...>``), which cutin, playing
the provider, has no other place for; so the agent's URL names it in a query parameter,
and the URL is dialled as written (an agent that reads the parameter sees the same):

- ``telnyx:ws://HOST:PORT/PATH?codec=PCMA``: ``PCMU`` (default) or ``PCMA``, 8 kHz;
- ``plivo:ws://HOST:PORT/PATH?codec=l16&rate=16000``: ``mulaw`` (default, 8 kHz only)
  or ``l16`` at ``rate`` 8000 (default) or 16000.

Anything else is one clear refusal before anything is dialled. Stdlib only (the
registry imports it to parse ``--agent``).
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit, urlunsplit

from sessions.lines.base import LineError
from sessions.lines.registry import LineSpec, transport

TELNYX_CODECS = ("PCMU", "PCMA")
"""Telnyx's G.711 codecs; the first is its default."""
PLIVO_CODECS = ("mulaw", "l16")
"""Plivo's ``audio/x-mulaw`` and ``audio/x-l16``; the first is cutin's default (the one
Pipecat's Plivo serializer speaks)."""
CODEC_PARAM = "codec"


def query_choice(url: str, param: str, choices: tuple[str, ...]) -> str:
    """The value of ``param`` in ``url`` among ``choices`` (case-insensitive, returned as
    spelled in ``choices``; the first when absent); :class:`LineError` otherwise."""
    values = parse_qs(urlsplit(url).query, keep_blank_values=True).get(param, [])
    if not values:
        return choices[0]
    if len(values) > 1:
        raise LineError(f"{param} is given {len(values)} times; give it once")
    wanted = values[0].strip().lower()
    for choice in choices:
        if choice.lower() == wanted:
            return choice
    allowed = ", ".join(choices[:-1]) + f" or {choices[-1]}"
    raise LineError(f"{param} must be {allowed}, not {values[0][:20]!r}")


def format_params_removed(url: str, *names: str) -> str:
    """``url`` without its ``names`` query items: a format choice such as ``codec=PCMU``
    checked against a fixed list is no secret. :func:`sessions.hostile.redact.url_secrets`
    already leaves out the values of :data:`sessions.hostile.redact.FORMAT_PARAMS`; this also
    covers a format parameter of another name."""
    try:
        parts = urlsplit(url)
        kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in names]
        return urlunsplit(parts._replace(query=urlencode(kept)))
    except ValueError:
        return url


def _parse_url(kind: str, agent: str) -> LineSpec:
    """The registry's own URL checks (scheme, host, port, rate) for ``kind``."""
    return replace(transport(kind), parser="").parse(agent)


def telnyx_codec(url: str) -> str:
    return query_choice(url, CODEC_PARAM, TELNYX_CODECS)


def plivo_format(url: str) -> tuple[str, int]:
    """(codec, rate) a Plivo URL asks for; μ-law is 8 kHz only."""
    codec = query_choice(url, CODEC_PARAM, PLIVO_CODECS)
    rate = transport("plivo").rate_of(url)
    if codec == "mulaw" and rate != 8000:
        raise LineError(f"Plivo's μ-law is 8000 Hz only (rate={rate} needs {CODEC_PARAM}=l16)")
    return codec, rate


def parse_telnyx(agent: str) -> LineSpec:
    """The registry's parser for ``telnyx:``."""
    spec = _parse_url("telnyx", agent)
    _checked(agent, telnyx_codec, spec)
    return spec


def parse_plivo(agent: str) -> LineSpec:
    """The registry's parser for ``plivo:``."""
    spec = _parse_url("plivo", agent)
    _checked(agent, plivo_format, spec)
    return spec


def _checked(agent: str, check: object, spec: LineSpec) -> None:
    assert spec.url is not None and callable(check)
    try:
        check(spec.url)
    except LineError as exc:
        raise LineError(f"--agent {agent!r}: {exc}") from None
