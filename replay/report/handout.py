"""The gallery as a printable handout: one self-contained HTML page.

Every type gets its explanation, how it is written, a two-lane timeline of its
example drawn as inline SVG (from the same geometry as the terminal drawing), the
example's transcript and, where cutin's rule acted, the checks behind it. No
scripts, fonts or images are fetched: the file opens and prints anywhere.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from replay.gallery.explain import (
    deciding_opportunity,
    decision_headline,
    decision_lines,
    describe_action,
    marked_tokens,
    what_happened,
    window_for,
)
from replay.gallery.model import GalleryEntry
from replay.gallery.runner import GalleryRun
from replay.timeline.lanes import LaneSpan, MarkKind, Timeline, ticks

SVG_W = 760
LABEL_W = 64
LANE_H = 24
AGENT_Y = 14
CALLER_Y = 52
MARK_Y = 88
AXIS_Y = 100
SVG_H = 122
CHAR_PX = 6.1
"""Approximate width of one character of 11 px sans-serif text."""

COLORS = {
    "agent": "#3b6fb6",
    "caller": "#2f8f57",
    "overlap": "#d9822b",
    "backchannel": "#8a55b8",
    "cut": "#c0392b",
    "pause": "#9aa0a6",
}

CSS = """
:root { --ink: #1f2328; --muted: #5f6670; --rule: #d7dbe0; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: var(--ink); margin: 0 auto; max-width: 860px; padding: 28px 32px 48px; }
h1 { font-size: 28px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 8px; padding-bottom: 4px;
     border-bottom: 2px solid var(--ink); }
h3 { font-size: 18px; margin: 0; }
p { margin: 6px 0; }
.lead { font-size: 16px; color: var(--ink); }
.muted, .aka { color: var(--muted); }
.aka { margin: 0 0 6px; font-style: italic; }
nav ol { columns: 2; margin: 6px 0; padding-left: 20px; }
.entry { border: 1px solid var(--rule); border-radius: 8px; padding: 16px 18px; margin: 16px 0;
         break-inside: avoid; page-break-inside: avoid; }
.badge { display: inline-block; font-size: 12px; padding: 1px 8px; border-radius: 10px;
         border: 1px solid var(--rule); color: var(--muted); margin: 2px 4px 6px 0; }
.badge.stutter { border-color: #a15c00; color: #a15c00; font-weight: 600; }
.badge.warn { border-color: #c0392b; color: #c0392b; font-weight: 600; }
figure { margin: 10px 0 4px; }
figcaption { font-size: 13px; color: var(--muted); }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial,
           sans-serif; }
dl { margin: 8px 0; } dt { font-weight: 600; } dd { margin: 0 0 6px 0; }
table.transcript { border-collapse: collapse; width: 100%; font-size: 14px; margin: 6px 0; }
table.transcript td { border-top: 1px solid var(--rule); padding: 3px 6px; vertical-align: top; }
table.transcript td.t { width: 56px; color: var(--muted); text-align: right; white-space: nowrap; }
table.transcript td.who { width: 56px; font-weight: 600; }
.unspoken { color: #8b949e; text-decoration: line-through; }
.note { color: var(--muted); font-size: 13px; }
.line { font-size: 16px; }
.ins { border-radius: 3px; padding: 0 2px; font-weight: 600; }
.ins.filler { background: #fde2b8; } .ins.repetition { background: #d5e8fb; }
.ins.pause { background: #e4e4e4; } .ins.written { background: #f6d3ec; }
.ins.repair { background: #f8d0d0; text-decoration: line-through; }
.ins.restart { background: #d3f0dc; text-decoration: line-through; font-style: italic; }
ul.checks { margin: 4px 0; padding-left: 18px; font-size: 14px; }
.legend span { margin-right: 14px; white-space: nowrap; font-size: 13px; }
.swatch { display: inline-block; width: 22px; height: 10px; border-radius: 2px; margin-right: 4px;
          vertical-align: middle; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print {
  @page { margin: 14mm; }
  body { max-width: none; padding: 0; font-size: 11pt; }
  nav { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  .entry { border-color: #bbb; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _x(t: float, t0: float, t1: float) -> float:
    span = t1 - t0 if t1 > t0 else 1.0
    return round(LABEL_W + (t - t0) / span * (SVG_W - LABEL_W - 8), 1)


def _fit(text: str, width_px: float) -> str:
    room = int((width_px - 6) / CHAR_PX)
    if room < 3:
        return ""
    return text if len(text) <= room else text[: max(1, room - 1)].rstrip() + "…"


def _span_rect(span: LaneSpan, y: int, t0: float, t1: float) -> str:
    a, b = max(span.start, t0), min(span.end, t1)
    if b <= a:
        return ""
    x0, x1 = _x(a, t0, t1), _x(b, t0, t1)
    w = max(1.5, x1 - x0)
    color = COLORS["backchannel"] if span.kind == "backchannel" else COLORS[span.lane]
    label = _fit(span.text, w)
    parts = [
        f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="{LANE_H}" rx="3" fill="{color}">'
        f"<title>{_esc(span.text)}</title></rect>"
    ]
    if label:
        parts.append(
            f'<text x="{x0 + 4:.1f}" y="{y + 16}" font-size="11" fill="#fff">{_esc(label)}</text>'
        )
    return "".join(parts)


def timeline_svg(tl: Timeline, t0: float, t1: float, *, title: str = "") -> str:
    """Two lanes (agent, caller) over [t0, t1]: speech, overlaps, backchannels, cuts."""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SVG_W} {SVG_H}" '
        f'width="100%" role="img" aria-label="{_esc(title or "timeline")}">',
        f"<title>{_esc(title or 'timeline')}</title>",
        f'<rect x="0" y="0" width="{SVG_W}" height="{SVG_H}" fill="#fff"/>',
    ]
    for name, y in (("Agent", AGENT_Y), ("Caller", CALLER_Y)):
        out.append(
            f'<text x="4" y="{y + 16}" font-size="12" font-weight="600" '
            f'fill="#1f2328">{name}</text>'
            f'<line x1="{LABEL_W}" y1="{y + LANE_H / 2}" x2="{SVG_W - 8}" y2="{y + LANE_H / 2}" '
            'stroke="#e3e6ea" stroke-width="1"/>'
        )
    for span in tl.spans:
        out.append(_span_rect(span, AGENT_Y if span.lane == "agent" else CALLER_Y, t0, t1))
    for lo, hi in tl.overlaps():
        a, b = max(lo, t0), min(hi, t1)
        if b <= a:
            continue
        x0, w = _x(a, t0, t1), max(2.0, _x(b, t0, t1) - _x(a, t0, t1))
        out.append(
            f'<rect x="{x0}" y="{AGENT_Y - 4}" width="{w:.1f}" '
            f'height="{CALLER_Y + LANE_H - AGENT_Y + 8}" '
            f'fill="{COLORS["overlap"]}" fill-opacity="0.28" stroke="{COLORS["overlap"]}" '
            'stroke-width="1.5"><title>both talking at once</title></rect>'
        )
    for mark in tl.marks:
        if not t0 <= mark.t <= t1:
            continue
        x = _x(mark.t, t0, t1)
        out.append(_mark_svg(mark.kind, x, mark.label, mark.by_rule))
    for t in ticks(t0, t1, 10):
        x = _x(t, t0, t1)
        out.append(
            f'<line x1="{x}" y1="{AXIS_Y}" x2="{x}" y2="{AXIS_Y + 4}" stroke="#5f6670"/>'
            f'<text x="{x}" y="{AXIS_Y + 16}" font-size="10" fill="#5f6670" '
            f'text-anchor="middle">{t:g} s</text>'
        )
    out.append(
        f'<line x1="{LABEL_W}" y1="{AXIS_Y}" x2="{SVG_W - 8}" y2="{AXIS_Y}" stroke="#5f6670"/>'
    )
    out.append("</svg>")
    return "".join(out)


def _mark_svg(kind: MarkKind, x: float, label: str, by_rule: bool) -> str:
    who = " (rule)" if by_rule else ""
    if kind is MarkKind.CUT:
        return (
            f'<line x1="{x}" y1="{AGENT_Y - 6}" x2="{x}" y2="{AGENT_Y + LANE_H + 4}" '
            f'stroke="{COLORS["cut"]}" stroke-width="2.5"/>'
            f'<text x="{x + 4}" y="{AGENT_Y - 1}" font-size="10" fill="{COLORS["cut"]}">'
            "agent stops</text>"
        )
    if kind is MarkKind.INTERRUPTION:
        return (
            f'<path d="M{x - 5},{MARK_Y + 6} L{x + 5},{MARK_Y + 6} L{x},{MARK_Y - 3} Z" '
            f'fill="{COLORS["cut"]}"><title>caller comes in{who}: {_esc(label)}</title></path>'
        )
    if kind is MarkKind.BACKCHANNEL:
        return (
            f'<path d="M{x},{MARK_Y - 4} L{x + 5},{MARK_Y + 1} L{x},{MARK_Y + 6} '
            f'L{x - 5},{MARK_Y + 1} Z" fill="{COLORS["backchannel"]}">'
            f"<title>backchannel{who}: {_esc(label)}</title></path>"
        )
    return (
        f'<circle cx="{x}" cy="{MARK_Y + 1}" r="2" fill="{COLORS["pause"]}">'
        "<title>short pause: the rule was asked and did nothing</title></circle>"
    )


def legend_html() -> str:
    items = [
        (COLORS["agent"], "agent speaking"),
        (COLORS["caller"], "caller speaking"),
        (COLORS["backchannel"], "caller's short sound (mm-hmm, cough)"),
        (COLORS["overlap"], "both at once (overlap)"),
        (COLORS["cut"], "▲ caller comes in · | agent stops"),
        (COLORS["pause"], "· a short pause where the rule did nothing"),
    ]
    spans = "".join(
        f'<span><i class="swatch" style="background:{c}"></i>{_esc(t)}</span>' for c, t in items
    )
    return f'<p class="legend">{spans}</p>'


def _transcript(tl: Timeline) -> str:
    rows = []
    for line in tl.lines:
        who = "Agent" if line.speaker == "agent" else "Caller"
        text = _esc(line.text)
        if line.unspoken:
            text += f' <span class="unspoken">{_esc(line.unspoken)}</span>'
        if line.note:
            text += f' <span class="note">— {_esc(line.note)}</span>'
        rows.append(
            f'<tr><td class="t">{line.t:.1f} s</td><td class="who">{who}</td><td>{text}</td></tr>'
        )
    return '<table class="transcript">' + "".join(rows) + "</table>"


def _disfluency_html(entry: GalleryEntry, run: GalleryRun) -> str:
    d = entry.disfluency
    if d is None:
        return ""
    tokens = []
    for tok, kind in marked_tokens(entry, run):
        if kind is None:
            tokens.append(_esc(tok))
        else:
            tokens.append(f'<span class="ins {kind}" title="{kind}">{_esc(tok)}</span>')
    return (
        "<dl>"
        f'<dt>Meant</dt><dd class="line">“{_esc(d.original)}”</dd>'
        f'<dt>As written in the transcript</dt><dd class="line">“{" ".join(tokens)}”</dd>'
        "</dl>"
    )


def _why_html(run: GalleryRun) -> str:
    op = deciding_opportunity(run)
    parts = []
    if op is not None:
        checks = "".join(
            f"<li>{_esc(c.rule)} rule: {_esc(c.plain())}</li>" for c in decision_lines(op)
        )
        parts.append(
            f"<p><strong>Why cutin's rule acted</strong> — {_esc(decision_headline(op))}</p>"
            f'<ul class="checks">{checks}</ul>'
        )
    if run.actions:
        items = "".join(f"<li>{_esc(describe_action(a))}</li>" for a in run.actions)
        parts.append(f'<p><strong>Scripted</strong></p><ul class="checks">{items}</ul>')
    return "".join(parts)


def entry_html(run: GalleryRun, failures: Sequence[str] = ()) -> str:
    """One type: badges, explanation, timeline, how it is written, transcript, why."""
    entry = run.entry
    tl = run.timeline
    t0, t1 = window_for(entry, run)
    badges = [f'<span class="badge">{_esc(entry.made_by_text)}</span>']
    if entry.stuttering_like:
        badges.insert(0, '<span class="badge stutter">stuttering-like, not typical</span>')
    if failures:
        badges.append(
            '<span class="badge warn">this example did not show what it names: '
            + _esc("; ".join(failures))
            + "</span>"
        )
    aka = f'<p class="aka">Also called: {_esc(entry.also_called)}</p>' if entry.also_called else ""
    happened = " ".join(what_happened(entry, run))
    shown = f"Showing {t0:.1f}–{t1:.1f} s of a {tl.end_t:.1f} s example call."
    return (
        f'<article class="entry" id="{_esc(entry.id)}">'
        f"<h3>{_esc(entry.title)}</h3>{aka}{''.join(badges)}"
        f"<p>{_esc(entry.explanation)}</p>"
        f"{_disfluency_html(entry, run)}"
        f"<figure>{timeline_svg(tl, t0, t1, title=entry.title + ' — timeline')}"
        f"<figcaption>{_esc(happened)} {_esc(shown)}</figcaption></figure>"
        f"<dl><dt>How it is written</dt><dd>{_esc(entry.how_written)}</dd></dl>"
        f"{_transcript(tl)}{_why_html(run)}"
        "</article>"
    )


INTRO = (
    "When people talk, they do not simply take turns one after the other: listeners say "
    "“mm-hmm”, start a little before the speaker has finished, help with a word, laugh "
    "along, or cut in. Speech also has hesitations — “um”, repeated words, pauses — "
    "and some people stutter. This handout shows each of these types with a short phone "
    "call between a clinic's automated assistant (the agent) and a caller."
)
HOW_MADE = (
    "The examples were played by cutin, a tool for testing voice agents, which can act as "
    "the caller: it interrupts, says “mm-hmm” and adds disfluencies by fixed, documented "
    "rules. Each example says whether cutin's rule produced it or whether the caller's "
    "action was scripted for the demonstration. Speech is timed at an ordinary speaking "
    "rate (165 words a minute); the drawing shows when each side is heard."
)

GROUPS = (
    (
        "overlap",
        "Overlaps: when two people talk at once",
        "Most overlaps are not interruptions: continuers, terminal overlaps, help with a "
        "word and choral talk are cooperative. Interruptions and talk-over are a contest "
        "for the floor; a false interruption is a mistake.",
    ),
    (
        "typical",
        "Disfluencies: typical hesitations",
        "Everyone's speech has these. They are shown as the caller's line before and after.",
    ),
    (
        "stuttering",
        "Stuttering-like disfluencies",
        "These are characteristic of stuttering, not of typical speech. They are written "
        "examples: cutin's disfluency injection never produces them.",
    ),
)


def render_handout(
    runs: Sequence[GalleryRun],
    *,
    failures: dict[str, list[str]] | None = None,
    version: str = "",
) -> str:
    """The complete HTML page (a string; the caller writes it)."""
    failures = failures or {}
    toc = "".join(f'<li><a href="#{_esc(r.entry.id)}">{_esc(r.entry.title)}</a></li>' for r in runs)
    sections = []
    for key, heading, blurb in GROUPS:
        mine = [r for r in runs if r.entry.group == key]
        if not mine:
            continue
        body = "".join(entry_html(r, failures.get(r.entry.id, ())) for r in mine)
        sections.append(
            f'<section><h2>{_esc(heading)}</h2><p class="muted">{_esc(blurb)}</p>{body}</section>'
        )
    made = f"Made with cutin {version}." if version else "Made with cutin."
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Overlap and disfluency types — a handout</title>"
        f"<style>{CSS}</style></head><body>"
        "<header><h1>Overlap and disfluency types</h1>"
        f'<p class="lead">{_esc(INTRO)}</p><p>{_esc(HOW_MADE)}</p>'
        "<p><strong>How to read the timelines.</strong> Time runs left to right, in seconds. "
        "The top lane is the agent, the bottom lane the caller; a coloured bar means that side "
        "is speaking, and an orange band means both are heard at once. Below each drawing is "
        "the same call as text.</p>"
        f"{legend_html()}"
        f"<nav><strong>Contents</strong><ol>{toc}</ol></nav></header>"
        f"{''.join(sections)}"
        f"<footer>{_esc(made)}</footer>"
        "</body></html>\n"
    )
