"""The replay turn table as wrapped lines of (text, role) pieces, one row at a time.

Pure layout: no Textual, no I/O. The turn view widget asks for one row's cells
only when that row is about to be drawn (or its height is needed), so a two-hour
call costs nothing for the rows nobody looks at. A *role* names a look
("cut", "filler", "fail", ...); the widget maps roles to styles from its .tcss.

Row 0 is the call itself (call-scope verdicts in the judge columns); row ``i`` is
turn ``i - 1``. Columns: time · speaker · text · one column per judge group.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len, chop_cells

from replay.judges.columns import judge_group, judge_groups, judge_title
from replay.model import (
    BACKCHANNELS,
    FAIL,
    INTERRUPTIONS,
    AgentInterruption,
    CallControl,
    EffectEvent,
    InlineEvent,
    JudgeVerdict,
    ToolCallEvent,
    ToolResultEvent,
    Trial,
    Turn,
)
from replay.plural import plural
from replay.report.black_box import (
    answer_is_bad,
    answer_phrase,
    cut_marks,
    false_yield_mark,
    false_yields,
    interruption_answer,
    line_agent,
    turn_cut,
)
from replay.report.confidence import confidence_note, marked, unsure_indices
from replay.report.wording import (
    CUT,
    GLYPH,
    INSERTION_KINDS,
    NOT_JUDGED,
    cut_note,
    insertion_tokens,
    placeholder,
    tau2_facts,
    trial_head,
)
from sessions.log.models import (
    AgentYield,
    ErrorEvent,
    Opportunity,
    ShortPause,
    SpeechStart,
    TurnEnd,
)

Piece = tuple[str, str]
"""(text, role)."""
Line = list[Piece]

GUTTER_W = 1
"""A mark beside the focused row."""
TIME_W = 7
SPEAKER_W = 7
JUDGE_W = 13
"""Narrowest judge column; they widen (to JUDGE_MAX_W) while the text keeps TEXT_ROOM."""
JUDGE_MAX_W = 24
TEXT_ROOM = 44
MIN_TEXT_W = 16
GAP = " │"
GAP_W = cell_len(GAP)

SHORT_NAMES = {
    "response_latency": "latency",
    "presumes_unspoken": "unheard",
    "backchannel": "backch.",
}
# Events drawn among the words (where the timing allows) rather than listed.
_TIMED = (*BACKCHANNELS, ShortPause, Opportunity, ErrorEvent)
_HIDDEN = (TurnEnd, SpeechStart, *INTERRUPTIONS)
"""interruption is the cut marker itself; turn_end and speech_start are the row's own times."""


def format_time(t: float | None) -> str:
    """Call time as M:SS.s (or H:MM:SS past an hour)."""
    if t is None:
        return "—"
    if round(t * 10) >= 36000:
        h, rest = divmod(round(t), 3600)
        m, s = divmod(rest, 60)
        return f"{h}:{m:02d}:{s:02d}"
    minutes, tenths = divmod(round(t * 10), 600)  # in tenths, so 59.96 s is 1:00.0
    return f"{minutes}:{tenths / 10:04.1f}"


# ---------------------------------------------------------------- wrapping
def wrap(tokens: Iterable[Piece], width: int) -> list[Line]:
    """Greedy word wrap of tokens (each a word or mark) joined by single spaces;
    a token wider than ``width`` is split across lines."""
    width = max(1, width)
    lines: list[Line] = []
    cur: Line = []
    used = 0
    for text, role in tokens:
        w = cell_len(text)
        if w > width:
            if cur:
                lines.append(cur)
            chunks = chop_cells(text, width)
            lines.extend([(chunk, role)] for chunk in chunks[:-1])
            cur, used = [(chunks[-1], role)], cell_len(chunks[-1])
            continue
        if cur and used + 1 + w > width:
            lines.append(cur)
            cur, used = [], 0
        if cur:
            cur.append((" ", ""))
            used += 1
        cur.append((text, role))
        used += w
    if cur:
        lines.append(cur)
    return lines


def clip(pieces: Line, width: int) -> Line:
    """``pieces`` cut to ``width`` cells, with an ellipsis when something was cut."""
    total = sum(cell_len(t) for t, _ in pieces)
    if total <= width:
        return pieces
    out: Line = []
    room = width - 1
    for text, role in pieces:
        w = cell_len(text)
        if w <= room:
            out.append((text, role))
            room -= w
            continue
        if room > 0:
            out.append((chop_cells(text, room)[0], role))
        break
    out.append(("…", "dim"))
    return out


