"""The LLM judge's prompt: a call's turns as plain text, plus the judging instructions.

Plain data in, chat messages out; knows nothing of how calls are stored (replay
builds :class:`JudgeTurn` values from its model). Templates: ``judge_system`` (the
instructions and the JSON answer shape) and ``judge_user`` (scenario, criteria,
transcript).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from prompts import render

CUT_MARK = "⟂CUT"
NO_SCENARIO = "not stated"
NO_CRITERIA = "none given"


@dataclass(frozen=True, slots=True)
class JudgeTurn:
    """One turn as the judge sees it."""

    index: int
    speaker: str
    """agent | user."""
    start: float | None
    spoken: str
    """What was heard: the agent's played words, the tester's meant words."""
    unspoken: str = ""
    """Agent words after the cut (never played)."""
    cut: bool = False
    heard_as: str | None = None
    """For tester turns: what the agent received, when it differs (disfluent rendering)."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    """In-turn happenings in words, e.g. ``backchannel "mm-hmm" at 12.3 s``."""


def _quote_unspoken(text: str) -> str:
    return f"«{text}»"


def format_turn(turn: JudgeTurn) -> str:
    """One turn: a header line with the text, then one ``·`` line per note."""
    when = f"{turn.start:.1f} s" if turn.start is not None else "? s"
    who = "AGENT" if turn.speaker == "agent" else "TESTER"
    text = turn.spoken.strip() or "(no words)"
    if turn.speaker == "agent" and turn.cut:
        text = f"{turn.spoken.strip()} {CUT_MARK}".strip()
        if turn.unspoken.strip():
            text += f" {_quote_unspoken(turn.unspoken.strip())}"
    lines = [f"[{turn.index}] {when} {who}: {text}"]
    if turn.speaker == "user" and turn.heard_as and turn.heard_as.strip() != turn.spoken.strip():
        lines.append(f"    heard as: {turn.heard_as.strip()}")
    lines.extend(f"    · {note}" for note in turn.notes)
    return "\n".join(lines)


def format_transcript(turns: Sequence[JudgeTurn]) -> str:
    """All turns, one block each, in order."""
    return "\n".join(format_turn(t) for t in turns) if turns else "(no turns)"


def judge_messages(
    turns: Sequence[JudgeTurn],
    *,
    scenario: str | None = None,
    criteria: Sequence[str] = (),
) -> list[dict[str, str]]:
    """The chat messages for one call: the system instructions and the call itself."""
    listed = "\n".join(f"- {c}" for c in criteria if c.strip()) or NO_CRITERIA
    user = render(
        "judge_user",
        scenario=(scenario or "").strip() or NO_SCENARIO,
        criteria=listed,
        transcript=format_transcript(turns),
    )
    return [
        {"role": "system", "content": render("judge_system")},
        {"role": "user", "content": user},
    ]


__all__ = ["CUT_MARK", "JudgeTurn", "format_transcript", "format_turn", "judge_messages"]
