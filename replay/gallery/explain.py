"""Plain-language wording for what happened in a gallery run and why the rule acted."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from replay.gallery.model import GalleryEntry
from replay.gallery.runner import GalleryRun, ScheduledAction
from replay.gallery.timeline import focus_window
from sessions.log.models import AgentTurnEnd, Backchannel, Interruption, Opportunity, UserTurn

CHECK_TEXT: dict[tuple[str, str], str] = {
    ("interrupt", "enabled"): "interruption tendency β",
    ("interrupt", "first_in_turn"): "caller already cut in this agent turn?",
    ("interrupt", "speaking_s"): "seconds the agent has been speaking",
    ("interrupt", "words"): "words the agent has said this turn",
    ("interrupt", "not_question"): "agent asking a question or making a request?",
    ("backchannel", "enabled"): "backchannel tendency γ",
    ("backchannel", "not_first_turn"): "agent turn number",
    ("backchannel", "not_question"): "agent asking a question or making a request?",
    ("backchannel", "words"): "words the agent has said this turn",
}
NEEDED_TEXT: dict[tuple[str, str], str] = {
    ("interrupt", "first_in_turn"): "no",
    ("interrupt", "not_question"): "no",
    ("backchannel", "not_question"): "no",
    ("backchannel", "not_first_turn"): "2 or more",
}
"""Plain wording of a check's requirement where the logged one is code-like."""
RULE_TEXT = {"interrupt": "interrupt rule", "backchannel": "backchannel rule"}


@dataclass(frozen=True, slots=True)
class CheckLine:
    rule: str
    passed: bool
    text: str
    value: str
    needed: str

    def plain(self) -> str:
        mark = "✓" if self.passed else "✗"
        sep = " " if self.text.endswith("?") else ": "
        return f"{mark} {self.text}{sep}{self.value} (needs {self.needed})"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def check_lines(checks: Iterable[dict[str, Any]]) -> list[CheckLine]:
    """Each logged check as a plain sentence part, in the rule's order."""
    out = []
    for c in checks:
        rule, name = str(c.get("rule", "")), str(c.get("name", ""))
        value = c.get("value")
        if (rule, name) == ("backchannel", "not_first_turn") and isinstance(value, int):
            value += 1  # logged 0-based; people count turns from 1
        needed = NEEDED_TEXT.get((rule, name), str(c.get("needed", "")))
        needed = needed.replace("β > 0", "above 0").replace("γ > 0", "above 0")
        out.append(
            CheckLine(
                rule=rule,
                passed=bool(c.get("passed")),
                text=CHECK_TEXT.get((rule, name), name),
                value=_value(value),
                needed=needed,
            )
        )
    return out


def decision_headline(op: Opportunity) -> str:
    """'5.15 s · short pause #2 → INTERRUPT (carried out)'."""
    done = " (carried out)" if op.executed else ""
    pause = f" · short pause #{op.pause_index + 1}" if op.pause_index is not None else ""
    return f"{op.t:.2f} s{pause} → {op.decision}{done}"


def decision_lines(op: Opportunity) -> list[CheckLine]:
    """The checks that explain the decision: the winning rule's, or every failing one."""
    lines = check_lines(op.checks)
    if op.decision == "INTERRUPT":
        return [c for c in lines if c.rule == "interrupt"]
    if op.decision == "BACKCHANNEL":
        return [c for c in lines if c.rule == "backchannel"]
    return [c for c in lines if not c.passed]


def deciding_opportunity(run: GalleryRun) -> Opportunity | None:
    """The first opportunity at which the rule acted (None if it never did)."""
    for ev in run.events:
        if isinstance(ev, Opportunity) and ev.executed and ev.decision != "NOTHING":
            return ev
    return None


def describe_action(action: ScheduledAction) -> str:
    """'6.30 s · scripted: the caller says “Yes, that's me.” — <note>'."""
    spec = action.spec
    what = (
        f"the caller says “{spec.text}”"
        if spec.do == "interrupt"
        else f"the caller makes a sound: {spec.token or 'mm-hmm'}"
    )
    note = f" — {spec.note}" if spec.note else ""
    return f"{action.t:.2f} s · scripted: {what}{note}"


