"""Full-duplex τ2 ticks → speech segments → turns, interruptions and backchannels.

A tick (0.2 s by default) says, for each side, whether it produced speech
(``contains_speech``); the user side also carries the simulator's
``turn_taking_action`` and injected effects (vocal tics, non-directed phrases,
burst noise). We follow τ2-bench's reading of these fields:

* a missing chunk is silence; a chunk without ``contains_speech`` counts as speech
  (that is the field's default in τ2's data model);
* a *segment* is a maximal run of speech ticks of one side; a user segment takes
  its action from its first tick, is a *backchannel* when that action is
  ``backchannel``, and is an *interruption* when the agent was speaking at its first
  tick and it is not a backchannel;
* the last tick is dropped when it is a lone user speech tick (the ``###STOP###``
  artifact τ2 filters before any analysis).

Turns are built from the segments by :mod:`replay.tau2.tick_turns`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replay.model import TickEffect, TickTimeline

DEFAULT_TICK_S = 0.2
TURN_JOIN_GAP_S = 1.0
"""Same-speaker segments closer than this (and not separated by the other side)
are one turn: a sentence pause is not a turn change."""
NO_YIELD_WINDOW_S = 2.0
"""τ-Voice's window for the agent to stop after a real interruption."""
SELECTIVITY_YIELD_WINDOW_S = 1.0
"""τ-Voice's window in which stopping at a backchannel/tic/aside is an error."""

VOCAL_TIC = "vocal_tic"
NON_DIRECTED = "non_directed_speech"
BURST_NOISE = "burst_noise"
MUFFLING = "muffling"


def timeline_from_tau2(ticks: Sequence[Mapping[str, Any]], tick_s: float) -> TickTimeline:
    """Read τ2 tick objects (``agent_chunk`` / ``user_chunk`` per tick)."""
    user_speech: list[bool] = []
    agent_speech: list[bool] = []
    actions: list[str | None] = []
    effects: list[tuple[TickEffect, ...]] = []
    user_text: list[str] = []
    agent_text: list[str] = []
    for i, tick in enumerate(ticks):
        if not isinstance(tick, Mapping):
            raise ValueError(f"tick {i} is not an object")
        user = _chunk(tick.get("user_chunk"))
        agent = _chunk(tick.get("agent_chunk"))
        user_speech.append(_speaks(user))
        agent_speech.append(_speaks(agent))
        action = None
        if user is not None and isinstance(user.get("turn_taking_action"), Mapping):
            raw_action = user["turn_taking_action"].get("action")
            action = str(raw_action) if raw_action else None
        actions.append(action)
        effects.append(_effects(user))
        user_text.append(_text(user))
        agent_text.append(_text(agent))
    return TickTimeline(tick_s, user_speech, agent_speech, actions, effects, user_text, agent_text)


