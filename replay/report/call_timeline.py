"""A call's timeline and its audio in the HTML report: one SVG strip per minute.

The call is turned into the two-lane model of :mod:`replay.timeline.lanes` (the one the
terminal's lanes draw) from the loaded call's turns, and where a recording is beside
the log, the agent's sound from it. Each minute is one strip placed by
:func:`~replay.timeline.lanes.layout_strip` and written here as inline SVG: the agent
and caller lanes (speech, backchannels, overlap), the rule's opportunities (``·``
nothing, ``◆`` backchannel, ``▲`` interruption), every cut ``▌``, the agent's
``■`` stop / ``▶`` talked-on / false yield with the time from the caller's onset, and
no-response and dead-air gaps. Every mark has a ``<title>`` (its details on hover) and
its time in ``data-t``. No script, no external resource; all text from the log is
escaped. Each turn with a cut, a backchannel or a yield gets an ``<audio>`` element
(:mod:`.call_audio`). A call whose frame lag was over a frame gets a warning beside
its timings.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

from replay.audit.agent_floor import LONG_GAP_S, floor_spans
from replay.model import InlineEvent, Trial, Turn, WordTime
from replay.report.call_audio import AudioBudget, agent_sound, clips, recording_of
from replay.timeline.lanes import (
    STRIP_S,
    STRIP_W,
    Interval,
    LaneSpan,
    Mark,
    MarkKind,
    Shape,
    Timeline,
    layout_strip,
    segments,
    strips,
    ticks,
    x_of,
)
from sessions.log.models import LAG_LIMIT_S, AgentYield, Backchannel, Interruption, Opportunity

BACKCHANNEL_S = 0.45
"""How long a backchannel is drawn on the caller's lane (the log has its onset)."""
TEXT_CAP = 300
"""Longest text shown in a hover title (a hostile log's huge text is cut here)."""
LABEL_W = 60.0
ROW_Y = {"agent": 22.0, "caller": 44.0, "marks": 64.0, "yield": 80.0, "gaps": 94.0}
ROW_LABEL = {
    "agent": "agent",
    "caller": "caller",
    "marks": "rule",
    "yield": "yield",
    "gaps": "gaps",
}
ROW_H = {"agent": 16.0, "caller": 16.0, "marks": 12.0, "yield": 10.0, "gaps": 8.0}
SVG_H = 110
COLOR = {
    "speech-agent": "#3b6fb6",
    "speech-caller": "#3fae6a",
    "backchannel": "#a77bd4",
    "overlap": "#e8923a",
    "agent-sound": "#9fb9df",
    "yield": "#e0a43f",
    "talk-over": "#e0533f",
    "false-yield": "#b3261e",
    "dead-air": "#c9ccd1",
    "no-response": "#8e24aa",
}
GLYPH = {
    MarkKind.CUT: "▌",
    MarkKind.STOP: "■",
    MarkKind.TALKED_ON: "▶",
    MarkKind.FALSE_YIELD: "■",
    MarkKind.INTERRUPTION: "▲",
    MarkKind.BACKCHANNEL: "◆",
    MarkKind.PAUSE: "○",
    MarkKind.NO_RESPONSE: "✕",
}
MARK_COLOR = {
    MarkKind.CUT: "#b3261e",
    MarkKind.STOP: "#9a6700",
    MarkKind.TALKED_ON: "#e0533f",
    MarkKind.FALSE_YIELD: "#b3261e",
    MarkKind.INTERRUPTION: "#e0533f",
    MarkKind.BACKCHANNEL: "#7a4fb0",
    MarkKind.PAUSE: "#55606b",
    MarkKind.NO_RESPONSE: "#8e24aa",
}
TIMELINE_CSS = """
.tl svg{display:block;width:100%;height:auto;margin:.15rem 0}
.lag{background:#fff4d6;border:1px solid #e0b44a;padding:.3rem .6rem;border-radius:4px}
.tl .legend{font-size:.85em;color:#55606b}.tl .legend b{font-weight:600}
.tl ol.listen{padding-left:1.2rem}.tl ol.listen li{margin:.3rem 0}
.tl audio{height:2rem;vertical-align:middle;margin-left:.5rem}
"""
LEGEND = (
    '<p class="legend"><b style="color:#3b6fb6">█</b> agent · '
    '<b style="color:#9fb9df">▁</b> agent sound (recording) · '
    '<b style="color:#3fae6a">█</b> caller · <b style="color:#a77bd4">█</b> backchannel · '
    '<b style="color:#e8923a">█</b> both at once · <b style="color:#b3261e">▌</b> cut · '
    "■ agent stopped (yield row: the time from the caller's onset) · ▶ talked on · "
    "○ rule consulted, did nothing · ◆ backchannel · ▲ interruption · ✕ no response · "
    '<b style="color:#c9ccd1">█</b> dead air. Hover a mark for its details.</p>'
)


