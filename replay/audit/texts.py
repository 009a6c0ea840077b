"""Plain text as audit conversations (``cutin audit --texts``): user turns only, one
per line, a blank line ending a conversation; each injected at each α and counted on
the rendered text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from replay.audit.counter import count
from replay.audit.sessions import Conversation


def split_conversations(lines: Iterable[str]) -> list[list[str]]:
    """User turns, one per line; a blank line ends a conversation."""
    out: list[list[str]] = [[]]
    for raw in lines:
        line = raw.rstrip("\n").strip()
        if line:
            out[-1].append(line)
        elif out[-1]:
            out.append([])
    return [c for c in out if c]


def from_texts(
    conversations: Sequence[Sequence[str]],
    alphas: Sequence[float],
    *,
    source: str = "",
    style: str = "paper",
) -> list[Conversation]:
    """Each conversation injected at each α (:func:`controls.inject_disfluency`, in the
    disfluency ``style``: "paper" or "human") and counted on the rendered text. The
    conversation's position is its scenario, so paired tests pair the same text
    across α."""
    from controls import inject_disfluency
    from controls.disfluency import profile_for_style

    profile = profile_for_style(style)

    out: list[Conversation] = []
    for alpha in alphas:
        for k, turns in enumerate(conversations, start=1):
            header = {
                "source": "texts",
                "session_id": f"{k}@{alpha:g}",
                "scenario": f"conversation {k}",
                "policy": "injection",
                "agent": {"model": None},
                "tendencies": {"alpha": float(alpha)},
                "disfluency_style": style,
            }
            conv = Conversation(id=f"{k}@{alpha:g}", source=source, kind="texts", header=header)
            conv.turns = [count(inject_disfluency(t, alpha, profile).rendered) for t in turns]
            out.append(conv)
    return out


__all__ = ["from_texts", "split_conversations"]
