"""Crafted cutin session logs for the positions tests (the log format is a contract),
written with tests/support/logs.py."""

from __future__ import annotations

from pathlib import Path

from sessions.log.models import AgentTurnEnd, AgentTurnStart, EndEvent, Event, UserTurn, Verdict
from tests.support.logs import header, write_log

# (speaker, text, extra): agent extra = spoken part if cut; user extra = source
Script = list[tuple[str, str, str | None]]

AIRLINE: Script = [
    ("agent", "Welcome to Northwind Air. Could you read me your booking code?", None),
    ("user", "Sure, it's K7QX2M.", "simulator"),
    (
        "agent",
        "Thank you. Your morning flight was cancelled. There is a direct flight at two fifteen.",
        "Thank you. Your morning flight was cancelled.",
    ),
    ("user", "Sorry, is there a direct one?", "interruption"),
    ("agent", "Yes, at two fifteen. Shall I book it?", None),
    ("user", "Yes please, an aisle seat if you can.", "simulator"),
    ("agent", "Done. Anything else?", None),
    ("user", "No, that's all, thanks.", "simulator"),
]


def write_call(
    path: Path, script: Script, *, scenario: str = "airline-rebooking", failed: bool = False
) -> Path:
    head = header(path.stem, started_at="2026-01-01T00:00:00Z", scenario=scenario, tendencies=None)
    events: list[Event] = []
    t, agent_n, user_n = 0.0, 0, 0
    for speaker, text, extra in script:
        if speaker == "agent":
            spoken = extra if extra is not None else text
            events.append(AgentTurnStart(t=t, turn=agent_n, text=text))
            t += 2.0
            events.append(
                AgentTurnEnd(
                    t=t,
                    turn=agent_n,
                    text=text,
                    spoken=spoken,
                    unspoken=text[len(spoken) :].strip(),
                    interrupted=extra is not None,
                    cut_t=t if extra is not None else None,
                )
            )
            agent_n += 1
        else:
            source = extra or "simulator"
            events.append(UserTurn(t=t, turn=user_n, source=source, original=text, rendered=text))
            user_n += 1
        t += 0.5
    if failed:
        events.append(Verdict(t=t, judge="rules", label="fail", name="goal"))
    events.append(EndEvent(t=t))
    return write_log(path, events, head)
