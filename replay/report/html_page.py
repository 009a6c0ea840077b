"""The report as one self-contained HTML page (inline CSS, no external resources; a
batch's page has a few lines of inline script that sort its tables, and reads the same
without it), in the words of :mod:`.wording`; text from files escaped. The batch's
summary, plots and trial table are :mod:`.batch_page`'s."""

from __future__ import annotations

import html
from collections.abc import Sequence

from replay.judges.columns import judge_groups, judge_title
from replay.model import JudgeVerdict, Trial, Turn
from replay.plural import noun, plural
from replay.report.agent_render import call_html
from replay.report.batch_page import CSS as BATCH_CSS
from replay.report.batch_page import SORT_SCRIPT, batch_html
from replay.report.black_box import cut_marks, turn_cut
from replay.report.call_timeline import TIMELINE_CSS, AudioBudget, call_section_html, lag_warning
from replay.report.confidence import marked, unsure_indices
from replay.report.data import build_report
from replay.report.wording import (
    CUT,
    GLYPH,
    by_group,
    counts_text,
    event_line,
    false_yield_marks,
    insertion_tokens,
    metric_rows,
    num,
    outcome,
    placeholder,
    secs,
    speaker_name,
    trial_mark,
    trial_meta_line,
    trial_title,
    visible_events,
)

