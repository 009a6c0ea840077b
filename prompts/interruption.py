"""The interruption-line prompt: what the caller blurts out when it cuts the agent off."""

from __future__ import annotations

from prompts import render


def interruption_prompt(agent_so_far: str) -> str:
    """The instruction sent after the conversation, given the agent's turn heard up to the cut."""
    return render("interruption_line", agent_so_far=agent_so_far.strip())