def _h(text: object) -> str:
    return html.escape(str(text), quote=True)


def _short(text: str) -> str:
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text if len(text) <= TEXT_CAP else text[: TEXT_CAP - 1] + "…"


def _f(v: object) -> float | None:
    if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    return None


def _s(v: float | None) -> str:
    return "?" if v is None else f"{v:.2f} s"


# ---- the call as lanes ---------------------------------------------------------------


def _agent_spans(turn: Turn) -> list[LaneSpan]:
    words: list[WordTime] = [
        w for w in turn.words if _f(w.start) is not None and _f(w.end) is not None
    ]
    if words:
        return segments("agent", turn.number, words)
    start, end = _f(turn.start), _f(turn.end)
    if start is None or end is None or end <= start:
        return []
    return [LaneSpan("agent", start, end, "speech", turn.spoken or turn.text, turn.number)]


def _event_marks(turn: Turn, e: InlineEvent, tl: Timeline) -> None:
    t = _f(e.t)
    if t is None:
        return
    data = e.data
    if isinstance(e.source, Backchannel):
        by_rule = data.get("trigger") == "auto"
        tl.spans.append(
            LaneSpan("caller", t, t + BACKCHANNEL_S, "backchannel", e.label, turn.number)
        )
        how = "the rule" if by_rule else "scripted"
        tl.marks.append(
            Mark(t, MarkKind.BACKCHANNEL, e.label, by_rule, f"backchannel “{e.label}” ({how})")
        )
    elif isinstance(e.source, Interruption):
        by_rule = data.get("trigger") == "auto"
        text = str(data.get("text") or "")
        how = "the rule" if by_rule else str(data.get("trigger") or "scripted")
        tl.marks.append(
            Mark(t, MarkKind.INTERRUPTION, text, by_rule, f"the caller comes in ({how}): {text}")
        )
    elif isinstance(e.source, Opportunity):
        decision = e.label or str(data.get("decision") or "")
        if decision == "NOTHING":
            tl.marks.append(
                Mark(t, MarkKind.PAUSE, "rule: nothing", True, "opportunity: the rule did nothing")
            )
        elif data.get("executed") is False:  # taken ones are their ◆ / ▲ on the caller lane
            what = f"opportunity: the rule decided {decision.lower()}, not taken"
            tl.marks.append(Mark(t, MarkKind.PAUSE, "decided, not taken", True, what))
    elif isinstance(e.source, AgentYield):
        _yield_marks(t, data, tl, e.label)


def _yield_marks(t: float, data: dict[str, object], tl: Timeline, label: str) -> None:
    onset = _f(data.get("onset_t")) or t
    stop = _f(data.get("stop_t"))
    latency = _f(data.get("latency_s"))
    window = _f(data.get("window_s"))
    after = data.get("after")
    yielded = data.get("yielded") is True
    if after == "backchannel":
        if yielded and stop is not None:
            text = f"false yield +{_s(latency)}"
            tl.marks.append(Mark(stop, MarkKind.FALSE_YIELD, text, False, label))
            tl.intervals.append(Interval("false-yield", onset, stop, f"{label}"))
        return
    if yielded and stop is not None:
        tl.marks.append(Mark(stop, MarkKind.STOP, f"stop +{_s(latency)}", False, label))
        tl.intervals.append(Interval("yield", onset, stop, label))
    elif not yielded:
        over = _f(data.get("talk_over_s")) or window or 0.0
        end = onset + over
        tl.marks.append(Mark(end, MarkKind.TALKED_ON, "talked on", False, label))
        tl.intervals.append(Interval("talk-over", onset, end, label))


