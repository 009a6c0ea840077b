"""Counted words: ``1 trial``, ``2 trials``, never ``1 trials``.

One helper for every count put before a noun: replay, its reports, the replay screen
and ``cutin simulate``'s report."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 call``, ``2 calls``, ``0 calls``; ``plural(2, "agent turn")`` is ``2 agent
    turns`` (``many``: an irregular plural, ``plural(2, "match", "matches")``)."""
    return f"{n} {noun(n, word, many)}"


def noun(n: int, word: str, many: str | None = None) -> str:
    """``word`` for a count of ``n``, without the number (in ``3 of 4 words`` the 4
    decides)."""
    if n == 1:
        return word
    return many if many is not None else word + "s"


__all__ = ["noun", "plural"]
