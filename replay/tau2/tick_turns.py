"""Full-duplex τ2 ticks → turns: joining one side's segments into turns, the
backchannels and interruptions as inline events (the segments, effects and overlaps
they are built from are :mod:`replay.tau2.ticks`'s).

Turns are ours: consecutive segments of one speaker join into one turn while the
other side does not take the floor and the silence between them is at most
:data:`~replay.tau2.ticks.TURN_JOIN_GAP_S`. Backchannels never take the floor; they
become inline events on the agent turn they overlap.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from replay.model import (
    AgentInterruption,
    InlineEvent,
    OutOfTurnEffect,
    Speaker,
    TickTimeline,
    Turn,
    UserBackchannel,
    UserInterruption,
    UserSound,
)
from replay.tau2.ticks import (
    MUFFLING,
    TURN_JOIN_GAP_S,
    EffectSpan,
    Overlap,
    Segment,
    out_of_turn_effects,
    overlaps,
    segments,
)


@dataclass(slots=True)
class TickAnalysis:
    """Everything derived from one timeline."""

    timeline: TickTimeline
    user_segments: list[Segment]
    agent_segments: list[Segment]
    overlaps: list[Overlap]
    agent_interruptions: list[Segment]
    """Agent segments that began while the user was speaking."""
    effects_out_of_turn: list[EffectSpan]
    turns: list[Turn] = field(default_factory=list)

    @property
    def interruptions(self) -> list[Overlap]:
        return [o for o in self.overlaps if isinstance(overlap_event(o), UserInterruption)]

    @property
    def backchannels(self) -> list[Overlap]:
        return [o for o in self.overlaps if isinstance(overlap_event(o), UserBackchannel)]


def analyze(timeline: TickTimeline, *, join_gap_s: float = TURN_JOIN_GAP_S) -> TickAnalysis:
    """Segments, overlaps and turns of one simulation (end artifact removed first)."""
    tl = timeline.without_end_artifact()
    user_segs = segments(tl, "user")
    agent_segs = segments(tl, "agent")
    found = overlaps(tl, user_segs, agent_segs)
    barge_ins = [a for a in agent_segs if a.other_at_start]
    analysis = TickAnalysis(tl, user_segs, agent_segs, found, barge_ins, out_of_turn_effects(tl))
    analysis.turns = _turns(analysis, join_gap_s)
    return analysis


def _turns(a: TickAnalysis, join_gap_s: float) -> list[Turn]:
    by_user_seg = {o.user.index: o for o in a.overlaps}
    floor = [s for s in a.user_segments if not s.is_backchannel] + a.agent_segments
    floor.sort(key=lambda s: (s.start_tick, s.role != "agent"))
    turns: list[Turn] = []
    counters = {"agent": 0, "user": 0}
    seg_turn: dict[tuple[str, int], Turn] = {}
    for seg in floor:
        last = turns[-1] if turns else None
        joins = (
            last is not None
            and last.speaker == seg.role
            and last.end is not None
            and seg.start_s - last.end <= join_gap_s
        )
        if joins and last is not None:
            last.end = seg.end_s
            last.meta["tick_end"] = seg.end_tick
            last.meta["segments"].append(seg.index)
            if seg.text:
                last.text = f"{last.text} {seg.text}".strip()
                last.spoken = last.text
            turn = last
        else:
            speaker: Speaker = "agent" if seg.role == "agent" else "user"
            turn = Turn(
                index=len(turns),
                speaker=speaker,
                number=counters[speaker],
                start=seg.start_s,
                end=seg.end_s,
                text=seg.text,
                spoken=seg.text,
                source="tau2" if speaker == "user" else "",
                meta={
                    "tick_start": seg.start_tick,
                    "tick_end": seg.end_tick,
                    "segments": [seg.index],
                },
            )
            counters[speaker] += 1
            turns.append(turn)
        seg_turn[(seg.role, seg.index)] = turn
        if seg.role == "user":
            overlap = by_user_seg.get(seg.index)
            if overlap is not None and not isinstance(overlap_event(overlap), UserInterruption):
                turn.meta["overlap_kind"] = overlap.kind

    def agentturn_at(seg: Segment | None, t: float) -> Turn | None:
        if seg is not None:
            return seg_turn.get(("agent", seg.index))
        return turn_at(turns, "agent", t)

    for o in a.overlaps:
        host = agentturn_at(o.agent, o.user.start_s)
        if host is None:
            continue
        data: dict[str, Any] = {
            "yielded": o.yielded,
            "yield_latency_s": o.yield_latency_s,
            "talk_over_s": o.talk_over_s,
            "user_duration_s": o.user.duration_s,
            "tick": o.user.start_tick,
        }
        event = overlap_event(o)
        if isinstance(event, UserInterruption):
            host.events.append(InlineEvent(o.user.start_s, event, "user", data))
            if not host.interrupted:
                host.interrupted = True
                host.cut_t = o.user.start_s
                host.talk_over_s = o.talk_over_s
        else:
            data["answered"] = o.answered
            label = o.user.text or ("mm-hmm" if isinstance(event, UserBackchannel) else o.kind)
            host.events.append(InlineEvent(o.user.start_s, event, label, data))
    for seg in a.agent_interruptions:
        host = turn_at(turns, "user", seg.start_s)
        if host is not None:
            host.events.append(
                InlineEvent(seg.start_s, AgentInterruption(), "agent", {"tick": seg.start_tick})
            )
    for span in a.effects_out_of_turn:
        host = turn_at(turns, None, span.start_s)
        if host is not None and span.kind != MUFFLING:
            label = span.effect.text or (span.effect.file or "").rsplit("/", 1)[-1]
            host.events.append(
                InlineEvent(
                    span.start_s, OutOfTurnEffect(span.kind), label, {"tick": span.start_tick}
                )
            )
    for turn in turns:
        turn.events.sort(key=lambda e: e.t)
    return turns


_OVERLAPS: dict[str, UserInterruption | UserBackchannel] = {
    cls.type: cls() for cls in (UserInterruption, UserBackchannel)
}


def overlap_event(o: Overlap) -> UserInterruption | UserBackchannel | UserSound:
    """The typed event of an overlap: the one place τ2's overlap kind (text) is read."""
    return _OVERLAPS.get(o.kind) or UserSound(o.kind)


def turn_at(turns: Iterable[Turn], speaker: str | None, t: float) -> Turn | None:
    """The latest turn (of ``speaker``, if given) that started at or before ``t``."""
    best: Turn | None = None
    for turn in turns:
        if speaker is not None and turn.speaker != speaker:
            continue
        if turn.start is not None and turn.start <= t:
            best = turn
    return best


__all__ = ["TickAnalysis", "analyze", "overlap_event", "turn_at"]
