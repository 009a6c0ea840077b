"""Build τ2-shaped tick lists from two strings: ``agent="AAA..."``, ``user="..UU"``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def ticks(
    agent: str,
    user: str,
    *,
    actions: Mapping[int, str] | None = None,
    inserts: Mapping[int, tuple[str, str]] | None = None,
    source_inserts: Mapping[int, tuple[str, str]] | None = None,
    user_text: Mapping[int, str] | None = None,
) -> list[dict[str, Any]]:
    """One tick per character; any non-"." character is speech. ``actions`` gives the
    user's turn-taking action at a tick (default: ``keep_talking`` on speech, ``wait``
    otherwise); ``inserts`` a speech-effects insert ``(type, text)`` at a tick and
    ``source_inserts`` a source-effects one."""
    n = max(len(agent), len(user))
    agent, user = agent.ljust(n, "."), user.ljust(n, ".")
    out = []
    for i in range(n):
        speaking = user[i] != "."
        action = (actions or {}).get(i, "keep_talking" if speaking else "wait")
        chunk: dict[str, Any] = {
            "role": "user",
            "contains_speech": speaking,
            "turn_taking_action": {"action": action},
            "speech_effects": None,
            "source_effects": None,
        }
        if inserts and i in inserts:
            kind, text = inserts[i]
            chunk["speech_effects"] = {
                "dynamic_muffling_enabled": False,
                "speech_insert": {"type": kind, "text": text},
            }
        if source_inserts and i in source_inserts:
            kind, text = source_inserts[i]
            chunk["source_effects"] = {
                "burst_noise_file": None,
                "speech_insert": {"type": kind, "text": text},
            }
        if user_text and i in user_text:
            chunk["content"] = user_text[i]
        out.append(
            {
                "tick_id": i,
                "agent_chunk": {
                    "role": "assistant",
                    "contains_speech": agent[i] != ".",
                    "turn_taking_action": None,
                },
                "user_chunk": chunk,
            }
        )
    return out
