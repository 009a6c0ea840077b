"""τ2's control tokens: what the user simulator (or agent) writes to end or hand off a call.

``###STOP###`` (the goal is met: hang up), ``###TRANSFER###`` (transferred to a human)
and ``###OUT-OF-SCOPE###`` (the scenario cannot go on) are instructions to the
orchestrator, not words anyone hears. The importer takes them out of the turn's text
and puts a call event on the turn instead (a :class:`replay.model.CallControl`,
:data:`EVENTS` names its kind); the
disfluency counter never counts them.
"""

from __future__ import annotations

import re

TOKEN = re.compile(r"###([A-Z][A-Z_-]*)###")
"""A control token; group 1 is its name (``STOP``, ``TRANSFER``, ...)."""

EVENTS: dict[str, tuple[str, str]] = {
    "STOP": ("hang_up", "hang-up"),
    "TRANSFER": ("transfer", "transfer"),
    "OUT-OF-SCOPE": ("out_of_scope", "out of scope"),
}
"""Token name → (inline event kind, label). Any other name is a ``control`` event."""


def split_control(text: str) -> tuple[str, list[str]]:
    """The text without control tokens (whitespace tidied) and the token names, in order."""
    names = [m.group(1) for m in TOKEN.finditer(text)]
    if not names:
        return text, []
    rest = TOKEN.sub(" ", text)
    lines = [" ".join(line.split()) for line in rest.splitlines()]
    return "\n".join(line for line in lines if line), names


def event_for(name: str) -> tuple[str, str]:
    """(kind, label) of the call event for token ``name``."""
    kind, label = EVENTS.get(name, ("control", name.lower()))
    return kind, f"{label} (###{name}###)"


__all__ = ["EVENTS", "TOKEN", "event_for", "split_control"]
