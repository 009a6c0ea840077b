"""tau-Voice's two turn-taking classifiers (interruption, backchannel) as prompts.

The conversation is formatted the way tau2-bench formats it for these prompts
(``_format_conversation_history`` in src/tau2/user/user_simulator_streaming.py): one
``ROLE: content`` line per non-empty message, upper-case roles, the last 100 messages,
and the agent's ongoing speech suffixed with `` [CURRENTLY SPEAKING, INCOMPLETE]``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prompts import render

INCOMPLETE_SUFFIX = " [CURRENTLY SPEAKING, INCOMPLETE]"
HISTORY_LIMIT = 100


def format_history(messages: Iterable[tuple[str, str]], agent_so_far: str) -> str:
    """``(role, content)`` pairs (roles ``user``/``assistant``) plus the agent's ongoing turn."""
    lines = [(role, content) for role, content in messages if content]
    if agent_so_far:
        lines.append(("assistant", f"{agent_so_far}{INCOMPLETE_SUFFIX}"))
    return "\n".join(f"{role.upper()}: {content}" for role, content in lines[-HISTORY_LIMIT:])


def interruption_prompt(conversation_history: str) -> str:
    """The interruption classifier's prompt around a formatted history."""
    return render("tau_voice_interruption", conversation_history=conversation_history)


def backchannel_prompt(conversation_history: str) -> str:
    """The backchannel (continuer) classifier's prompt around a formatted history."""
    return render("tau_voice_backchannel", conversation_history=conversation_history)


def is_yes(answer: str) -> bool:
    """tau2's reading of a classifier answer: exactly ``YES`` after strip + upper."""
    return answer.strip().upper() == "YES"
