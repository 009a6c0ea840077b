"""The line to a black-box agent as the call screen's status line sees it. No Textual.

Folded from the call's ``line`` and ``agent_yield`` events (attributes down: the
screen only reads what the driver's drained events say).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sessions.hostile.safe_files import terminal_line
from sessions.log.models import AgentYield, LineEvent

_ENCODINGS = {"audio/x-mulaw": "μ-law", "mulaw": "μ-law", "pcm16": "PCM16", "audio/pcm": "PCM16"}


def format_label(encoding: str, rate: object) -> str:
    """ "μ-law 8 kHz" from an encoding name and a sample rate."""
    name = _ENCODINGS.get(encoding.strip().lower(), encoding.strip())
    if isinstance(rate, int | float) and rate > 0:
        khz = f"{rate / 1000:g}"
        return f"{name} {khz} kHz".strip()
    return name


def parse_audio_format(audio_format: str) -> str:
    """ "audio/x-mulaw;rate=8000" → "μ-law 8 kHz" (the line's stated wire format)."""
    encoding, _, params = audio_format.partition(";")
    rate: float | None = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip() == "rate":
            try:
                rate = float(value)
            except ValueError:
                rate = None
    return format_label(encoding, rate)


@dataclass
class LineView:
    """What the status line says about the line to the agent, folded from ``line`` events."""

    name: str = ""
    """Transport: twilio | realtime."""
    target: str = ""
    audio: str = ""
    """The agent's audio format, e.g. "μ-law 8 kHz"."""
    state: str = "connecting"
    """connecting | open | closed | failed."""
    closed_by: str | None = None
    failure: str = ""
    errors: int = 0
    clears: int = 0
    """Times the agent flushed its queued audio (Twilio ``clear``)."""
    cuts_answered: int = 0
    """Interruptions whose ``agent_yield`` came in; ``yields`` of them it stopped for."""
    yields: int = 0
    yield_latencies: list[float] = field(default_factory=list)
    backchannels_answered: int = 0
    false_yields: int = 0
    no_responses: int = 0
    """Caller turns the agent did not answer within the response window (``no_response``)."""

    def count_yield(self, event: AgentYield) -> None:
        if event.after == "interruption":
            self.cuts_answered += 1
            if event.yielded:
                self.yields += 1
                if event.latency_s is not None:
                    self.yield_latencies.append(event.latency_s)
        elif event.after == "backchannel" and not event.already_silent:
            self.backchannels_answered += 1
            self.false_yields += int(event.yielded)

    def apply(self, event: LineEvent) -> None:
        kind = event.kind
        if kind == "open":
            self.state = "open"
        elif kind == "format":
            encoding = event.data.get("encoding")
            if isinstance(encoding, str) and encoding:
                self.audio = format_label(encoding, event.data.get("rate"))
        elif kind == "clear":
            self.clears += 1
        elif kind == "no_response":
            self.no_responses += 1
        elif kind == "error":
            self.errors += 1
        elif kind == "closed":
            self.state = "closed"
            by = event.data.get("by")
            self.closed_by = by if isinstance(by, str) else None
        elif kind == "failed":
            self.state = "failed"
            self.failure = terminal_line(event.detail)  # from the network: shown inert