def call_timeline(trial: Trial, sound: Iterable[tuple[float, float]] = ()) -> Timeline:
    """The call as lanes, marks and intervals (``sound``: the agent's sound, from its
    recording)."""
    tl = Timeline()
    for turn in trial.turns:
        if turn.speaker == "agent":
            tl.spans.extend(_agent_spans(turn))
            cut = _f(turn.cut_t)
            if turn.interrupted and cut is not None:
                word = f" after word {turn.cut_word}" if turn.cut_word is not None else ""
                tl.marks.append(Mark(cut, MarkKind.CUT, "cut", True, f"▌cut at {cut:.2f} s{word}"))
        else:
            start, end = _f(turn.start), _f(turn.end)
            if start is not None and end is not None and end > start:
                text = turn.rendered or turn.text
                tl.spans.append(LaneSpan("caller", start, end, "speech", text, turn.number))
        for e in turn.events:
            _event_marks(turn, e, tl)
    for item in trial.meta.get("no_responses") or []:
        if not isinstance(item, dict):
            continue
        t, end = _f(item.get("t")), _f(item.get("caller_end_t"))
        if t is None:
            continue
        waited = _f(item.get("waited_s"))
        tl.marks.append(
            Mark(t, MarkKind.NO_RESPONSE, "no response", False, f"no response ({_s(waited)})")
        )
        if end is not None and end < t:
            tl.intervals.append(Interval("no-response", end, t, f"no response for {_s(waited)}"))
    at = 0.0
    for start, end in floor_spans(trial):
        if start - at > LONG_GAP_S:
            tl.intervals.append(Interval("dead-air", at, start, f"dead air {start - at:.1f} s"))
        at = max(at, end)
    length = _f(trial.duration)
    if length is not None and length - at > LONG_GAP_S:  # silence to the call's end
        tl.intervals.append(Interval("dead-air", at, length, f"dead air {length - at:.1f} s"))
    tl.intervals.extend(Interval("agent-sound", a, b, "agent sound") for a, b in sound)
    tl.spans.sort(key=lambda s: (s.start, s.lane))
    tl.marks.sort(key=lambda m: m.t)
    ends = [s.end for s in tl.spans] + [i.end for i in tl.intervals] + [m.t for m in tl.marks]
    duration = _f(trial.duration) or 0.0
    tl.end_t = round(max([duration, *ends]), 4)
    return tl


# ---- SVG -----------------------------------------------------------------------------


def _color(shape: Shape) -> str:
    if shape.kind == "speech":
        return COLOR["speech-agent" if shape.row == "agent" else "speech-caller"]
    return COLOR.get(shape.kind, "#888")


def _shape_svg(shape: Shape) -> str:
    x = LABEL_W + shape.x
    y, h = ROW_Y[shape.row], ROW_H[shape.row]
    when = f"{shape.t:.2f}–{shape.t_end:.2f} s" if shape.w else f"{shape.t:.2f} s"
    title = _h(_short(f"{when} · {shape.detail or shape.label}"))
    if shape.w:
        if shape.kind == "agent-sound":
            y, h = y + h - 4, 4.0
        elif shape.kind == "overlap":  # the band between the two lanes
            y = ROW_Y["agent"] + ROW_H["agent"]
            h = ROW_Y["caller"] - y
        opacity = ' fill-opacity="0.6"' if shape.kind in ("yield", "talk-over") else ""
        return (
            f'<rect class="{shape.kind}" x="{x:.2f}" y="{y:.0f}" width="{shape.w:.2f}" '
            f'height="{h:.0f}" fill="{_color(shape)}"{opacity} data-t="{shape.t:.3f}" '
            f'data-t-end="{shape.t_end:.3f}"><title>{title}</title></rect>'
        )
    kind = MarkKind(shape.kind)
    color = MARK_COLOR[kind]
    line = ""
    if kind in (MarkKind.CUT, MarkKind.STOP, MarkKind.FALSE_YIELD, MarkKind.TALKED_ON):
        line = (
            f'<line x1="{x:.2f}" x2="{x:.2f}" y1="{ROW_Y["agent"] - 4:.0f}" '
            f'y2="{ROW_Y["caller"] + ROW_H["caller"]:.0f}" stroke="{color}" stroke-width="1.5"/>'
        )
    return (
        f'<g class="mark {kind.value}" data-t="{shape.t:.3f}" data-x="{shape.x:.2f}">{line}'
        f'<text x="{x:.2f}" y="{y + h - 2:.0f}" fill="{color}" text-anchor="middle" '
        f'font-size="13">{GLYPH[kind]}</text><title>{title}</title></g>'
    )


def call_strips(end_t: float) -> list[tuple[float, float]]:
    """One strip a minute; a call shorter than a minute is one strip as long as the
    call (to the next 5 s), so it fills the width."""
    if end_t < STRIP_S:
        return [(0.0, max(5.0, math.ceil(end_t / 5.0 - 1e-9) * 5.0))]
    return strips(end_t, STRIP_S)


