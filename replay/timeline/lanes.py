"""A call as two lanes (agent / caller) with its marks, and where each thing is drawn.

Pure: no terminal, no SVG text. The model (:class:`Timeline`: lane spans, marks,
intervals) is filled by :mod:`replay.gallery.timeline` from session-log events (the
gallery, live) and by :mod:`replay.report.call_timeline` from a loaded call (the
HTML report). The geometry below is the one both drawings use: character cells for
the terminal (:func:`lane_cells`, :func:`mark_cells`, :func:`column`), and x
positions and per-minute strips for the SVG (:func:`x_of`, :func:`strips`,
:func:`layout_strip`). *Overlap* is where both lanes make sound at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, Protocol


class Word(Protocol):
    """A timed word (a log's ``WordTiming`` or a loaded turn's ``WordTime``)."""

    @property
    def word(self) -> str: ...
    @property
    def start(self) -> float: ...
    @property
    def end(self) -> float: ...


Lane = Literal["agent", "caller"]
SEGMENT_GAP_S: dict[str, float] = {"agent": 0.18, "caller": 0.1}
"""Silence between two words that splits a drawn stretch. The agent's comma pauses stay
joined; the caller's pauses all show, since disfluent pauses are what a reader looks for."""


class MarkKind(StrEnum):
    PAUSE = "pause"
    """A short pause where the rule was consulted and did nothing."""
    INTERRUPTION = "interruption"
    """The caller comes in over the agent."""
    BACKCHANNEL = "backchannel"
    CUT = "cut"
    """The agent stops speaking mid-turn (a black-box agent: where the caller began)."""
    STOP = "stop"
    """A black-box agent's audio stopped after an interruption (``agent_yield``)."""
    TALKED_ON = "talked-on"
    """A black-box agent did not yield within the window after an interruption."""
    FALSE_YIELD = "false-yield"
    """A black-box agent stopped after a backchannel."""
    NO_RESPONSE = "no-response"
    """No agent turn within the response window after the caller's turn."""


@dataclass(frozen=True, slots=True)
class LaneSpan:
    lane: Lane
    start: float
    end: float
    kind: Literal["speech", "backchannel"]
    text: str
    turn: int


@dataclass(frozen=True, slots=True)
class Mark:
    t: float
    kind: MarkKind
    label: str
    by_rule: bool = False
    """True when the rule engine decided it (False: a scripted or manual action)."""
    detail: str = ""
    """A sentence for the reader (a hover title): the rule's decision, a latency."""


IntervalKind = Literal[
    "yield", "talk-over", "false-yield", "dead-air", "no-response", "agent-sound"
]


@dataclass(frozen=True, slots=True)
class Interval:
    """A stretch the report draws below (or inside) the lanes: the time from the caller's
    onset to the agent's stop (``yield``, ``false-yield``), the agent's talk-over, a
    dead-air gap, or where the recording has the agent's sound."""

    kind: IntervalKind
    start: float
    end: float
    label: str = ""


@dataclass(frozen=True, slots=True)
class TranscriptLine:
    t: float
    speaker: Literal["agent", "caller"]
    text: str
    """Agent: what was spoken. Caller: the rendered text (what the voice says)."""
    unspoken: str = ""
    """Agent: what it meant to say but never said (cut)."""
    original: str = ""
    """Caller: the line before disfluencies were added (when different)."""
    note: str = ""


@dataclass
class Timeline:
    spans: list[LaneSpan] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    lines: list[TranscriptLine] = field(default_factory=list)
    end_t: float = 0.0
    intervals: list[Interval] = field(default_factory=list)

    def lane(self, lane: Lane, until: float | None = None) -> list[LaneSpan]:
        """Spans of one lane, clipped at ``until`` (the playhead) when given."""
        out = []
        for s in self.spans:
            if s.lane != lane:
                continue
            if until is not None:
                if s.start >= until:
                    continue
                if s.end > until:
                    s = LaneSpan(s.lane, s.start, until, s.kind, s.text, s.turn)
            out.append(s)
        return out

    def overlaps(self, until: float | None = None) -> list[tuple[float, float]]:
        """Stretches where agent and caller both make sound."""
        out: list[tuple[float, float]] = []
        for a in self.lane("agent", until):
            for c in self.lane("caller", until):
                lo, hi = max(a.start, c.start), min(a.end, c.end)
                if hi > lo + 1e-6:
                    out.append((round(lo, 4), round(hi, 4)))
        return _merge(out)

    def overlap_seconds(self) -> float:
        return round(sum(hi - lo for lo, hi in self.overlaps()), 4)


