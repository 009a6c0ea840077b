"""The report as Markdown (GitHub tables): the same turn-by-turn view the replay
screen shows, in the words of :mod:`.wording`; text from files made inert."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from replay.judges.columns import judge_groups, judge_title
from replay.model import JudgeVerdict, Trial, Turn
from replay.plural import plural
from replay.report.agent_render import call_markdown
from replay.report.black_box import cut_marks, turn_cut
from replay.report.confidence import marked_spoken
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
    placeholder,
    secs,
    speaker_name,
    summary_line,
    trial_mark,
    trial_meta_line,
    trial_title,
    visible_events,
)

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _md(text: str) -> str:
    """Text from a file as inert Markdown: no HTML (``<``, ``>`` and ``&`` as entities),
    no emphasis, links, code or table cells of its own; newlines as ``<br>``."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False)).replace("\n", "<br>")


# A self-correction's broken-off words were said and then abandoned: struck through, a
# repair (a word replaced) plain, a restart (said again as it was) in italics.
_MD_MARK = {"repair": "~~{}~~", "restart": "_~~{}~~_"}
_SELF_CORRECTION_MD = (
    "<br>(~~struck~~: repair, said then corrected · _~~struck, italic~~_: restart, said again)"
)


def _md_turn_text(t: Turn) -> str:
    if t.speaker == "user" and t.rendered is not None and t.insertions:
        tokens = insertion_tokens(t.rendered, t.insertions)
        marked = " ".join(
            _MD_MARK.get(kind or "", "**{}**").format(_md(tok)) if kind else _md(tok)
            for tok, kind in tokens
        )
        legend = _SELF_CORRECTION_MD if {k for _, k in tokens} & set(_MD_MARK) else ""
        return f"{_md(t.text)}<br>heard: {marked}{legend}"
    if t.speaker == "user" and t.rendered is not None and t.rendered != t.text:
        return f"{_md(t.text)}<br>heard: {_md(t.rendered)}"
    words = marked_spoken(t) if t.speaker == "agent" else t.text
    split = turn_cut(t) if t.speaker == "agent" else None
    if split is not None:  # a black-box agent: its talk-over in italics, then where it stopped
        said = words.split()
        parts = [_md(" ".join(said[: split.cut])), CUT]
        if split.stop > split.cut:
            parts.append(f"*{_md(' '.join(said[split.cut : split.stop]))}*")
        parts += [cut_marks(t, split), _md(" ".join(said[split.stop :])), false_yield_marks(t)]
        return " ".join(p for p in parts if p)
    text = _md(words) if words.strip() or t.unspoken else f"_{placeholder(t)}_"
    if t.interrupted:
        text = f"{text} {CUT}".strip()
        if t.unspoken:
            text += f" ~~{_md(t.unspoken)}~~"
    return f"{text} {false_yield_marks(t)}".rstrip()


def _md_verdicts(verdicts: Sequence[JudgeVerdict]) -> str:
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
        summary_line(s),
        "",
    ]
    metrics = report["tau_voice_metrics"]
    if metrics:
        n = metrics["counts"]["n_simulations"]
        lines += [
            f"## τ-Voice interaction metrics ({plural(n, 'tick trial')})",
            "",
            "| metric | value |",
            "| --- | --- |",
        ]
        lines += [f"| {label} | {value} |" for label, value, _ in metric_rows(metrics)]
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
            f"| {trial_mark(t)} | {_md(t.id)} | {_md(str(t.task_id or '—'))} | "
            f"{num(t.reward)} | {counts_text(t)} | {len(t.turns)} |"
        )
    for t in trials:
        lines += ["", f"## {_md(trial_title(t))}", ""]
        lines += [" · ".join(_md(m) for m in trial_meta_line(t)), ""]
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
            events = "<br>".join(_md(event_line(e)) for e in visible_events(turn))
            who = speaker_name(turn)
            cells = by_group(by_turn.get(turn.index, []), groups)
            lines.append(
                f"| {turn.index} | {secs(turn.start)} | {who} | {_md_turn_text(turn)} | "
                f"{events} |" + "".join(f" {_md_verdicts(c)} |" for c in cells)
            )
    if report["warnings"]:
        lines += ["", "## Warnings", ""] + [f"- {_md(w)}" for w in report["warnings"]]
    return "\n".join(lines) + "\n"