def strip_svg(tl: Timeline, t0: float, t1: float) -> str:
    """One strip [t0, t1) as an inline SVG (its times in ``data-t0`` / ``data-t1``; a
    point mark at ``data-x`` is at ``t0 + x / width × (t1 − t0)``)."""
    w = LABEL_W + STRIP_W + 10
    out = [
        f'<svg class="strip" viewBox="0 0 {w:.0f} {SVG_H}" '
        f'role="img" data-t0="{t0:.3f}" data-t1="{t1:.3f}" data-width="{STRIP_W:.0f}" '
        f'data-label-w="{LABEL_W:.0f}" font-family="system-ui,sans-serif" font-size="11">',
        f"<title>{t0:.0f}–{t1:.0f} s</title>",
        f'<rect x="{LABEL_W}" y="{ROW_Y["agent"]}" width="{STRIP_W}" height="{ROW_H["agent"]}" '
        'fill="#f1f3f6"/>',
        f'<rect x="{LABEL_W}" y="{ROW_Y["caller"]}" width="{STRIP_W}" '
        f'height="{ROW_H["caller"]}" fill="#f1f3f6"/>',
    ]
    for row, label in ROW_LABEL.items():
        y = ROW_Y[row] + ROW_H[row] - 3
        out.append(f'<text x="2" y="{y:.0f}" fill="#55606b">{label}</text>')
    for t in ticks(t0, t1, 12):
        x = LABEL_W + x_of(t, t0, t1)
        out.append(
            f'<line x1="{x:.2f}" x2="{x:.2f}" y1="12" y2="{SVG_H - 4}" stroke="#e3e3df"/>'
            f'<text x="{x:.2f}" y="10" fill="#8a939c" text-anchor="middle">{t:g}s</text>'
        )
    out.extend(_shape_svg(s) for s in layout_strip(tl, t0, t1))
    out.append("</svg>")
    return "".join(out)


# ---- the section ----------------------------------------------------------------------


def frame_lag_p99(trial: Trial) -> float | None:
    """The call's p99 frame lag (the log's ``end`` event), when logged."""
    lag = trial.meta.get("frame_lag")
    return _f(lag.get("p99_s")) if isinstance(lag, dict) else None


def lag_warning(trial: Trial) -> str:
    """A visible warning for a lagged call ('' for one that kept up)."""
    p99 = frame_lag_p99(trial)
    if p99 is None or p99 <= LAG_LIMIT_S:
        return ""
    return (
        f'<p class="lag warn">⚠ lagged call: frames were processed {p99 * 1000:.0f} ms late '
        f"(p99; over one {LAG_LIMIT_S * 1000:.0f} ms frame), so its latencies and stop times "
        "may be this machine falling behind, not the agent.</p>"
    )


def call_section_html(trial: Trial, budget: AudioBudget) -> list[str]:
    """The timeline (one strip per minute) and the stretches to listen to, as HTML."""
    has_time = any(_f(t.start) is not None for t in trial.turns)
    if not has_time:
        return []
    notes: list[str] = []
    sound: list[tuple[float, float]] = []
    wav = recording_of(trial)
    if wav is not None:
        try:
            sound = agent_sound(wav)
        except ValueError as exc:
            notes.append(f"the recording {wav.name}: {exc}")
    tl = call_timeline(trial, sound)
    lagged = ' <span class="warn">⚠ lagged call (see above)</span>' if lag_warning(trial) else ""
    out = [f'<section class="tl"><h3>Timeline{lagged}</h3>', LEGEND]
    out.extend(strip_svg(tl, t0, t1) for t0, t1 in call_strips(tl.end_t))
    found, note = clips(trial, budget)
    if note:
        notes.append(note)
    if found:
        out.append('<h3>Listen</h3><ol class="listen">')
        for c in found:
            s = c.stretch
            head = f"turn {s.turn} · {s.start:.2f}–{s.end:.2f} s · {_h(_short(s.what))}"
            if c.uri is None:
                out.append(f'<li>{head} <span class="muted">({_h(c.note)})</span></li>')
            else:
                out.append(
                    f'<li>{head}<audio controls preload="none" data-start="{s.start:.3f}" '
                    f'data-end="{s.end:.3f}" src="{c.uri}"></audio></li>'
                )
        out.append("</ol>")
        if any(c.uri is None for c in found):
            out.append(
                f'<p class="meta">The page embeds at most {budget.cap // (1024 * 1024)} MB '
                "of audio; play the other stretches from the call's recording "
                "(<code>cutin replay</code>).</p>"
            )
    out.extend(f'<p class="meta">{_h(_short(n))}</p>' for n in notes)
    out.append("</section>")
    return [p for p in out if p]


__all__ = [
    "TIMELINE_CSS",
    "AudioBudget",
    "call_section_html",
    "call_timeline",
    "frame_lag_p99",
    "lag_warning",
    "strip_svg",
]
