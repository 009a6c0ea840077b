"""``--agent`` values that name a black-box line, and the :class:`Line` each one opens.

- ``twilio:ws://HOST:PORT/PATH`` (or ``wss://``; a bare ``ws://`` URL means the same):
  Twilio Media Streams, cutin playing Twilio's side;
- ``realtime``: an OpenAI Realtime speech-to-speech model (``--base-url``, ``--model``,
  the key from ``OPENAI_API_KEY``).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from sessions.lines.base import Line, LineError

LINE_KINDS = frozenset({"twilio", "realtime"})
"""The header's ``agent.kind`` of a call to a black-box agent (one per transport)."""


@dataclass(frozen=True)
class LineSpec:
    kind: str
    """twilio | realtime."""
    url: str | None = None
    """The agent's WebSocket URL (twilio)."""


def is_line_agent(agent: str) -> bool:
    """True for an ``--agent`` value that dials a black-box agent."""
    return agent == "realtime" or agent.startswith(("twilio:", "ws://", "wss://"))


def parse_line_agent(agent: str) -> LineSpec:
    """Parse ``--agent``; :class:`LineError` with the fix for a malformed value."""
    if agent == "realtime":
        return LineSpec("realtime")
    url = agent.removeprefix("twilio:")
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise LineError(
            f"--agent {agent!r}: a Twilio Media Streams agent is twilio:ws://HOST:PORT/PATH "
            "(or wss://)"
        )
    try:
        parts.port  # noqa: B018 -- validates the port number
    except ValueError:
        raise LineError(f"--agent {agent!r}: the port is not a number from 0 to 65535") from None
    return LineSpec("twilio", url)


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
    line: Line
    if spec.kind == "twilio":
        from sessions.lines.twilio import TwilioLine

        assert spec.url is not None
        line = TwilioLine(spec.url)
    else:
        from sessions.lines.realtime import DEFAULT_MODEL, RealtimeLine

        line = RealtimeLine(
            model=model or DEFAULT_MODEL,
            base_url=base_url,
            api_key=api_key,
            instructions=instructions,
        )
    line.open(timeout_s)
    return line
