"""What the line tests share: :class:`WireAgent`, the scripted Twilio agent's server
(tests/support/twilio_agent.py) recording binary messages too, for the PCM16 lines
(Exotel, Vonage, raw PCM); and :class:`Notices`, what any line says while a test waits
for something.

A text message is recorded parsed (a dict, or ``{"text": raw}`` when it is not a JSON
object); a binary one as ``{"binary": bytes}``. ``binary(call)`` joins the binary
messages, ``sizes(call)`` lists their lengths.
"""

from __future__ import annotations

import json
import time
from typing import Any

from sessions.lines.base import Line, LineNotice, NoticeKind
from tests.support.twilio_agent import AgentCall, TwilioAgent

__all__ = ["AgentCall", "Notices", "WireAgent", "binary", "sizes", "texts"]


class Notices:
    """Everything a line has said, gathered while waiting for something."""

    def __init__(self, line: Line) -> None:
        self.line = line
        self.seen: list[LineNotice] = []

    def of(self, kind: NoticeKind) -> list[LineNotice]:
        self.seen += self.line.notices()
        return [n for n in self.seen if n.kind is kind]

    def wait(self, kind: NoticeKind, count: int = 1, timeout: float = 5.0) -> list[LineNotice]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(found := self.of(kind)) >= count:
                return found
            time.sleep(0.01)
        raise AssertionError(f"no {kind} notice within {timeout} s; saw {self.seen}")


class WireAgent(TwilioAgent):
    """:class:`TwilioAgent` whose calls record binary and text messages alike."""

    def parse(self, raw: str | bytes) -> dict[str, Any]:
        if isinstance(raw, bytes):
            return {"binary": raw}
        try:
            message = json.loads(raw)
        except ValueError:
            return {"text": raw}
        return message if isinstance(message, dict) else {"text": raw}


def binary(call: AgentCall) -> bytes:
    return b"".join(r.message["binary"] for r in call.received if "binary" in r.message)


def sizes(call: AgentCall) -> list[int]:
    return [len(r.message["binary"]) for r in call.received if "binary" in r.message]


def texts(call: AgentCall) -> list[dict[str, Any]]:
    return [r.message for r in call.received if "binary" not in r.message]