def _chunk(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _speaks(chunk: Mapping[str, Any] | None) -> bool:
    if chunk is None:
        return False
    return bool(chunk.get("contains_speech", True))


def _text(chunk: Mapping[str, Any] | None) -> str:
    if chunk is None:
        return ""
    content = chunk.get("content")
    if isinstance(content, str) and not chunk.get("is_audio"):
        return content
    raw = chunk.get("raw_data")
    if isinstance(raw, Mapping):
        transcript = raw.get("proportional_transcript")
        if isinstance(transcript, str):
            return transcript
    return ""


def _insert_kind(insert: Mapping[str, Any]) -> str:
    return VOCAL_TIC if insert.get("type", VOCAL_TIC) == VOCAL_TIC else NON_DIRECTED


def _effects(chunk: Mapping[str, Any] | None) -> tuple[TickEffect, ...]:
    if chunk is None:
        return ()
    found: list[TickEffect] = []
    source = chunk.get("source_effects")
    if isinstance(source, Mapping):
        burst = source.get("burst_noise_file")
        if burst:
            found.append(TickEffect(BURST_NOISE, file=str(burst)))
        insert = source.get("speech_insert")
        if isinstance(insert, Mapping):
            found.append(TickEffect(_insert_kind(insert), text=str(insert.get("text") or "")))
    speech = chunk.get("speech_effects")
    if isinstance(speech, Mapping):
        if speech.get("dynamic_muffling_enabled"):
            found.append(TickEffect(MUFFLING))
        insert = speech.get("speech_insert")
        if isinstance(insert, Mapping):
            found.append(TickEffect(_insert_kind(insert), text=str(insert.get("text") or "")))
    return tuple(found)


@dataclass(slots=True)
class Segment:
    """A maximal run of speech ticks of one side: ticks ``[start_tick, end_tick)``."""

    role: str
    """user | agent."""
    index: int
    start_tick: int
    end_tick: int
    tick_s: float
    action: str = ""
    other_at_start: bool = False
    other_at_end: bool = False
    effect_kinds: frozenset[str] = frozenset()
    effects: tuple[TickEffect, ...] = ()
    text: str = ""

    @property
    def start_s(self) -> float:
        return self.start_tick * self.tick_s

    @property
    def duration_s(self) -> float:
        return (self.end_tick - self.start_tick) * self.tick_s

    @property
    def end_s(self) -> float:
        # Start plus duration, the way τ2 computes it, so latencies agree to the bit.
        return self.start_s + self.duration_s

    @property
    def is_backchannel(self) -> bool:
        return self.role == "user" and self.action == "backchannel"

    @property
    def is_interruption(self) -> bool:
        return self.role == "user" and self.other_at_start and not self.is_backchannel

    @property
    def has_vocal_tic(self) -> bool:
        return VOCAL_TIC in self.effect_kinds

    @property
    def has_non_directed(self) -> bool:
        return NON_DIRECTED in self.effect_kinds


def segments(timeline: TickTimeline, role: str) -> list[Segment]:
    """Speech segments of ``role`` (user | agent) in tick order."""
    mine = timeline.user_speech if role == "user" else timeline.agent_speech
    other = timeline.agent_speech if role == "user" else timeline.user_speech
    texts = timeline.user_text if role == "user" else timeline.agent_text
    n = len(mine)
    out: list[Segment] = []
    i = 0
    while i < n:
        if not mine[i]:
            i += 1
            continue
        start = i
        while i < n and mine[i]:
            i += 1
        seg = Segment(role, len(out), start, i, timeline.tick_s)
        seg.other_at_start = other[start]
        seg.other_at_end = other[i] if i < n else False
        seg.text = "".join(texts[start:i]).strip()
        if role == "user":
            seg.action = timeline.user_action[start] or ""
            seen: dict[TickEffect, None] = {}
            for tick_effects in timeline.user_effects[start:i]:
                for effect in tick_effects:
                    seen.setdefault(effect, None)
            seg.effects = tuple(seen)
            seg.effect_kinds = frozenset(e.kind for e in seen)
        out.append(seg)
    return out


@dataclass(slots=True)
class EffectSpan:
    """An effect active over consecutive non-speech user ticks ``[start_tick, end_tick)``."""

    effect: TickEffect
    start_tick: int
    end_tick: int
    tick_s: float

    @property
    def kind(self) -> str:
        return self.effect.kind

    @property
    def start_s(self) -> float:
        return self.start_tick * self.tick_s


def out_of_turn_effects(timeline: TickTimeline) -> list[EffectSpan]:
    """Effects injected while the user was not speaking (asides, coughs in a gap)."""
    return effect_spans(timeline, during_speech=False)


def effect_spans(timeline: TickTimeline, *, during_speech: bool = True) -> list[EffectSpan]:
    """Each run of consecutive ticks carrying the same user effect, in order of onset;
    ``during_speech=False`` leaves out the ticks where the user speaks."""
    spans: list[EffectSpan] = []
    open_spans: dict[TickEffect, EffectSpan] = {}
    for i, speaking in enumerate(timeline.user_speech):
        current = () if speaking and not during_speech else timeline.user_effects[i]
        still_open: dict[TickEffect, EffectSpan] = {}
        for effect in current:
            span = open_spans.get(effect)
            if span is not None and span.end_tick == i:
                span.end_tick = i + 1
            else:
                span = EffectSpan(effect, i, i + 1, timeline.tick_s)
                spans.append(span)
            still_open[effect] = span
        open_spans = still_open
    return spans


@dataclass(slots=True)
class Overlap:
    """The user starting to speak while the agent speaks, and what the agent did."""

    kind: str
    """interruption | backchannel | vocal_tic | non_directed_speech."""
    user: Segment
    agent: Segment | None
    """The agent segment that was speaking at the user's onset."""
    yielded: bool
    """The agent stopped within the kind's τ-Voice window."""
    yield_tick: int | None
    yield_latency_s: float | None
    talk_over_s: float
    """Seconds both spoke from the user's onset on (over the agent's ongoing segment)."""
    answered: bool = False
    """For non-interruptions: after stopping, the agent spoke again before the user
    took a turn (it treated the sound as a turn)."""


def _overlap_kind(seg: Segment) -> str:
    # τ-Voice's priority: backchannel > vocal tic > non-directed > real interruption.
    if seg.is_backchannel:
        return "backchannel"
    if seg.has_vocal_tic:
        return VOCAL_TIC
    if seg.has_non_directed:
        return NON_DIRECTED
    return "interruption"


DEFAULT_YIELD_WINDOWS: Mapping[str, float] = {
    "interruption": NO_YIELD_WINDOW_S,
    "backchannel": SELECTIVITY_YIELD_WINDOW_S,
    VOCAL_TIC: SELECTIVITY_YIELD_WINDOW_S,
    NON_DIRECTED: SELECTIVITY_YIELD_WINDOW_S,
}


def overlaps(
    timeline: TickTimeline,
    user_segs: Sequence[Segment],
    agent_segs: Sequence[Segment],
    yield_windows: Mapping[str, float] = DEFAULT_YIELD_WINDOWS,
) -> list[Overlap]:
    """Every user segment that began during agent speech, classified, with the
    agent's reaction measured the way τ-Voice measures it (``yield_windows``: seconds
    per overlap kind)."""
    n = len(timeline)
    out: list[Overlap] = []
    floor_takers = [s for s in user_segs if not s.is_backchannel]
    for seg in user_segs:
        if not seg.other_at_start:
            continue
        kind = _overlap_kind(seg)
        window = int(yield_windows[kind] / timeline.tick_s)
        yield_tick = None
        for i in range(seg.start_tick, min(seg.start_tick + window, n)):
            if not timeline.agent_speech[i]:
                yield_tick = i
                break
        agent = next((a for a in agent_segs if a.start_tick <= seg.start_tick < a.end_tick), None)
        overlap_end = min(seg.end_tick, agent.end_tick) if agent else seg.start_tick
        talk_over = max(0, overlap_end - seg.start_tick) * timeline.tick_s
        latency = (
            (yield_tick - seg.start_tick) * timeline.tick_s if yield_tick is not None else None
        )
        item = Overlap(kind, seg, agent, yield_tick is not None, yield_tick, latency, talk_over)
        if kind != "interruption" and yield_tick is not None:
            next_floor = next(
                (s.start_tick for s in floor_takers if s.start_tick > seg.start_tick), n
            )
            item.answered = any(yield_tick <= a.start_tick < next_floor for a in agent_segs)
        out.append(item)
    return out


__all__ = [
    "DEFAULT_TICK_S",
    "DEFAULT_YIELD_WINDOWS",
    "NON_DIRECTED",
    "NO_YIELD_WINDOW_S",
    "SELECTIVITY_YIELD_WINDOW_S",
    "TURN_JOIN_GAP_S",
    "VOCAL_TIC",
    "EffectSpan",
    "Overlap",
    "Segment",
    "effect_spans",
    "out_of_turn_effects",
    "overlaps",
    "segments",
    "timeline_from_tau2",
]
