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

from replay.model import InlineEvent, Turn
from sessions.hostile.redact import public_url
from sessions.log.models import AgentYield
from sessions.plan import BLACK_BOX_KINDS

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
        possessive = "your" if who == "you" else "the"
        if yielded:
            return f"false yield: agent stopped {latency} after {possessive} backchannel"
        return f"agent kept talking through {possessive} backchannel"
    if yielded:
        return f"agent stopped {latency} after {who} began{over}"
    return f"agent did not yield within {window_s:.1f} s{over}"


def short_outcome(after: str, yielded: bool, latency_s: float | None, window_s: float) -> str:
    """A few words for the same result, where room is short (the last-decision panel)."""
    latency = f"+{latency_s:.2f} s" if latency_s is not None else ""
    if after == "backchannel":
        return f"false yield {latency}".rstrip() if yielded else "no false yield"
    if yielded:
        return f"it stopped {latency}".rstrip()
    return f"it talked on (> {window_s:.1f} s)"


def line_agent(header: dict[str, object]) -> str | None:
    """ "twilio ws://127.0.0.1:8765/" for a call to an agent on a line (from the log's
    header), None for cutin's own agents and imports."""
    agent = header.get("agent")
    if not isinstance(agent, dict) or agent.get("kind") not in BLACK_BOX_KINDS:
        return None
    parts = [str(agent["kind"])]
    for key in ("model", "base_url"):
        value = agent.get(key)
        if isinstance(value, str) and value:
            # A log from before headers were redacted may still hold user info or a key.
            parts.append(public_url(value) if key == "base_url" else value)
    return " ".join(parts)


# ---- on a replayed turn (replay.cutin_log.session_import puts ``agent_yield`` events on turns)


def interruption_answer(turn: Turn) -> InlineEvent | None:
    """The ``agent_yield`` that answers the tester's interruption of this turn."""
    for e in turn.events:
        if isinstance(e.source, AgentYield) and e.source.after == "interruption":
            return e
    return None


def turn_cut(turn: Turn, starts: Sequence[float] | None = None) -> CutSplit | None:
    """Where a black-box agent's cut turn splits its ``spoken`` words (None: not such a
    turn). ``starts``: the words' start times (default: the turn's word timings, when
    they match its words; else the stop cannot be placed and sits at the cut)."""
    if not turn.interrupted or turn.cut_word is None or turn.unspoken:
        return None
    answer = interruption_answer(turn)
    stop_t = turn.meta.get("stop_t")
    if answer is not None and isinstance(answer.data.get("stop_t"), int | float):
        stop_t = answer.data["stop_t"]
    if answer is None and stop_t is None:
        return None
    n = len(turn.spoken.split())
    if starts is None:
        starts = [w.start for w in turn.words[:n]]
    if len(starts) != n:
        starts = [float("inf")] * n
    talked_on = answer is not None and not answer.data.get("yielded")
    return split_cut(starts, turn.cut_word, stop_t, talked_on=talked_on)


def cut_marks(turn: Turn, split: CutSplit) -> str:
    """The mark after the talk-over: ``■stop+0.24s``, ``▶talked-on`` or nothing."""
    answer = interruption_answer(turn)
    if split.stopped:
        return stop_mark(answer.data.get("latency_s") if answer is not None else None)
    return TALKED_ON if answer is not None else ""


def false_yields(turn: Turn) -> list[tuple[float, float | None]]:
    """(stop_t, latency) of each stop a backchannel caused in this turn."""
    out = []
    for e in turn.events:
        d = e.data
        after_backchannel = isinstance(e.source, AgentYield) and e.source.after == "backchannel"
        if after_backchannel and d.get("yielded") and isinstance(d.get("stop_t"), int | float):
            out.append((float(d["stop_t"]), d.get("latency_s")))
    return out


def answer_phrase(e: InlineEvent, *, who: str = "the tester") -> str:
    """:func:`yield_phrase` for an ``agent_yield`` inline event."""
    d = e.data
    return yield_phrase(
        str(d.get("after", "")),
        bool(d.get("yielded")),
        d.get("latency_s"),
        float(d.get("window_s") or 0.0),
        float(d.get("talk_over_s") or 0.0),
        who=who,
    )


def answer_is_bad(e: InlineEvent) -> bool:
    """Did the agent do the wrong thing: talk on through a cut, or stop for a backchannel?"""
    yielded = bool(e.data.get("yielded"))
    return yielded if e.data.get("after") == "backchannel" else not yielded


__all__ = [
    "FALSE_YIELD",
    "STOP",
    "TALKED_ON",
    "CutSplit",
    "answer_is_bad",
    "answer_phrase",
    "cut_marks",
    "false_yield_mark",
    "false_yields",
    "interruption_answer",
    "line_agent",
    "short_outcome",
    "split_cut",
    "stop_mark",
    "turn_cut",
    "yield_phrase",
]