def _merge(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for lo, hi in sorted(intervals):
        if merged and lo <= merged[-1][1] + 1e-9:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def segments(lane: Lane, turn: int, words: Sequence[Word]) -> list[LaneSpan]:
    spans: list[LaneSpan] = []
    group: list[Word] = []
    for w in words:
        if group and w.start - group[-1].end > SEGMENT_GAP_S[lane]:
            spans.append(_span(lane, turn, group))
            group = []
        group.append(w)
    if group:
        spans.append(_span(lane, turn, group))
    return spans


def _span(lane: Lane, turn: int, words: Sequence[Word]) -> LaneSpan:
    text = " ".join(w.word for w in words)
    return LaneSpan(lane, words[0].start, words[-1].end, "speech", text, turn)


# ---- geometry ------------------------------------------------------------------


class Cell(StrEnum):
    EMPTY = "empty"
    SPEECH = "speech"
    OVERLAP = "overlap"
    BACKCHANNEL = "backchannel"


def focus_window(
    tl: Timeline,
    *,
    around: tuple[float, float] | None = None,
    before_s: float = 3.0,
    after_s: float = 3.0,
    min_s: float = 8.0,
) -> tuple[float, float]:
    """The part of the call worth drawing: around the overlaps, cuts and backchannels
    (or around the stretch ``around``), at least ``min_s`` long.

    Falls back to the whole call when nothing is notable.
    """
    if around is not None:
        notable = list(around)
    else:
        notable = [m.t for m in tl.marks if m.kind is not MarkKind.PAUSE]
        for lo, hi in tl.overlaps():
            notable += [lo, hi]
    end = max(tl.end_t, 0.1)
    if not notable:
        return (0.0, round(end, 3))
    t0 = max(0.0, min(notable) - before_s)
    t1 = min(end, max(notable) + after_s)
    if t1 - t0 < min_s:
        grow = min_s - (t1 - t0)
        t0 = max(0.0, t0 - grow / 2)
        t1 = min(end, t0 + min_s)
    return (round(t0, 3), round(t1, 3))


def follow_window(focus: tuple[float, float], now: float) -> tuple[float, float]:
    """The window to draw at playhead ``now`` during live play: as wide as ``focus``,
    sliding from the call's start until it reaches ``focus``, holding there, and sliding
    on when the playhead nears its right edge (so the playhead is always in view)."""
    t0, t1 = focus
    w = max(t1 - t0, 1e-6)
    start = min(t0, max(0.0, now - 0.75 * w)) if now <= t1 - 0.1 * w else now - 0.9 * w
    return (round(start, 3), round(start + w, 3))


def _coverage(spans: Iterable[tuple[float, float]], lo: float, hi: float) -> float:
    return sum(max(0.0, min(b, hi) - max(a, lo)) for a, b in spans)


def lane_cells(
    tl: Timeline,
    lane: Lane,
    t0: float,
    t1: float,
    width: int,
    *,
    until: float | None = None,
) -> list[Cell]:
    """One cell per column of ``width`` columns spanning [t0, t1)."""
    width = max(1, width)
    dt = (t1 - t0) / width if t1 > t0 else 1.0
    spans = tl.lane(lane, until)
    speech = [(s.start, s.end) for s in spans if s.kind == "speech"]
    tokens = [(s.start, s.end) for s in spans if s.kind == "backchannel"]
    overlaps = tl.overlaps(until)
    cells: list[Cell] = []
    for col in range(width):
        lo, hi = t0 + col * dt, t0 + (col + 1) * dt
        if _coverage(overlaps, lo, hi) >= 0.3 * dt:
            cells.append(Cell.OVERLAP)
        elif _coverage(tokens, lo, hi) >= 0.3 * dt:
            cells.append(Cell.BACKCHANNEL)
        elif _coverage(speech, lo, hi) >= 0.3 * dt:
            cells.append(Cell.SPEECH)
        else:
            cells.append(Cell.EMPTY)
    # Short things must not vanish at a coarse scale: give each at least one cell.
    for kind, intervals in ((Cell.BACKCHANNEL, tokens), (Cell.OVERLAP, overlaps)):
        for a, b in intervals:
            mid = column((a + b) / 2, t0, t1, width)
            if mid is not None and cells[mid] is not Cell.OVERLAP:
                cells[mid] = kind
    return cells


def column(t: float, t0: float, t1: float, width: int) -> int | None:
    """The column holding time ``t``, or None outside [t0, t1)."""
    if t1 <= t0 or t < t0 or t >= t1:
        return None
    return min(width - 1, int((t - t0) / (t1 - t0) * width))


MARK_PRIORITY = {
    MarkKind.STOP: 4,
    MarkKind.FALSE_YIELD: 4,
    MarkKind.TALKED_ON: 4,
    MarkKind.NO_RESPONSE: 1,
    MarkKind.CUT: 3,
    MarkKind.INTERRUPTION: 2,
    MarkKind.BACKCHANNEL: 1,
    MarkKind.PAUSE: 0,
}


def mark_cells(
    tl: Timeline,
    t0: float,
    t1: float,
    width: int,
    *,
    until: float | None = None,
    kinds: frozenset[MarkKind] | None = None,
) -> dict[int, Mark]:
    """The most important mark per column (a cut beats an interruption beats a pause);
    only marks of ``kinds`` when given."""
    out: dict[int, Mark] = {}
    for mark in tl.marks:
        if until is not None and mark.t > until:
            continue
        if kinds is not None and mark.kind not in kinds:
            continue
        col = column(mark.t, t0, t1, width)
        if col is None:
            continue
        if col not in out or MARK_PRIORITY[mark.kind] > MARK_PRIORITY[out[col].kind]:
            out[col] = mark
    return out


def tick_step(span_s: float, slots: int) -> float:
    """A round tick spacing (0.5, 1, 2, 5, 10 ... s) giving at most ``slots`` ticks."""
    slots = max(1, slots)
    for step in (0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0):
        if span_s / step <= slots:
            return step
    return 600.0


def ticks(t0: float, t1: float, slots: int) -> list[float]:
    """Tick times in [t0, t1] at a round spacing."""
    step = tick_step(t1 - t0, slots)
    first = math.ceil(t0 / step - 1e-9) * step
    out = []
    t = first
    while t <= t1 + 1e-9:
        out.append(round(t, 3))
        t += step
    return out


# ---- the SVG's strips --------------------------------------------------------------

STRIP_S = 60.0
"""One strip of the report's timeline: a minute of the call."""
STRIP_W = 1200.0
"""A strip's drawing width (SVG user units): 20 units a second."""
SvgRow = Literal["agent", "caller", "marks", "yield", "gaps"]


@dataclass(frozen=True, slots=True)
class Shape:
    """One thing drawn on a strip: a bar (``w`` > 0) or a point mark (``w`` = 0) in
    ``row``, at x (``0 .. width``), with the times it stands for."""

    row: SvgRow
    kind: str
    """speech | backchannel | overlap | an :data:`IntervalKind` | a :class:`MarkKind`."""
    x: float
    w: float
    t: float
    t_end: float
    label: str = ""
    detail: str = ""


def strips(end_t: float, strip_s: float = STRIP_S) -> list[tuple[float, float]]:
    """[t0, t1) windows of ``strip_s`` covering the call (at least one)."""
    end = end_t if math.isfinite(end_t) and end_t > 0 else 0.0
    n = max(1, math.ceil(end / strip_s - 1e-9))
    return [(round(i * strip_s, 6), round((i + 1) * strip_s, 6)) for i in range(n)]


def x_of(t: float, t0: float, t1: float, width: float = STRIP_W) -> float:
    """Where time ``t`` is on a strip [t0, t1) drawn ``width`` wide (clamped to it)."""
    if t1 <= t0:
        return 0.0
    return round(min(width, max(0.0, (t - t0) / (t1 - t0) * width)), 2)


def t_of(x: float, t0: float, t1: float, width: float = STRIP_W) -> float:
    """The inverse of :func:`x_of` (what a reader of the SVG gets back)."""
    return t0 + x / width * (t1 - t0)


_INTERVAL_ROW: dict[str, SvgRow] = {
    "agent-sound": "agent",
    "yield": "yield",
    "talk-over": "yield",
    "false-yield": "yield",
    "dead-air": "gaps",
    "no-response": "gaps",
}
_MARK_ROW: dict[MarkKind, SvgRow] = {
    MarkKind.CUT: "agent",
    MarkKind.STOP: "agent",
    MarkKind.TALKED_ON: "agent",
    MarkKind.FALSE_YIELD: "agent",
    MarkKind.INTERRUPTION: "caller",
    MarkKind.BACKCHANNEL: "caller",
    MarkKind.PAUSE: "marks",
    MarkKind.NO_RESPONSE: "gaps",
}


def layout_strip(tl: Timeline, t0: float, t1: float, width: float = STRIP_W) -> list[Shape]:
    """Everything of ``tl`` that falls in [t0, t1), placed: bars first (drawn below),
    then point marks (drawn on top), each in time order."""

    def bar(row: SvgRow, kind: str, a: float, b: float, label: str, detail: str = "") -> None:
        if b < t0 or a >= t1 or b < a:
            return
        x0, x1 = x_of(a, t0, t1, width), x_of(b, t0, t1, width)
        bars.append(Shape(row, kind, x0, max(x1 - x0, 1.0), a, b, label, detail))

    bars: list[Shape] = []
    for iv in tl.intervals:
        bar(_INTERVAL_ROW[iv.kind], iv.kind, iv.start, iv.end, iv.label)
    here = [s for s in tl.spans if s.end >= t0 and s.start < t1]
    for span in here:
        bar(span.lane, span.kind, span.start, span.end, span.text)
    for lo, hi in Timeline(spans=here).overlaps():
        bar("caller", "overlap", lo, hi, "both at once")
    points = [
        Shape(
            _MARK_ROW[m.kind],
            m.kind.value,
            x_of(m.t, t0, t1, width),
            0.0,
            m.t,
            m.t,
            m.label,
            m.detail,
        )
        for m in tl.marks
        if t0 <= m.t < t1
    ]
    bars.sort(key=lambda s: (s.t, s.row))
    points.sort(key=lambda s: s.t)
    return bars + points
