"""How a black-box agent's cut turn reads: where the caller began and where the agent stopped.

cutin cannot stop an agent on a line (``cutin call --agent twilio:...|realtime``): an
interruption makes the caller start speaking over it, and the log says where the
agent's audio actually stopped (``agent_turn_end.stop_t``, ``agent_yield``). Such a
turn's ``spoken`` is everything the agent said, ``cut_word`` counts the words heard by
the caller's onset, and the words after it up to ``stop_t`` are the agent's talk-over.

One place for the split and the wording, used by the live call screen, the replay
table and the reports, so all three say the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

STOP = "■stop"
TALKED_ON = "▶talked-on"
FALSE_YIELD = "■false-yield"


@dataclass(frozen=True, slots=True)
class CutSplit:
    """A cut black-box turn's words in three runs: ``[:cut]`` heard before the caller's
    onset, ``[cut:stop]`` said over the caller, ``[stop:]`` after the stop (none, usually)."""

    cut: int
    stop: int
    stopped: bool
    """The agent fell silent (``stop_t`` known); False: it talked on."""


def split_cut(
    starts: Sequence[float], cut_word: int, stop_t: float | None, *, talked_on: bool = False
) -> CutSplit:
    """Split words (their start times) at the cut and the stop.

    A word counts as said before the stop when it began before ``stop_t``; without a
    stop, every word after the cut is talk-over when ``talked_on`` (the agent did not
    yield), else the stop is unknown and sits at the cut."""
    n = len(starts)
    cut = max(0, min(cut_word, n))
    if stop_t is None:
        return CutSplit(cut, n if talked_on else cut, False)
    stop = sum(1 for s in starts if s < stop_t - 1e-9)
    return CutSplit(cut, max(cut, min(stop, n)), True)


def stop_mark(latency_s: float | None) -> str:
    """``■stop+0.24s``: the marker where the agent's audio stopped, that long after the
    caller's onset (one token, so a wrapped transcript never splits it)."""
    return STOP if latency_s is None else f"{STOP}+{latency_s:.2f}s"


def false_yield_mark(latency_s: float | None) -> str:
    """``■false-yield+0.30s``: where a backchannel made the agent stop."""
    return FALSE_YIELD if latency_s is None else f"{FALSE_YIELD}+{latency_s:.2f}s"


def yield_phrase(
    after: str,
    yielded: bool,
    latency_s: float | None,
    window_s: float,
    talk_over_s: float,
    *,
    who: str = "you",
) -> str:
    """One sentence for an ``agent_yield`` result, from the tester's side (``who``:
    "you" on the live call, "the tester" in replay and reports)."""
    over = f" (talk-over {talk_over_s:.1f} s)" if talk_over_s >= 0.05 else ""
    latency = f"{latency_s:.2f} s" if latency_s is not None else "?"
    if after == "backchannel":
        possessive = "your" if who == "you" else "the tester's"
        if yielded:
            return f"false yield: the agent stopped {latency} after {possessive} backchannel"
        return f"the agent kept talking through {possessive} backchannel"
    if yielded:
        return f"agent stopped {latency} after {who} began{over}"
    return f"agent did not yield within {window_s:.1f} s{over}"


__all__ = [
    "FALSE_YIELD",
    "STOP",
    "TALKED_ON",
    "CutSplit",
    "false_yield_mark",
    "split_cut",
    "stop_mark",
    "yield_phrase",
]
