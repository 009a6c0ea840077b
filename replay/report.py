"""Headless reports of trials: JSON (documented in docs/report-json.md), Markdown, HTML.

All three show the same turn-by-turn view the replay screen shows: time, speaker,
text with the cut marker and the unheard rest, the disfluency diff of tester turns,
inline events, and every judge's current verdict, one column per judge (rules · LLM ·
τ2 reward · τ2 review, as in replay). The HTML page is one
self-contained file (inline CSS, no scripts, no external resources).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

from replay.agent_measures import measures_of_trial
from replay.agent_render import call_html, call_markdown
from replay.black_box import (
    answer_phrase,
    cut_marks,
    false_yield_mark,
    false_yields,
    line_agent,
    turn_cut,
)
from replay.judge_columns import judge_group, judge_groups, judge_title
from replay.model import ERROR, FAIL, INFO, PASS, WARN, Insertion, Trial, Turn, Verdict
from replay.tau2.control import CALL_EVENTS
from replay.tau2.effects import environment_label
from replay.tau_voice_metrics import metrics_for_timelines
from sessions.safe_files import inert_json, shown_name, terminal_line

REPORT_SCHEMA = "cutin.report/1"
CUT = "▌cut"
GLYPH = {PASS: "✓", FAIL: "✗", WARN: "!", INFO: "i", ERROR: "⚠"}
NOT_JUDGED = "·"
"""A call with no reward and no verdict (the replay's list shows the same)."""
METRIC_LABELS = {
    "response_latency_mean": ("L_R", "response latency, mean (s)"),
    "yield_latency_mean": ("L_Y", "yield latency, mean (s)"),
    "response_rate": ("R_R", "response rate"),
    "yield_rate": ("R_Y", "yield rate"),
    "agent_interruption_rate": ("I_A", "agent interruptions per user turn"),
    "selectivity_backchannel": ("S_BC", "selectivity: backchannels"),
    "selectivity_vocal_tic": ("S_VT", "selectivity: vocal tics"),
    "selectivity_non_directed": ("S_ND", "selectivity: non-directed speech"),
}
_INLINE_HIDDEN = frozenset({"short_pause", "turn_end"})
"""Too many to list in a report row; the replay screen draws them on the timeline."""


# ---------------------------------------------------------------- JSON form
TIME_DIGITS = 6
"""Times in the JSON form are rounded to the microsecond: tick products such as
306 × 0.2 carry float noise no reader wants. Metrics are never rounded."""


def _r(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, TIME_DIGITS)
    if isinstance(value, dict):
        return {k: _r(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_r(v) for v in value]
    return value


def _verdict_json(v: Verdict, trial: Trial) -> dict[str, Any]:
    turn = trial.turns[v.turn] if v.turn is not None and v.turn < len(trial.turns) else None
    return {
        "judge": v.judge,
        "scope": v.scope,
        "turn": v.turn,
        "speaker": turn.speaker if turn is not None else None,
        "name": v.name,
        "label": v.label,
        "score": _r(v.score),
        "rationale": v.rationale,
        "t": _r(v.t),
        "data": _r(v.extra),
    }


def _turn_json(t: Turn) -> dict[str, Any]:
    return {
        "index": t.index,
        "speaker": t.speaker,
        "number": t.number,
        "start": _r(t.start),
        "end": _r(t.end),
        "text": t.text,
        "spoken": t.spoken,
        "unspoken": t.unspoken,
        "interrupted": t.interrupted,
        "cut_t": _r(t.cut_t),
        "cut_word": t.cut_word,
        "talk_over_s": _r(t.talk_over_s),
        "original": t.original,
        "rendered": t.rendered,
        "insertions": [{"index": i.index, "kind": i.kind, "token": i.token} for i in t.insertions],
        "source": t.source,
        "events": [
            {"t": _r(e.t), "kind": e.kind, "label": e.label, "data": _r(e.data)} for e in t.events
        ],
    }


def trial_json(trial: Trial) -> dict[str, Any]:
    """One trial in the report's JSON form."""
    out: dict[str, Any] = {
        "id": trial.id,
        "task_id": trial.task_id,
        "reward": trial.reward,
        "failed": trial.failed,
        "judged": trial.judged,
        "source": trial.source,
        "kind": trial.kind,
        "mode": trial.mode,
        "duration_s": _r(trial.duration),
        "verdict_counts": trial.verdict_counts(),
        "verdicts": [_verdict_json(v, trial) for v in trial.current_verdicts()],
        "turns": [_turn_json(t) for t in trial.turns],
        "warnings": list(trial.warnings),
    }
    if trial.ticks is not None:
        out["tau_voice_metrics"] = metrics_for_timelines([trial.ticks])
    agent = measures_of_trial(trial)
    if agent is not None:  # a call to a black-box agent (twilio, realtime)
        out["agent_under_test"] = agent
    if trial.kind == "tau2":
        out["tau2"] = tau2_json(trial)
    return out


def tau2_json(trial: Trial) -> dict[str, Any]:
    """What the importer learnt about a τ2 file: version, models, environment, and
    the fields it does not know, with their values (so nothing is lost)."""
    return {
        "version": trial.meta.get("tau2_version"),
        "mode": trial.meta.get("tau2_mode", trial.mode),
        "agent_model": trial.meta.get("agent_llm"),
        "user_model": trial.meta.get("user_llm"),
        "speech_environment": trial.meta.get("speech_environment"),
        "effect_events": trial.meta.get("effect_timeline"),
        "unknown_fields": trial.meta.get("tau2_unknown", {}),
        "unknown_record_fields": trial.meta.get("tau2_unknown_wrapper", {}),
    }


def tau2_facts(t: Trial) -> list[str]:
    """Version, models and speech environment of a τ2 trial (nothing for our logs)."""
    facts = []
    version = t.meta.get("tau2_version")
    if isinstance(version, dict) and version.get("label"):
        facts.append(str(version["label"]))
    for side in ("agent", "user"):
        if t.meta.get(f"{side}_llm"):
            facts.append(f"{side} {t.meta[f'{side}_llm']}")
    env = environment_label(t.meta.get("speech_environment"))
    if env:
        facts.append(f"speech environment: {env}")
    return facts


def _trial_meta_line(t: Trial) -> list[str]:
    meta = [f"source {shown_name(t.source)}", t.mode]  # a file name may hold ESC, CR, LF
    on_line = line_agent(t.header)
    if on_line:
        meta.append(f"agent on a line: {on_line}")
    if t.duration is not None:
        meta.append(f"{t.duration:.1f} s")
    meta.extend(tau2_facts(t))
    if t.meta.get("task_purpose"):
        meta.append(str(t.meta["task_purpose"]))
    return meta


def _by_group(verdicts: Sequence[Verdict], groups: Sequence[str]) -> list[list[Verdict]]:
    return [[v for v in verdicts if judge_group(v.judge) == g] for g in groups]


def build_report(trials: Sequence[Trial], warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The whole report as one JSON-ready object."""
    failed = sum(1 for t in trials if t.failed)
    unjudged = sum(1 for t in trials if not t.judged)
    timelines = [t.ticks for t in trials if t.ticks is not None]
    return {
        "schema": REPORT_SCHEMA,
        "summary": {
            "trials": len(trials),
            "failed": failed,
            "passed": len(trials) - failed - unjudged,
            "not_judged": unjudged,  # no reward and no verdict: neither passed nor failed
            "with_reward": sum(1 for t in trials if t.reward is not None),
            "tick_trials": len(timelines),
        },
        "trials": [trial_json(t) for t in trials],
        "tau_voice_metrics": metrics_for_timelines(timelines),
        # Loaders' warnings name files: one line each, no control character.
        "warnings": list(
            dict.fromkeys(
                terminal_line(w) for w in [*warnings, *(w for t in trials for w in t.warnings)]
            )
        ),
    }


def render_json(trials: Sequence[Trial], warnings: Sequence[str] = ()) -> str:
    # inert_json: a file name's DEL or C1 byte is escaped as ensure_ascii would.
    text = json.dumps(build_report(trials, warnings), ensure_ascii=False, indent=2, default=str)
    return inert_json(text) + "\n"


# ---------------------------------------------------------------- shared bits
def _num(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:.0f}"


def _time(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _diff_tokens(rendered: str, insertions: Sequence[Insertion]) -> list[tuple[str, str | None]]:
    """Rendered tokens, each with the insertion kind that produced it (None: original)."""
    # The k-th insertion (in order) sits at rendered position index + k.
    kinds = {ins.index + k: ins.kind for k, ins in enumerate(insertions)}
    return [(tok, kinds.get(pos)) for pos, tok in enumerate(rendered.split())]


def _event_text(e: Any) -> str:
    label = f" {e.label}" if e.label else ""
    if e.kind == "agent_yield":
        return f"{e.t:.1f} s {answer_phrase(e)}"
    if e.kind == "interruption":
        lat = e.data.get("yield_latency_s")
        tail = f" (agent stopped after {_num(lat)} s)" if lat is not None else ""
        return f"{e.t:.1f} s tester cut in{tail}"
    if e.kind == "opportunity":
        done = "" if e.data.get("executed") else f" ({e.data.get('mode', 'shadow')})"
        return f"{e.t:.1f} s opportunity → {e.label}{done}"
    if e.kind in ("tool_call", "tool_result"):
        return f"{e.kind.replace('_', ' ')}:{label}"
    if e.kind in CALL_EVENTS:
        return f"{e.t:.1f} s call:{label}"
    return f"{e.t:.1f} s {e.kind.replace('_', ' ')}{label}"


def _visible_events(turn: Turn) -> list[Any]:
    return [e for e in turn.events if e.kind not in _INLINE_HIDDEN]


def _mark(trial: Trial) -> str:
    """✗ failed, ✓ passed, · nothing judged the call."""
    return "✗" if trial.failed else ("✓" if trial.judged else NOT_JUDGED)


def _outcome_class(trial: Trial) -> str:
    return "fail" if trial.failed else ("pass" if trial.judged else "info")


def _summary_line(s: dict[str, Any]) -> str:
    text = f"{s['trials']} trials · {s['failed']} failed · {s['passed']} passed"
    return text + (f" · {s['not_judged']} not judged" if s["not_judged"] else "")


def _trial_title(trial: Trial) -> str:
    task = f" · task {trial.task_id}" if trial.task_id is not None else ""
    reward = f" · reward {_num(trial.reward)}" if trial.reward is not None else ""
    unjudged = "" if trial.judged else " · not judged"
    return f"{_mark(trial)} {trial.id}{task}{reward}{unjudged}"


def _counts_text(trial: Trial) -> str:
    counts = trial.verdict_counts()
    order = [FAIL, WARN, ERROR, PASS, INFO]
    return ", ".join(f"{counts[k]} {k}" for k in order if counts.get(k)) or "—"


def _metric_rows(metrics: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows = []
    for field, (code, label) in METRIC_LABELS.items():
        value = metrics.get(field)
        rows.append((f"{code} {label}", "—" if value is None else f"{value:.3f}", field))
    return rows


# ---------------------------------------------------------------- Markdown
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _md(text: str) -> str:
    """Text from a file as inert Markdown: no HTML (``<``, ``>`` and ``&`` as entities),
    no emphasis, links, code or table cells of its own; newlines as ``<br>``."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False)).replace("\n", "<br>")


def _placeholder(t: Turn) -> str:
    dur = t.duration
    return f"(speech, {_num(dur)} s, no transcript)" if dur else "(no words)"


# A self-correction's broken-off words were said and then abandoned: struck through, a
# repair (a word replaced) plain, a restart (said again as it was) in italics.
_MD_MARK = {"repair": "~~{}~~", "restart": "_~~{}~~_"}
_SELF_CORRECTION_MD = (
    "<br>(~~struck~~: repair, said then corrected · _~~struck, italic~~_: restart, said again)"
)
_SELF_CORRECTION_HTML = (
    '<br><span class="meta">struck through: <span class="ins ins-repair">repair</span> '
    '(said, then corrected) · <span class="ins ins-restart">restart</span> (said again)</span>'
)


def _md_turn_text(t: Turn) -> str:
    if t.speaker == "user" and t.rendered is not None and t.insertions:
        tokens = _diff_tokens(t.rendered, t.insertions)
        marked = " ".join(
            _MD_MARK.get(kind or "", "**{}**").format(_md(tok)) if kind else _md(tok)
            for tok, kind in tokens
        )
        legend = _SELF_CORRECTION_MD if {k for _, k in tokens} & set(_MD_MARK) else ""
        return f"{_md(t.text)}<br>heard: {marked}{legend}"
    if t.speaker == "user" and t.rendered is not None and t.rendered != t.text:
        return f"{_md(t.text)}<br>heard: {_md(t.rendered)}"
    words = t.spoken if t.speaker == "agent" else t.text
    split = turn_cut(t) if t.speaker == "agent" else None
    if split is not None:  # a black-box agent: its talk-over in italics, then where it stopped
        said = words.split()
        parts = [_md(" ".join(said[: split.cut])), CUT]
        if split.stop > split.cut:
            parts.append(f"*{_md(' '.join(said[split.cut : split.stop]))}*")
        parts += [cut_marks(t, split), _md(" ".join(said[split.stop :])), _false_yield_marks(t)]
        return " ".join(p for p in parts if p)
    text = _md(words) if words.strip() or t.unspoken else f"_{_placeholder(t)}_"
    if t.interrupted:
        text = f"{text} {CUT}".strip()
        if t.unspoken:
            text += f" ~~{_md(t.unspoken)}~~"
    return f"{text} {_false_yield_marks(t)}".rstrip()


def _false_yield_marks(t: Turn) -> str:
    """``■false-yield+0.31s`` for each time a backchannel made a black-box agent stop."""
    return " ".join(false_yield_mark(latency) for _, latency in false_yields(t))


def _md_verdicts(verdicts: Sequence[Verdict]) -> str:
    return "<br>".join(
        f"{_md(GLYPH.get(v.label, v.label))} {_md(v.judge)} {_md(v.name)}: {_md(v.rationale)}"
        for v in verdicts
    )


def render_markdown(trials: Sequence[Trial], warnings: Sequence[str] = ()) -> str:
    """The report as Markdown (GitHub tables)."""
    report = build_report(trials, warnings)
    s = report["summary"]
    lines = [
        "# cutin report",
        "",
        _summary_line(s),
        "",
    ]
    metrics = report["tau_voice_metrics"]
    if metrics:
        n = metrics["counts"]["n_simulations"]
        lines += [
            f"## τ-Voice interaction metrics ({n} tick trials)",
            "",
            "| metric | value |",
            "| --- | --- |",
        ]
        lines += [f"| {label} | {value} |" for label, value, _ in _metric_rows(metrics)]
        counts = ", ".join(f"{k} {v}" for k, v in metrics["counts"].items())
        lines += ["", f"Events: {counts}.", ""]
    lines += [
        "## Trials",
        "",
        "| | trial | task | reward | verdicts | turns |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for t in trials:
        lines.append(
            f"| {_mark(t)} | {_md(t.id)} | {_md(str(t.task_id or '—'))} | "
            f"{_num(t.reward)} | {_counts_text(t)} | {len(t.turns)} |"
        )
    for t in trials:
        lines += ["", f"## {_md(_trial_title(t))}", ""]
        lines += [" · ".join(_md(m) for m in _trial_meta_line(t)), ""]
        lines += call_markdown(t, _md)
        calls = [v for v in t.current_verdicts() if v.scope == "call"]
        for v in calls:
            lines.append(
                f"- {_md(GLYPH.get(v.label, v.label))} **{_md(v.judge)}** {_md(v.name)}: "
                f"{_md(v.rationale)}"
            )
        for w in t.warnings:
            lines.append(f"- warning: {_md(w)}")
        if calls or t.warnings:
            lines.append("")
        groups = judge_groups([t])
        lines += [
            "| # | time | speaker | text | events |"
            + "".join(f" {_md(judge_title(g))} |" for g in groups),
            "| --- | --- | --- | --- | --- |" + " --- |" * len(groups),
        ]
        by_turn = t.verdicts_by_turn()
        for turn in t.turns:
            events = "<br>".join(_md(_event_text(e)) for e in _visible_events(turn))
            who = "agent" if turn.speaker == "agent" else "tester"
            cells = _by_group(by_turn.get(turn.index, []), groups)
            lines.append(
                f"| {turn.index} | {_time(turn.start)} | {who} | {_md_turn_text(turn)} | "
                f"{events} |" + "".join(f" {_md_verdicts(c)} |" for c in cells)
            )
    if report["warnings"]:
        lines += ["", "## Warnings", ""] + [f"- {_md(w)}" for w in report["warnings"]]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- HTML
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
.cut{color:#b3261e;font-weight:700}.unspoken{opacity:.45;text-decoration:line-through}
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
            for tok, kind in _diff_tokens(t.rendered, t.insertions):
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
        said = t.spoken.split()
        parts = [
            _h(" ".join(said[: split.cut])),
            f'<span class="cut" title="the tester began at {_time(t.cut_t)} s">{CUT}</span>',
        ]
        if split.stop > split.cut:
            over = _h(" ".join(said[split.cut : split.stop]))
            parts.append(f'<span class="talk-over" title="said over the tester">{over}</span>')
        mark = cut_marks(t, split)
        if mark:
            parts.append(f'<span class="stop">{_h(mark)}</span>')
        parts += [_h(" ".join(said[split.stop :])), _html_false_yields(t)]
        return " ".join(p for p in parts if p)
    if t.spoken.strip() or t.unspoken:
        text = _h(t.spoken)
    else:
        text = f'<span class="muted">{_h(_placeholder(t))}</span>'
    if t.interrupted:
        text += f' <span class="cut" title="cut at {_time(t.cut_t)} s">{CUT}</span>'
        if t.unspoken:
            text += f' <span class="unspoken" title="never played">{_h(t.unspoken)}</span>'
    marks = _html_false_yields(t)
    return f"{text} {marks}" if marks else text


def _html_false_yields(t: Turn) -> str:
    marks = _false_yield_marks(t)
    if not marks:
        return ""
    return f'<span class="cut" title="a backchannel made the agent stop">{marks}</span>'


def _html_verdict(v: Verdict) -> str:
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
        f"<title>cutin report · {s['trials']} trials</title><style>{_CSS}</style></head><body>",
        "<h1>cutin report</h1>",
        f'<p><b>{s["trials"]}</b> trials · <b class="fail">{s["failed"]}</b> failed · '
        f'<b class="pass">{s["passed"]}</b> passed'
        + (f' · <b class="info">{s["not_judged"]}</b> not judged' if s["not_judged"] else "")
        + "</p>",
    ]
    metrics = report["tau_voice_metrics"]
    if metrics:
        n = metrics["counts"]["n_simulations"]
        out.append(f"<h2>τ-Voice interaction metrics ({n} tick trials)</h2>")
        out.append("<table><tr><th>metric</th><th>value</th><th>field</th></tr>")
        for label, value, field in _metric_rows(metrics):
            out.append(
                f'<tr><td>{_h(label)}</td><td class="num">{_h(value)}</td>'
                f"<td><code>{_h(field)}</code></td></tr>"
            )
        out.append(
            '</table><p class="meta">Events: '
            + _h(", ".join(f"{k} {v}" for k, v in metrics["counts"].items()))
            + "</p>"
        )
    out.append(
        "<h2>Trials</h2><table><tr><th></th><th>trial</th><th>task</th><th>reward</th>"
        "<th>verdicts</th><th>turns</th></tr>"
    )
    for i, t in enumerate(trials):
        cls = _outcome_class(t)
        out.append(
            f'<tr><td class="{cls}">{_mark(t)}</td>'
            f'<td><a href="#t{i}">{_h(t.id)}</a></td><td>{_h(t.task_id or "—")}</td>'
            f'<td class="num">{_h(_num(t.reward))}</td><td>{_h(_counts_text(t))}</td>'
            f'<td class="num">{len(t.turns)}</td></tr>'
        )
    out.append("</table>")
    for i, t in enumerate(trials):
        cls = _outcome_class(t)
        opened = " open" if t.failed else ""
        title = _h(_trial_title(t))
        out.append(f'<details id="t{i}"{opened}><summary class="{cls}">{title}</summary><div>')
        out.append(f'<p class="meta">{_h(" · ".join(_trial_meta_line(t)))}</p>')
        out.extend(call_html(t, _h))
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
            events = "<br>".join(_h(_event_text(e)) for e in _visible_events(turn))
            who = "agent" if turn.speaker == "agent" else "tester"
            cells = _by_group(by_turn.get(turn.index, []), groups)
            verdicts = "".join(
                "<td>" + "".join(_html_verdict(v) for v in c) + "</td>" for c in cells
            )
            out.append(
                f'<tr class="{turn.speaker}"><td class="num">{turn.index}</td>'
                f'<td class="num">{_time(turn.start)}</td><td class="who">{who}</td>'
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
    out.append("</body></html>")
    return "\n".join(out) + "\n"


RENDERERS = {"json": render_json, "md": render_markdown, "html": render_html}


def render(trials: Sequence[Trial], fmt: str, warnings: Sequence[str] = ()) -> str:
    """Render in ``fmt`` (json | md | html)."""
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise ValueError(
            f"unknown report format {fmt!r}; choose one of {', '.join(RENDERERS)}"
        ) from None
    return renderer(trials, warnings)


__all__ = [
    "REPORT_SCHEMA",
    "build_report",
    "render",
    "render_html",
    "render_json",
    "render_markdown",
    "tau2_facts",
    "tau2_json",
    "trial_json",
]
