"""``--agent`` values that name a black-box line, and the :class:`Line` each one opens.

The forms come from :mod:`sessions.lines.registry` (one entry per transport):

- ``twilio:ws://HOST:PORT/PATH`` (or ``wss://``): Twilio Media Streams, cutin playing
  Twilio's side (a bare ``ws://`` URL is still taken as Twilio here, as it always was;
  the CLI refuses it and asks which protocol);
- ``realtime``: an OpenAI Realtime speech-to-speech model (``--base-url``, ``--model``,
  the key from ``OPENAI_API_KEY``).
"""

from __future__ import annotations

from sessions.lines.base import Line, LineError
from sessions.lines.registry import (
    LineOptions,
    LineSpec,
    Transport,
    agent_forms,
    transport,
    transport_for,
    transports,
    unknown_agent,
)

__all__ = [
    "LINE_KINDS",
    "LineSpec",
    "agent_forms",
    "is_line_agent",
    "line_kinds",
    "open_line",
    "parse_line_agent",
]

_BARE_URL_KIND = "twilio"
"""What a bare ``ws://`` URL was taken as before there was a registry."""


def line_kinds() -> frozenset[str]:
    """The header's ``agent.kind`` of a call to a black-box agent, one per transport
    registered now (a transport registered at run time included)."""
    return frozenset(t.kind for t in transports())


LINE_KINDS = line_kinds()
"""The built-in transports' kinds (the entries of :mod:`sessions.lines.registry`)."""


def _transport_of(agent: str) -> Transport | None:
    found = transport_for(agent)
    if found is None and agent.startswith(("ws://", "wss://")):
        return transport_for(f"{_BARE_URL_KIND}:")
    return found


def is_line_agent(agent: str) -> bool:
    """True for an ``--agent`` value that dials a black-box agent."""
    return _transport_of(agent) is not None


def parse_line_agent(agent: str) -> LineSpec:
    """Parse ``--agent``; :class:`LineError` with the fix for a malformed value."""
    found = _transport_of(agent)
    if found is None:
        raise LineError(f"--agent: {unknown_agent(agent)} (every form: cutin call --help)")
    if found.prefix and not found.parser and not agent.startswith(found.prefix):  # bare URL
        agent = found.prefix + agent
    return found.parse(agent)


def open_line(
    spec: LineSpec,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    instructions: str | None = None,
    timeout_s: float = 10.0,
) -> Line:
    """Make the line and connect it (raises :class:`LineError` with one clear line)."""
    options = LineOptions(
        base_url=base_url, model=model, api_key=api_key, instructions=instructions
    )
    line = transport(spec.kind).build(spec, options)
    line.open(timeout_s)
    return line
