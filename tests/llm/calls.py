"""Hand-written cutin session logs for the positions tests (the log format is a contract)."""

from __future__ import annotations

from pathlib import Path

from sessions.log.models import AgentTurnEnd, AgentTurnStart, EndEvent, Header, UserTurn, Verdict
from sessions.log.writer import dump_line

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
    session = path.stem
    lines = [
        dump_line(Header(session_id=session, started_at="2026-01-01T00:00:00Z", scenario=scenario))
    ]
    t, agent_n, user_n = 0.0, 0, 0
    for speaker, text, extra in script:
        if speaker == "agent":
            spoken = extra if extra is not None else text
            lines.append(dump_line(AgentTurnStart(t=t, turn=agent_n, text=text)))
            t += 2.0
            lines.append(
                dump_line(
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
            )
            agent_n += 1
        else:
            source = extra or "simulator"
            lines.append(
                dump_line(UserTurn(t=t, turn=user_n, source=source, original=text, rendered=text))
            )
            user_n += 1
        t += 0.5
    if failed:
        lines.append(dump_line(Verdict(t=t, judge="rules", label="fail", name="goal")))
    lines.append(dump_line(EndEvent(t=t)))
    path.write_text("".join(lines), encoding="utf-8")
    return path
