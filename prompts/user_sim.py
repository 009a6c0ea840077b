"""The user simulator's system prompt and the small texts around it."""

from __future__ import annotations

from prompts import load_template, render

END_MARK = "[END CALL]"
"""What the simulator appends when it hangs up (see ``user_sim_system.txt``)."""


def system_prompt(goal: str, persona: str, style_directive: str = "") -> str:
    """The simulator's system prompt for a scenario's goal and persona.

    ``style_directive`` (e.g. a prompted-disfluency condition from
    :func:`prompts.disfluency.directive`) is appended after a blank line, the way the
    method paper appends its disfluency prompt; empty means none.
    """
    base = render(
        "user_sim_system",
        goal=goal.strip() or "(not given)",
        persona=persona.strip() or "(not given)",
        end_mark=END_MARK,
    )
    return f"{base}\n\n{style_directive}" if style_directive else base


def opening_cue() -> str:
    """The user message that asks for the simulator's first line when the agent is silent."""
    return load_template("user_sim_opening")


def agent_message(content: str, truncated: bool) -> str:
    """How an agent message reads to the simulator; a cut message carries a marker."""
    return f"{content} {load_template('user_sim_cut_mark')}" if truncated else content


def split_end_mark(text: str) -> tuple[str, bool]:
    """``(text without the hang-up mark, whether it was there)``."""
    if END_MARK.lower() not in text.lower():
        return text.strip(), False
    i = text.lower().index(END_MARK.lower())
    return (text[:i] + text[i + len(END_MARK) :]).strip(), True