def what_happened(entry: GalleryEntry, run: GalleryRun) -> list[str]:
    """A few plain sentences on what the example did, in time order."""
    out: list[str] = []
    ends = {e.turn: e for e in run.events if isinstance(e, AgentTurnEnd)}
    for ev in run.events:
        if isinstance(ev, Interruption):
            who = "the rule decides the caller cuts in" if ev.trigger == "auto" else "scripted"
            out.append(f"At {ev.t:.1f} s the caller comes in ({who}): {_quote(ev.text)}")
            end = ends.get(ev.turn)
            if end is not None and end.talk_over_s:
                out.append(
                    f"The agent goes on for {end.talk_over_s:.1f} s more, to the end of its turn."
                )
            elif end is not None and end.unspoken:
                out.append(
                    f"The agent stops at once, after {end.cut_word} words; it never says "
                    f"{_quote(_short(end.unspoken))}"
                )
        elif isinstance(ev, Backchannel):
            who = "the rule" if ev.trigger == "auto" else "scripted"
            end = ends.get(ev.turn)
            stops = end is not None and end.interrupted and abs(end.t - ev.t) < 0.05
            after = "the agent stops, taking it for a turn" if stops else "the agent carries on"
            out.append(f"At {ev.t:.1f} s the caller says {ev.token} ({who}); {after}.")
    d = entry.disfluency
    if d is not None:
        said = next(
            (
                u
                for u in run.events
                if isinstance(u, UserTurn) and u.original in (d.original, d.spoken or d.rendered)
            ),
            None,
        )
        if said is not None:
            rendered = said.rendered if entry.made_by == "injection" else d.rendered
            out.append(f"The caller means: {_quote(d.original)}")
            out.append(f"The transcript shows: {_quote(rendered)}")
    return out


def _quote(text: str) -> str:
    """“text”, with a full stop after it unless the text ends a sentence itself."""
    text = text.strip()
    return f"“{text}”" + ("" if text[-1:] in ".?!…—" else ".")


def _short(text: str, words: int = 10) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def disfluency_pair(entry: GalleryEntry, run: GalleryRun) -> tuple[str, str] | None:
    """(original, rendered) for a disfluency entry: rendered as the transcript writes it."""
    d = entry.disfluency
    if d is None:
        return None
    if entry.made_by == "written":
        return d.original, d.rendered
    for ev in run.events:
        if isinstance(ev, UserTurn) and ev.original == d.original:
            return d.original, ev.rendered
    return d.original, d.original


def marked_tokens(entry: GalleryEntry, run: GalleryRun) -> list[tuple[str, str | None]]:
    """The rendered line as tokens, each with the kind of disfluency it is (or None).

    Injection: the logged insertion list says exactly which tokens were added.
    Written: the tokens that differ from ``original`` are marked "written".
    """
    d = entry.disfluency
    if d is None:
        return []
    if entry.made_by == "injection":
        for ev in run.events:
            if isinstance(ev, UserTurn) and ev.original == d.original:
                kinds = {ins.index + k: ins.kind for k, ins in enumerate(ev.insertions)}
                return [(tok, kinds.get(i)) for i, tok in enumerate(ev.rendered.split())]
        return [(tok, None) for tok in d.original.split()]
    ours, theirs = d.original.split(), d.rendered.split()
    out: list[tuple[str, str | None]] = []
    matcher = difflib.SequenceMatcher(a=ours, b=theirs, autojunk=False)
    for tag, _a0, _a1, b0, b1 in matcher.get_opcodes():
        kind = None if tag == "equal" else "written"
        out.extend((tok, kind) for tok in theirs[b0:b1])
    return out


def window_for(entry: GalleryEntry, run: GalleryRun) -> tuple[float, float]:
    """The stretch of the call a drawing of this entry should show."""
    tl = run.timeline
    if entry.kind == "disfluency" and entry.disfluency is not None:
        d = entry.disfluency
        for ev in run.events:
            if isinstance(ev, UserTurn) and ev.original in (d.original, d.spoken or d.rendered):
                end = ev.end_t if ev.end_t is not None else ev.t
                return focus_window(tl, around=(ev.t, end))
    return focus_window(tl)