_SELF_CORRECTION_HTML = (
    '<br><span class="meta">struck through: <span class="ins ins-repair">repair</span> '
    '(said, then corrected) · <span class="ins ins-restart">restart</span> (said again)</span>'
)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:78rem;
padding:0 1rem;color:#1d232a;background:#fbfbfa}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}
th,td{border-bottom:1px solid #e3e3df;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f0f0ec;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.fail{color:#b3261e}.pass{color:#1b7f3b}.warn{color:#9a6700}.error{color:#8e24aa}.info{color:#55606b}
details{border:1px solid #e3e3df;border-radius:6px;margin:.6rem 0;background:#fff}
summary{cursor:pointer;padding:.5rem .8rem;font-weight:600}
details>div{padding:0 .8rem .8rem}
.agent td.who{color:#1a5fb4}.user td.who{color:#6b4fa3}
.cut{color:#b3261e;font-weight:700}.unsure{opacity:.55}.unspoken{opacity:.45;text-decoration:line-through}
.talk-over{color:#9a6700;font-style:italic}.stop{color:#9a6700;font-weight:700}
.ins{border-radius:3px;padding:0 2px}.ins-filler{background:#fde7a9}
.ins-repetition{background:#cde6ff}.ins-pause{background:#e7d9ff}
.ins-repair{background:#f8d0d0;text-decoration:line-through}
.ins-restart{background:#d3f0dc;text-decoration:line-through;font-style:italic}
.ev{color:#55606b;font-size:.9em}.v{font-size:.9em}.meta{color:#55606b}
.muted{color:#8a939c;font-style:italic}
"""


def _h(text: object) -> str:
    return html.escape(str(text), quote=True)


def _html_turn_text(t: Turn) -> str:
    if t.speaker == "user":
        text = _h(t.text)
        if t.rendered is not None and (t.insertions or t.rendered != t.text):
            parts = []
            for tok, kind in insertion_tokens(t.rendered, t.insertions):
                parts.append(
                    f'<span class="ins ins-{_h(kind)}" title="{_h(kind)}">{_h(tok)}</span>'
                    if kind
                    else _h(tok)
                )
            text += f'<br><span class="meta">heard:</span> {" ".join(parts)}'
            if {i.kind for i in t.insertions} & {"repair", "restart"}:
                text += _SELF_CORRECTION_HTML
        return text
    split = turn_cut(t)
    if split is not None:  # a black-box agent: its talk-over, then where it stopped
        said = _h_said(t)
        parts = [
            " ".join(said[: split.cut]),
            f'<span class="cut" title="the tester began at {secs(t.cut_t)} s">{CUT}</span>',
        ]
        if split.stop > split.cut:
            over = " ".join(said[split.cut : split.stop])
            parts.append(f'<span class="talk-over" title="said over the tester">{over}</span>')
        mark = cut_marks(t, split)
        if mark:
            parts.append(f'<span class="stop">{_h(mark)}</span>')
        parts += [" ".join(said[split.stop :]), _html_false_yields(t)]
        return " ".join(p for p in parts if p)
    if t.spoken.strip() or t.unspoken:
        text = " ".join(_h_said(t))
    else:
        text = f'<span class="muted">{_h(placeholder(t))}</span>'
    if t.interrupted:
        text += f' <span class="cut" title="cut at {secs(t.cut_t)} s">{CUT}</span>'
        if t.unspoken:
            text += f' <span class="unspoken" title="never played">{_h(t.unspoken)}</span>'
    marks = _html_false_yields(t)
    return f"{text} {marks}" if marks else text


def _h_said(t: Turn) -> list[str]:
    """The spoken words, escaped; those the ears were unsure of dimmed with their "?"."""
    unsure = unsure_indices(t)
    return [
        f'<span class="unsure" title="heard with {_pct(t.words[i].p)} confidence">'
        f"{_h(marked(w))}</span>"
        if i in unsure
        else _h(w)
        for i, w in enumerate(t.spoken.split())
    ]


def _pct(p: float | None) -> str:
    return "?" if p is None else f"{100 * p:.0f} %"


def _html_false_yields(t: Turn) -> str:
    marks = false_yield_marks(t)
    if not marks:
        return ""
    return f'<span class="cut" title="a backchannel made the agent stop">{marks}</span>'


def _html_verdict(v: JudgeVerdict) -> str:
    glyph = GLYPH.get(v.label, v.label)
    return (
        f'<div class="v {_h(v.label)}" title="{_h(v.rationale)}">{_h(glyph)} <b>{_h(v.judge)}</b> '
        f'{_h(v.name)}: <span class="meta">{_h(v.rationale)}</span></div>'
    )


def render_html(trials: Sequence[Trial], warnings: Sequence[str] = ()) -> str:
    """The report as one self-contained HTML page."""
    report = build_report(trials, warnings)
    s = report["summary"]
    out = [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>cutin report · {plural(s['trials'], 'trial')}</title>",
        f"<style>{_CSS}{TIMELINE_CSS}{BATCH_CSS}</style></head><body>",
        "<h1>cutin report</h1>",
        f"<p><b>{s['trials']}</b> {noun(s['trials'], 'trial')} · "
        f'<b class="fail">{s["failed"]}</b> failed · '
        f'<b class="pass">{s["passed"]}</b> passed'
        + (f' · <b class="info">{s["not_judged"]}</b> not judged' if s["not_judged"] else "")
        + "</p>",
    ]
    metrics = report["tau_voice_metrics"]
    if metrics:
        n = metrics["counts"]["n_simulations"]
        out.append(f"<h2>τ-Voice interaction metrics ({plural(n, 'tick trial')})</h2>")
        out.append("<table><tr><th>metric</th><th>value</th></tr>")
        for label, value, field in metric_rows(metrics):  # the field name is the tooltip
            out.append(
                f'<tr><td title="{_h(field)}">{_h(label)}</td><td class="num">{_h(value)}</td></tr>'
            )
        out.append(
            '</table><p class="meta">Events: '
            + _h(", ".join(f"{k} {v}" for k, v in metrics["counts"].items()))
            + "</p>"
        )
    # The batch: its summary, plots and trials by scenario and dials (issue 30).
    out.extend(batch_html(trials, _outcome_cells))
    audio = AudioBudget()  # one audio cap for the whole page
    for i, t in enumerate(trials):
        cls = outcome(t)
        opened = " open" if t.failed or len(trials) == 1 else ""
        title = _h(trial_title(t))
        out.append(f'<details id="t{i}"{opened}><summary class="{cls}">{title}</summary><div>')
        out.append(f'<p class="meta">{_h(" · ".join(trial_meta_line(t)))}</p>')
        out.append(lag_warning(t))  # issue 30: beside the call's timings
        out.extend(call_html(t, _h))
        out.extend(call_section_html(t, audio))  # the timeline and its audio (issue 30)
        out.extend(_html_verdict(v) for v in t.current_verdicts() if v.scope == "call")
        out.extend(f'<div class="warn">warning: {_h(w)}</div>' for w in t.warnings)
        groups = judge_groups([t])
        out.append(
            "<table><tr><th>#</th><th>time</th><th>speaker</th><th>text</th><th>events</th>"
            + "".join(f"<th>{_h(judge_title(g))}</th>" for g in groups)
            + "</tr>"
        )
        by_turn = t.verdicts_by_turn()
        for turn in t.turns:
            events = "<br>".join(_h(event_line(e)) for e in visible_events(turn))
            who = speaker_name(turn)
            cells = by_group(by_turn.get(turn.index, []), groups)
            verdicts = "".join(
                "<td>" + "".join(_html_verdict(v) for v in c) + "</td>" for c in cells
            )
            out.append(
                f'<tr class="{turn.speaker}"><td class="num">{turn.index}</td>'
                f'<td class="num">{secs(turn.start)}</td><td class="who">{who}</td>'
                f'<td>{_html_turn_text(turn)}</td><td class="ev">{events}</td>'
                f"{verdicts}</tr>"
            )
        out.append("</table></div></details>")
    if report["warnings"]:
        out.append(
            "<h2>Warnings</h2><ul>"
            + "".join(f"<li>{_h(w)}</li>" for w in report["warnings"])
            + "</ul>"
        )
    if len(trials) > 1:
        out.append(SORT_SCRIPT)  # sortable trial columns; the page reads the same without
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _outcome_cells(t: Trial) -> tuple[str, str, str]:
    """A trial's mark, reward and verdicts cells in the batch's trial table."""
    cls = outcome(t)
    order = {"fail": 0, "pass": 2}.get(cls, 1)
    return (
        f'<td class="{cls}" data-v="{order}">{trial_mark(t)}</td>',
        f'<td class="num" data-v="{_h("" if t.reward is None else t.reward)}">'
        f"{_h(num(t.reward))}</td>",
        f'<td data-v="{_h(counts_text(t))}">{_h(counts_text(t))}</td>',
    )