def line_width(line: Line) -> int:
    return sum(cell_len(t) for t, _ in line)


# ---------------------------------------------------------------- columns
@dataclass(frozen=True, slots=True)
class Columns:
    """Widths of the table at one terminal width with some judge columns shown."""

    width: int
    judges: tuple[str, ...]

    @property
    def judge_w(self) -> int:
        if not self.judges:
            return 0
        room = self.width - GUTTER_W - TIME_W - SPEAKER_W - TEXT_ROOM
        return max(JUDGE_W, min(JUDGE_MAX_W, room // len(self.judges) - GAP_W))

    @property
    def text_w(self) -> int:
        fixed = GUTTER_W + TIME_W + SPEAKER_W + len(self.judges) * (self.judge_w + GAP_W)
        return max(MIN_TEXT_W, self.width - fixed)

    def header(self) -> Line:
        """The column titles, as one line."""
        out: Line = [
            (" " * GUTTER_W, "header"),
            ("time".ljust(TIME_W), "header"),
            ("who".ljust(SPEAKER_W), "header"),
            ("text".ljust(self.text_w), "header"),
        ]
        for group in self.judges:
            out.append((GAP, "rule"))
            w = self.judge_w - 1
            out.append((" " + _fit(judge_title(group), w).ljust(w), "header"))
        return out


def _fit(text: str, width: int) -> str:
    return text if cell_len(text) <= width else chop_cells(text, width - 1)[0] + "…"


@dataclass(slots=True)
class RowCells:
    """One table row, wrapped: its text lines and each judge column's lines."""

    time: str
    speaker: str
    speaker_role: str
    text: list[Line]
    judges: list[list[Line]] = field(default_factory=list)

    @property
    def height(self) -> int:
        return max(1, len(self.text), *(len(j) for j in self.judges))


# ---------------------------------------------------------------- turn content
def _event_mark(e: InlineEvent) -> Piece | None:
    """The inline mark of a timed event, or None for events not worth a mark."""
    src = e.source
    if isinstance(src, BACKCHANNELS):
        return (f"⟨{e.label or 'backchannel'}⟩", "backchannel")
    if isinstance(src, ShortPause):
        return ("‖", "pause-mark")
    if isinstance(src, Opportunity):
        decision = (e.label or "").upper()
        if decision in ("", "NOTHING") or e.data.get("executed"):
            return None  # executed actions show as their own mark (cut, backchannel)
        mode = e.data.get("mode", "shadow")
        return (f"◇{decision.lower()}({mode})", "opportunity")
    if isinstance(src, ErrorEvent):
        return ("⚠error", "error")
    return None


def _event_text(e: InlineEvent) -> Piece:
    """A listed (untimed) event as one piece."""
    label = e.label or ""
    src = e.source
    if isinstance(src, AgentYield):
        return _yield_text(e)
    if isinstance(src, ToolCallEvent):
        return (f"⚙ {label}", "tool")
    if isinstance(src, ToolResultEvent):
        return (f"↳ {label}", "tool")
    if isinstance(src, BACKCHANNELS):
        return (f"⟨{label or 'backchannel'}⟩ at {format_time(e.t)}", "backchannel")
    if isinstance(src, ShortPause):
        return (f"‖ pause at {format_time(e.t)}", "pause-mark")
    if isinstance(src, ErrorEvent):
        return (f"⚠ {label}", "error")
    if isinstance(src, AgentInterruption):
        return (f"↯ agent cut in at {format_time(e.t)}", "cut")
    if isinstance(src, CallControl):
        return (f"☎ {label} at {format_time(e.t)}", "event")
    if isinstance(src, EffectEvent):
        return (f"≈ {label} at {format_time(e.t)}", "event")
    name = e.kind.replace("_", " ")
    return (f"· {name} {label} at {format_time(e.t)}".replace("  ", " "), "event")


def _yield_text(e: InlineEvent) -> Piece:
    role = "false-yield" if answer_is_bad(e) else "cut-note"
    return (f"{answer_phrase(e)} at {format_time(e.t)}", role)


def _words_with_marks(turn: Turn) -> tuple[list[Piece], list[InlineEvent]]:
    """The agent's words (spoken, cut marker, unspoken) with timed events placed
    between the words they fell between; events that could not be placed."""
    spoken = turn.spoken.split()
    unspoken = turn.unspoken.split()
    events = [e for e in turn.events if not isinstance(e.source, _HIDDEN)]
    timed = [e for e in events if isinstance(e.source, _TIMED)]
    rest = [e for e in events if not isinstance(e.source, _TIMED)]
    starts = [w.start for w in turn.words]
    # Talk-over words (played after the cut) are timed too; only the heard ones count.
    starts = starts[: len(spoken)]
    placeable = bool(spoken) and len(starts) == len(spoken)
    marks: dict[int, list[Piece]] = {}
    if placeable:
        for e in timed:
            mark = _event_mark(e)
            if mark is None:
                continue
            pos = bisect_left(starts, e.t)  # words already begun when it happened
            marks.setdefault(pos, []).append(mark)
    else:
        rest = [
            e for e in events if not (isinstance(e.source, Opportunity) and _event_mark(e) is None)
        ]
    # A black-box agent: ▌cut at the tester's onset, its talk-over, ■stop where it stopped.
    bb = turn_cut(turn, starts if placeable else None)
    over = range(bb.cut, bb.stop) if bb is not None else range(0)
    if bb is not None:
        answer = interruption_answer(turn)
        rest = [e for e in rest if e is not answer]  # said by the cut note
        marks.setdefault(bb.cut, []).insert(0, (CUT, "cut"))
        stop = cut_marks(turn, bb)
        if stop:
            at = bb.stop if bb.stopped else len(spoken)
            marks.setdefault(at, []).append((stop, "stop" if bb.stopped else "cut"))
    if placeable:
        for stop_t, latency in false_yields(turn):
            pos = bisect_left(starts, stop_t)
            marks.setdefault(pos, []).append((false_yield_mark(latency), "false-yield"))
    unsure = unsure_indices(turn)
    out: list[Piece] = []
    for i, word in enumerate(spoken):
        out.extend(marks.get(i, ()))
        if i in unsure:  # the ears' low confidence: dimmed, with its mark
            out.append((marked(word), "unsure"))
        else:
            out.append((word, "talk-over" if i in over else "agent"))
    out.extend(marks.get(len(spoken), ()))
    if turn.interrupted and bb is None:
        out.append((CUT, "cut"))
    out.extend((w, "unspoken") for w in unspoken)
    if not spoken and not unspoken:
        out.append((placeholder(turn), "dim"))
    return out, rest


def diff_tokens(rendered: str, kinds: Sequence[tuple[int, str]]) -> list[Piece]:
    """Rendered tokens, each inserted one with its kind as role (see controls.disfluency:
    the k-th insertion in order sits at rendered position index + k)."""
    return [
        (tok, "user" if kind is None else kind if kind in INSERTION_KINDS else "inserted")
        for tok, kind in insertion_tokens(rendered, kinds)
    ]


def _user_lines(turn: Turn, width: int) -> list[Line]:
    original = turn.original if turn.original is not None else turn.text
    head: list[Piece] = []
    if turn.source == "interruption":
        head.append(("▲", "cut"))
    lines = wrap([*head, *((w, "user") for w in original.split())], width)
    rendered = turn.rendered
    if rendered is not None and rendered.split() != original.split():
        kinds = [(i.index, i.kind) for i in turn.insertions]
        lines += wrap([("heard:", "dim"), *diff_tokens(rendered, kinds)], width)
    if not lines:
        lines = [[(placeholder(turn), "dim")]]
    lines.extend(
        clip([_event_text(e)], width) for e in turn.events if not isinstance(e.source, _HIDDEN)
    )
    return lines


def _agent_lines(turn: Turn, width: int) -> list[Line]:
    tokens, rest = _words_with_marks(turn)
    lines = wrap(tokens, width)
    answer = interruption_answer(turn) if turn.interrupted else None
    note = cut_note(turn, answer, format_time(turn.cut_t))
    if note is not None:
        lines.extend(wrap([(w, "cut-note") for w in note.split()], width))
    heard = confidence_note(turn)
    if heard is not None and unsure_indices(turn):
        lines.extend(wrap([(w, "dim") for w in heard.split()], width))
    lines.extend(clip([_event_text(e)], width) for e in rest)
    return lines


def _indent(lines: list[Line]) -> list[Line]:
    return [[(" ", ""), *line] for line in lines]


def _verdict_lines(verdicts: Sequence[JudgeVerdict], width: int, focused: bool) -> list[Line]:
    out: list[Line] = []
    for v in verdicts:
        name = SHORT_NAMES.get(v.name, v.name) or v.judge
        if v.extra.get("source") and name.startswith(("error ", "hallucination ")):
            # τ2 review errors: who and how severe first, so a narrow column keeps them.
            name = name.split(": ", 1)[-1]
        head: Line = [(" " + GLYPH.get(v.label, "?"), v.label), (" ", ""), (name, v.label)]
        if not focused:
            out.append(clip(head, width))
            continue
        words = [(w, v.label) for w in name.split()]
        out.extend(wrap([(" " + GLYPH.get(v.label, "?"), v.label), *words], width))
        if v.judge != judge_group(v.judge):
            out.extend(_indent(wrap([(w, "dim") for w in f"({v.judge})".split()], width - 1)))
        if v.rationale:
            out.extend(_indent(wrap([(w, "rationale") for w in v.rationale.split()], width - 1)))
    return out


# ---------------------------------------------------------------- the table
class TurnTable:
    """Rows of one trial, laid out on demand."""

    def __init__(self, trial: Trial) -> None:
        self.trial = trial
        by_turn: dict[int, list[JudgeVerdict]] = {}
        calls: list[JudgeVerdict] = []
        for v in trial.current_verdicts():
            if v.scope == "turn" and v.turn is not None:
                by_turn.setdefault(v.turn, []).append(v)
            else:
                calls.append(v)
        self._by_turn = by_turn
        self._calls = calls

    def __len__(self) -> int:
        return len(self.trial.turns) + 1

    def verdicts(self, row: int) -> list[JudgeVerdict]:
        """Current verdicts of a row (row 0: the call's own)."""
        return self._calls if row == 0 else self._by_turn.get(row - 1, [])

    def fails(self, row: int) -> bool:
        """Is this row a failure (row 0: the call failed)?"""
        if row == 0:
            return self.trial.failed or any(v.label == FAIL for v in self._calls)
        return any(v.label == FAIL for v in self._by_turn.get(row - 1, ()))

    def is_cut(self, row: int) -> bool:
        """Is this row an agent turn the tester cut?"""
        if row == 0:
            return False
        turn = self.trial.turns[row - 1]
        return turn.speaker == "agent" and (turn.interrupted or turn.cut_t is not None)

    def start(self, row: int) -> float | None:
        return None if row == 0 else self.trial.turns[row - 1].start

    def cells(self, row: int, columns: Columns, focused: bool = False) -> RowCells:
        """Row ``row`` wrapped to ``columns``; ``focused`` rows show verdict rationales."""
        width = columns.text_w
        if row == 0:
            cells = RowCells("", "call", "call", self._call_lines(width, focused))
        else:
            turn = self.trial.turns[row - 1]
            agent = turn.speaker == "agent"
            cells = RowCells(
                format_time(turn.start),
                "agent" if agent else "tester",
                "agent-label" if agent else "user-label",
                _agent_lines(turn, width) if agent else _user_lines(turn, width),
            )
        verdicts = self.verdicts(row)
        for group in columns.judges:
            mine = [v for v in verdicts if judge_group(v.judge) == group]
            cells.judges.append(_verdict_lines(mine, columns.judge_w, focused))
        return cells

    def _call_lines(self, width: int, focused: bool) -> list[Line]:
        t = self.trial
        lines = wrap(trial_head(t), width)
        facts = [t.mode, plural(len(t.turns), "turn")]
        on_line = line_agent(t.header)
        if on_line:
            facts.insert(1, on_line)
        if t.duration is not None:
            facts.append(format_time(t.duration))
        cuts = sum(1 for turn in t.agent_turns() if turn.interrupted)
        if cuts:
            facts.append(f"{cuts} cut{'s' if cuts != 1 else ''}")
        reason = t.meta.get("termination_reason") or t.meta.get("end_reason")
        if reason:
            facts.append(str(reason))
        lines += wrap([(w, "meta") for w in " · ".join(facts).split()], width)
        if focused:
            purpose = t.meta.get("task_purpose")
            if purpose:
                lines += wrap([(w, "rationale") for w in str(purpose).split()], width)
            lines += wrap([(w, "meta") for w in " · ".join(tau2_facts(t)).split()], width)
            for warning in t.warnings:
                lines += wrap([(w, "warn") for w in f"warning: {warning}".split()], width)
        return lines


__all__ = [
    "GAP",
    "GLYPH",
    "GUTTER_W",
    "NOT_JUDGED",
    "SPEAKER_W",
    "TIME_W",
    "Columns",
    "Line",
    "Piece",
    "RowCells",
    "TurnTable",
    "clip",
    "diff_tokens",
    "format_time",
    "judge_group",
    "judge_groups",
    "judge_title",
    "line_width",
    "wrap",
]
