"""A two-lane timeline (agent / caller) computed from session-log events.

The model and its geometry are :mod:`replay.timeline.lanes` (shared by the
terminal's lanes, the handout's SVG and the HTML report's timelines). Agent speech
comes from ``agent_words`` timings, grouped into stretches at pauses; caller speech
from ``user_turn`` start and ``end_t``; a backchannel occupies the caller's channel
for ``backchannel_s``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from replay.timeline.lanes import (
    Cell,
    Lane,
    LaneSpan,
    Mark,
    MarkKind,
    Timeline,
    TranscriptLine,
    column,
    focus_window,
    follow_window,
    lane_cells,
    mark_cells,
    segments,
    tick_step,
    ticks,
)
from sessions.log.models import (
    AgentTurnEnd,
    AgentWords,
    Backchannel,
    Event,
    Interruption,
    Opportunity,
    UserTurn,
    WordTiming,
)

CallerWords = Callable[[UserTurn], "list[WordTiming] | None"]
"""Word timings of a caller turn (the log has only its start and end), or None."""


class TimelineBuilder:
    """Builds a :class:`Timeline` as events arrive (live play) or all at once."""

    def __init__(
        self, *, backchannel_s: float = 0.45, caller_words: CallerWords | None = None
    ) -> None:
        self.backchannel_s = backchannel_s
        self.caller_words = caller_words
        self._words: dict[int, list[WordTiming]] = {}
        self._caller: list[LaneSpan] = []
        self._marks: list[Mark] = []
        self._lines: list[TranscriptLine] = []
        self._end_t = 0.0
        self._interruption_by_rule: dict[int, bool] = {}
        self._last_decision: dict[int, str] = {}

    def feed(self, event: Event) -> None:
        self._end_t = max(self._end_t, event.t)
        handler = _FEED.get(type(event))
        if handler is not None:
            handler(self, event)

    def _on_agent_words(self, event: AgentWords) -> None:
        self._words.setdefault(event.turn, []).extend(event.words)
        self._end_t = max(self._end_t, event.words[-1].end if event.words else 0.0)

    def _on_user_turn(self, event: UserTurn) -> None:
        end = event.end_t if event.end_t is not None else event.t
        words = self.caller_words(event) if self.caller_words is not None else None
        if words:
            self._caller.extend(segments("caller", event.turn, words))
        else:
            self._caller.append(
                LaneSpan("caller", event.t, end, "speech", event.rendered, event.turn)
            )
        original = event.original if event.original != event.rendered else ""
        note = "comes in over the agent" if event.source == "interruption" else ""
        self._lines.append(
            TranscriptLine(event.t, "caller", event.rendered, original=original, note=note)
        )

    def _on_backchannel(self, event: Backchannel) -> None:
        self._caller.append(
            LaneSpan(
                "caller",
                event.t,
                round(event.t + self.backchannel_s, 4),
                "backchannel",
                event.token,
                event.turn,
            )
        )
        by_rule = event.trigger == "auto"
        self._marks.append(Mark(event.t, MarkKind.BACKCHANNEL, event.token, by_rule))
        note = "backchannel (rule)" if by_rule else "backchannel (scripted)"
        self._lines.append(TranscriptLine(event.t, "caller", event.token, note=note))

    def _on_interruption(self, event: Interruption) -> None:
        by_rule = event.trigger == "auto"
        self._interruption_by_rule[event.turn] = by_rule
        self._marks.append(Mark(event.t, MarkKind.INTERRUPTION, event.text, by_rule))

    def _on_opportunity(self, event: Opportunity) -> None:
        self._last_decision[event.turn] = event.decision
        if event.decision == "NOTHING" and event.mode == "auto":
            self._marks.append(Mark(event.t, MarkKind.PAUSE, "rule: nothing"))

    def _agent_turn_end(self, event: AgentTurnEnd) -> None:
        note = ""
        if event.interrupted and event.cut_t is not None:
            if event.talk_over_s:
                note = f"kept talking {event.talk_over_s:.1f} s after the caller came in"
            elif event.unspoken:
                self._marks.append(Mark(event.cut_t, MarkKind.CUT, "agent stops"))
                note = "stops"
        start = self._words.get(event.turn, [])
        t = start[0].start if start else event.t
        self._lines.append(
            TranscriptLine(t, "agent", event.spoken, unspoken=event.unspoken, note=note)
        )

    def feed_all(self, events: Iterable[Event]) -> TimelineBuilder:
        for ev in events:
            self.feed(ev)
        return self

    def timeline(self) -> Timeline:
        spans: list[LaneSpan] = []
        for turn in sorted(self._words):
            spans.extend(segments("agent", turn, self._words[turn]))
        spans.extend(self._caller)
        spans.sort(key=lambda s: (s.start, s.lane))
        return Timeline(
            spans=spans,
            marks=sorted(self._marks, key=lambda m: m.t),
            lines=sorted(self._lines, key=lambda ln: ln.t),
            end_t=round(max([self._end_t, *(s.end for s in spans)]), 4),
        )


_FEED: dict[type[Event], Callable[[TimelineBuilder, Any], None]] = {
    AgentWords: TimelineBuilder._on_agent_words,
    UserTurn: TimelineBuilder._on_user_turn,
    Backchannel: TimelineBuilder._on_backchannel,
    Interruption: TimelineBuilder._on_interruption,
    Opportunity: TimelineBuilder._on_opportunity,
    AgentTurnEnd: TimelineBuilder._agent_turn_end,
}
"""Event model → what it adds to the drawing (every other event only moves the clock)."""


def build_timeline(
    events: Iterable[Event],
    *,
    backchannel_s: float = 0.45,
    caller_words: CallerWords | None = None,
) -> Timeline:
    """The timeline of a finished (or partial) list of events."""
    builder = TimelineBuilder(backchannel_s=backchannel_s, caller_words=caller_words)
    return builder.feed_all(events).timeline()


__all__ = [
    "CallerWords",
    "Cell",
    "Lane",
    "LaneSpan",
    "Mark",
    "MarkKind",
    "Timeline",
    "TimelineBuilder",
    "TranscriptLine",
    "build_timeline",
    "column",
    "focus_window",
    "follow_window",
    "lane_cells",
    "mark_cells",
    "tick_step",
    "ticks",
]
