"""The words a turn and a call are shown with, in reports and in the replay screen.

One place for them, so ``cutin report`` (Markdown, HTML) and the TUI's turn table
(:mod:`cutin_tui.views.turn_layout`) say the same thing: the verdict glyphs, the cut
marker, what stands for a turn without words, which tokens a disfluency inserted,
a call's title and facts, the note under a cut turn, how an inline event reads.
Pure text, no Textual and no markup: each caller escapes or styles the words (the
TUI gives its pieces roles, the reports Markdown or HTML).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.judges.columns import judge_group
from replay.model import (
    ERROR,
    FAIL,
    INFO,
    INTERRUPTIONS,
    PASS,
    WARN,
    CallControl,
    InlineEvent,
    InsertedToken,
    JudgeVerdict,
    ToolCallEvent,
    ToolResultEvent,
    Trial,
    Turn,
)
from replay.plural import plural
from replay.report.black_box import answer_phrase, false_yield_mark, false_yields, line_agent
from replay.tau2.effects import environment_label
from sessions.hostile.safe_files import shown_name
from sessions.log.models import AgentYield, Opportunity, ShortPause, TurnEnd

GLYPH = {PASS: "✓", FAIL: "✗", WARN: "!", INFO: "i", ERROR: "⚠"}
NOT_JUDGED = "·"
"""A call with no reward and no verdict: neither ✓ nor ✗."""
CUT = "▌cut"
"""Where the tester cut the agent off."""
INSERTION_KINDS = ("filler", "repetition", "pause", "repair", "restart")
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
_INLINE_HIDDEN = (ShortPause, TurnEnd)
"""Too many to list in a report row; the replay screen draws them on the timeline."""


def num(value: float | None, digits: int = 2) -> str:
    """A number with at most ``digits`` decimals and no trailing zeros (— for None)."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:.0f}"


def secs(value: float | None) -> str:
    """Seconds with one decimal (— for None)."""
    return "—" if value is None else f"{value:.1f}"


def speaker_name(turn: Turn) -> str:
    return "agent" if turn.speaker == "agent" else "tester"


def placeholder(turn: Turn) -> str:
    """What stands for a turn without a transcript (τ2 tick imports have none)."""
    dur = turn.duration
    return f"(speech, {dur:.1f} s, no words)" if dur else "(no words)"


def insertion_tokens(
    rendered: str, insertions: Sequence[InsertedToken] | Sequence[tuple[int, str]]
) -> list[tuple[str, str | None]]:
    """Rendered tokens, each with the insertion kind that produced it (None: the
    caller's own word). The k-th insertion (in order) sits at rendered position
    index + k (see controls.disfluency)."""
    pairs = [(i.index, i.kind) if isinstance(i, InsertedToken) else i for i in insertions]
    kinds = {index + k: kind for k, (index, kind) in enumerate(pairs)}
    return [(tok, kinds.get(pos)) for pos, tok in enumerate(rendered.split())]


def false_yield_marks(turn: Turn) -> str:
    """``■false-yield+0.31s`` for each time a backchannel made a black-box agent stop."""
    return " ".join(false_yield_mark(latency) for _, latency in false_yields(turn))


def event_line(e: InlineEvent) -> str:
    """An inline event as one line of a report row."""
    label = f" {e.label}" if e.label else ""
    src = e.source
    if isinstance(src, AgentYield):
        return f"{e.t:.1f} s {answer_phrase(e)}"
    if isinstance(src, INTERRUPTIONS):
        lat = e.data.get("yield_latency_s")
        tail = f" (agent stopped after {num(lat)} s)" if lat is not None else ""
        return f"{e.t:.1f} s tester cut in{tail}"
    if isinstance(src, Opportunity):
        done = "" if e.data.get("executed") else f" ({e.data.get('mode', 'shadow')})"
        return f"{e.t:.1f} s opportunity → {e.label}{done}"
    if isinstance(src, ToolCallEvent | ToolResultEvent):
        return f"{e.kind.replace('_', ' ')}:{label}"
    if isinstance(src, CallControl):
        return f"{e.t:.1f} s call:{label}"
    return f"{e.t:.1f} s {e.kind.replace('_', ' ')}{label}"


def visible_events(turn: Turn) -> list[InlineEvent]:
    """The events a report row lists (pauses and turn ends are left to the timeline)."""
    return [e for e in turn.events if not isinstance(e.source, _INLINE_HIDDEN)]


def cut_note(turn: Turn, answer: InlineEvent | None, clock: str) -> str | None:
    """The note under a cut agent turn: when, and what the agent did after (a black-box
    agent's measured ``answer``, else the logged talk-over); ``clock`` is the cut time
    as the caller writes times. None for a turn nobody cut."""
    if not turn.interrupted or turn.cut_t is None:
        return None
    note = f"cut at {clock}"
    if answer is not None and not turn.unspoken:  # a black-box agent, as measured
        return f"{note}: {answer_phrase(answer)}"
    if turn.talk_over_s is not None and turn.talk_over_s >= 0.05:
        return f"{note}, talked over the tester for {turn.talk_over_s:.1f} s"
    return note


# ---- a call's title and facts -------------------------------------------------------


def trial_mark(trial: Trial) -> str:
    """✗ failed, ✓ passed, · nothing judged the call."""
    return "✗" if trial.failed else ("✓" if trial.judged else NOT_JUDGED)


def outcome(trial: Trial) -> str:
    """fail | pass | info (not judged): the tone a call's title is shown in."""
    return "fail" if trial.failed else ("pass" if trial.judged else "info")


def trial_head(trial: Trial) -> list[tuple[str, str]]:
    """A call's title as (words, tone) pieces: mark, id, task, reward, "not judged".
    Tones: the :func:`outcome`, ``title``, ``meta``, and the reward in pass or fail."""
    ok = "pass" if not trial.failed else "fail"
    head = [(trial_mark(trial), outcome(trial)), (trial.id, "title")]
    if trial.task_id is not None:
        head.append((f"· task {trial.task_id}", "meta"))
    if trial.reward is not None:
        head.append((f"· reward {num(trial.reward)}", ok))
    if not trial.judged:
        head.append(("· not judged", "meta"))
    return head


def trial_title(trial: Trial) -> str:
    return " ".join(words for words, _ in trial_head(trial))


def counts_text(trial: Trial) -> str:
    counts = trial.verdict_counts()
    order = [FAIL, WARN, ERROR, PASS, INFO]
    return ", ".join(f"{counts[k]} {k}" for k in order if counts.get(k)) or "—"


def summary_line(s: dict[str, Any]) -> str:
    text = f"{plural(s['trials'], 'trial')} · {s['failed']} failed · {s['passed']} passed"
    return text + (f" · {s['not_judged']} not judged" if s["not_judged"] else "")


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


def trial_meta_line(t: Trial) -> list[str]:
    """The facts under a call's title in a report."""
    meta = [f"source {shown_name(t.source)}", t.mode]  # a file name may hold ESC, CR, LF
    on_line = line_agent(t.header)
    if on_line:
        meta.append(f"agent on a line: {on_line}")
    if t.duration is not None:
        meta.append(f"{t.duration:.1f} s")
    meta.extend(tau2_facts(t))
    if t.meta.get("realized"):  # a cutin log: what the call realized, as the panel counted
        meta.append(str(t.meta["realized"]))
    if t.meta.get("task_purpose"):
        meta.append(str(t.meta["task_purpose"]))
    return meta


def metric_rows(metrics: dict[str, Any]) -> list[tuple[str, str, str]]:
    """τ-Voice metrics as (label, value, field) rows."""
    rows = []
    for field, (code, label) in METRIC_LABELS.items():
        value = metrics.get(field)
        rows.append((f"{code} {label}", "—" if value is None else f"{value:.3f}", field))
    return rows


def by_group(verdicts: Sequence[JudgeVerdict], groups: Sequence[str]) -> list[list[JudgeVerdict]]:
    """Verdicts split into the judge columns ``groups``."""
    return [[v for v in verdicts if judge_group(v.judge) == g] for g in groups]
