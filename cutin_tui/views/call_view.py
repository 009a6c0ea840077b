"""What the live call screen shows, folded from session-log events. No Textual here.

The screen drains the call's events in batches and hands them to
:meth:`CallView.apply`; widgets then draw from this state. Keeping it pure means
the same fold can be checked against a log file in a test.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from cutin_tui.views.line_view import LineView
from cutin_tui.views.live_counts import LiveCounts
from replay.audit.counter import count
from replay.report.black_box import short_outcome, yield_phrase
from sessions.hostile.safe_files import clean_text
from sessions.log.fold import CallLog
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    AgentYield,
    Backchannel,
    DialsChanged,
    EndEvent,
    ErrorEvent,
    Event,
    Interruption,
    LineEvent,
    Opportunity,
    RuleCalibration,
    ShortPause,
    TurnEnd,
    UserTurn,
)

# ---- transcript ------------------------------------------------------------------

QUEUED = "(waits for the agent's turn to end)"
NEVER_SAID = "(never said: the call ended first)"


@dataclass
class AgentEntry:
    """One agent turn as heard so far."""

    turn: int
    words: list[str] = field(default_factory=list)
    backchannels: list[tuple[int, str]] = field(default_factory=list)
    """(words heard when it was said, token): drawn inline after that word."""
    done: bool = False
    interrupted: bool = False
    cut_word: int | None = None
    unspoken: str = ""
    talk_over_s: float | None = None
    barge_in_word: int | None = None
    """Where the caller cut in (also set when the agent talked on over them)."""
    starts: list[float] = field(default_factory=list)
    """Start time of each word in ``words`` (when the log gives timings)."""
    probs: list[float | None] = field(default_factory=list)
    """The ears' confidence in each heard word (None: a word cutin knows)."""
    black_box: bool = False
    """The agent is on a line (cutin cannot stop it): after a cut its words go on to
    where its audio actually stopped, ``stop_t``."""
    stop_t: float | None = None
    stop_latency_s: float | None = None
    yielded: bool | None = None
    """After the caller's interruption: did it stop within the window (None: not known yet)?"""
    false_yields: list[tuple[float, float | None]] = field(default_factory=list)
    """(stop_t, latency) of each stop a backchannel caused."""
    revision: int = 0


@dataclass
class UserEntry:
    turn: int
    source: str
    original: str
    rendered: str
    insertions: list[tuple[int, str, str]]
    """(index in the original words, kind, token), as logged."""
    revision: int = 0


@dataclass
class NoteEntry:
    kind: str
    """info | queued | error | end | yield (the agent stopped as asked) | warn."""
    text: str
    revision: int = 0


Entry = AgentEntry | UserEntry | NoteEntry


# ---- timeline --------------------------------------------------------------------


@dataclass
class OpportunityMark:
    t: float
    decision: str
    executed: bool
    at_turn_end: bool = False


@dataclass
class TimelineData:
    """Everything the timeline strip draws, in time order."""

    agent: list[tuple[float, float]] = field(default_factory=list)
    """Agent word intervals (start, end)."""
    user: list[tuple[float, float, str]] = field(default_factory=list)
    """Caller speech (start, end, source)."""
    cuts: list[float] = field(default_factory=list)
    stops: list[float] = field(default_factory=list)
    """Where a black-box agent's audio stopped after a cut or a backchannel (sorted)."""
    backchannels: list[tuple[float, str]] = field(default_factory=list)
    """(t, trigger)."""
    interruptions: list[tuple[float, str]] = field(default_factory=list)
    pauses: list[tuple[float, int]] = field(default_factory=list)
    """Short pauses (t, index); opportunities at them are in ``opportunities``."""
    opportunities: dict[int, OpportunityMark] = field(default_factory=dict)
    """Opportunities at short pauses, by pause index."""
    polls: list[OpportunityMark] = field(default_factory=list)
    """Consultations of a polling policy (no pause), in time order."""
    turn_ends: list[float] = field(default_factory=list)


# ---- last decision ---------------------------------------------------------------


@dataclass
class DecisionView:
    t: float
    index: int
    pause_index: int | None
    turn: int
    decision: str
    executed: bool
    checks: list[dict[str, Any]]
    autos: dict[str, bool] | None
    policy: str
    at_turn_end: bool = False
    llm: dict[str, Any] | None = None
    """What an LLM policy's decision cost (calls, latency_s, tokens)."""
    shadow: ShadowView | None = None
    """The shadow policy's decision at the same opportunity, when one runs."""
    outcome: str | None = None
    """What a black-box agent did after the action this decision took (its agent_yield)."""
    adapt: str | None = None
    """``--adapt``: the calibration in force (what was measured, what was set)."""
    words_estimated: int = 0
    """Of the words counted, how many were estimated from speech time (a line's agent
    words not transcribed yet, or ``--transcribe end|off``)."""


@dataclass
class ShadowView:
    policy: str
    decision: str
    llm: dict[str, Any] | None = None


def _estimated(situation: Any) -> int:
    """``words_estimated`` of a decision's situation (0 when absent or not a count)."""
    value = situation.get("words_estimated") if isinstance(situation, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def llm_cost(llm: dict[str, Any] | None) -> str:
    """ "2 LLM calls · 412 ms · 310 tokens" (empty when nothing was spent)."""
    if not llm:
        return ""
    parts = [f"{llm.get('calls', 0)} LLM calls"]
    if isinstance(llm.get("latency_s"), int | float):
        parts.append(f"{1000 * llm['latency_s']:.0f} ms")
    if llm.get("tokens"):
        parts.append(f"{llm['tokens']} tokens")
    if llm.get("error"):
        parts.append("error")
    return " · ".join(parts)


_END_REASONS = {
    "line_failed": "the line to the agent failed",
    "agent_hangup": "the agent hung up",
}


# ---- the whole screen ------------------------------------------------------------


@dataclass
class CallView:
    """The screen's state. ``changed`` holds entry indices touched by the last apply."""

    entries: list[Entry] = field(default_factory=list)
    timeline: TimelineData = field(default_factory=TimelineData)
    log: CallLog = field(default_factory=CallLog)
    """The call so far, folded (:mod:`sessions.log.fold`): its realized count is the panel's."""
    counts: LiveCounts = field(init=False)
    decision: DecisionView | None = None
    agent_speaking: bool = False
    agent_turn: int | None = None
    user_speaking_until: float = -1.0
    last_t: float = 0.0
    ended: str | None = None
    errors: int = 0
    calibration: str | None = None
    """``--adapt``: the latest calibration's one-line summary."""
    adapted: dict[str, float] | None = None
    """``--adapt``: the thresholds in force (None: the paper's constants)."""
    caller_words: int = 0
    caller_disfluencies: int = 0
    """Fillers + repetitions in what the caller said (the independent counter)."""
    shadow_llm_calls: int = 0
    """LLM calls the shadow policy has spent so far (prompts vs rules: the rules spend 0)."""
    line: LineView | None = None
    """The line to a black-box agent (None: cutin speaks for a simulated agent)."""
    changed: set[int] = field(default_factory=set)
    _agent_index: dict[int, int] = field(default_factory=dict)
    _queued: list[int] = field(default_factory=list)

    # -- notes the screen adds itself

    def note(self, text: str, kind: str = "info") -> int:
        """Add a line to the transcript (not from the call); returns its index."""
        self.entries.append(NoteEntry(kind, text))
        self.changed.add(len(self.entries) - 1)
        return len(self.entries) - 1

    def note_queued(self, text: str) -> None:
        """The tester sent text while the agent holds the floor; shown until it is spoken."""
        self._queued.append(self.note(f"{QUEUED} {text}", "queued"))

    # -- events

    def apply(self, events: Iterable[Event]) -> None:
        """Fold a batch of events in (log order)."""
        for event in events:
            self._apply(event)

    def _touch(self, index: int) -> None:
        entry = self.entries[index]
        entry.revision += 1
        self.changed.add(index)

    def _agent(self, turn: int) -> AgentEntry:
        index = self._agent_index.get(turn)
        if index is None:
            self.entries.append(AgentEntry(turn))
            index = len(self.entries) - 1
            self._agent_index[turn] = index
        entry = self.entries[index]
        assert isinstance(entry, AgentEntry)
        self._touch(index)
        return entry

    def __post_init__(self) -> None:
        self.counts = LiveCounts(self.log.realized)

    def _apply(self, event: Event) -> None:
        self.log.add(event)  # the fold: turns, call events, the realized count
        self.last_t = self.log.last_t
        handler = _ON_EVENT.get(type(event))
        if handler is not None:
            handler(self, event)

    def _on_agent_turn_start(self, event: AgentTurnStart) -> None:
        self._agent(event.turn)
        self.agent_speaking = True
        self.agent_turn = event.turn

    def _on_agent_words(self, event: AgentWords) -> None:
        tl = self.timeline
        entry = self._agent(event.turn)
        # Words arrive in order; first_index guards against a repeated report.
        del entry.words[event.first_index :]
        entry.words.extend(w.word for w in event.words)
        del entry.starts[event.first_index :]
        entry.starts.extend(w.start for w in event.words)
        del entry.probs[event.first_index :]
        entry.probs.extend(w.p for w in event.words)
        tl.agent.extend((w.start, w.end) for w in event.words)

    def _on_agent_turn_end(self, event: AgentTurnEnd) -> None:
        entry = self._agent(event.turn)
        entry.done = True
        entry.interrupted = event.interrupted
        entry.talk_over_s = event.talk_over_s
        if event.speech_s is not None or event.stop_t is not None:
            entry.black_box = True  # only a line's turns measure their own speech
        if event.stop_t is not None:
            entry.stop_t = event.stop_t
        if event.cut_word is not None:
            entry.cut_word = event.cut_word
            entry.words = event.spoken.split()
            entry.unspoken = event.unspoken
        self.agent_speaking = False

    def _on_user_turn(self, event: UserTurn) -> None:
        self._user_turn(event)

    def _on_interruption(self, event: Interruption) -> None:
        tl = self.timeline
        entry = self._agent(event.turn)
        entry.barge_in_word = event.cut_word
        entry.black_box = entry.black_box or self.line is not None
        tl.interruptions.append((event.t, event.trigger))
        tl.cuts.append(event.cut_t if event.cut_t is not None else event.t)

    def _on_backchannel(self, event: Backchannel) -> None:
        tl = self.timeline
        entry = self._agent(event.turn)
        heard = event.words_heard if event.words_heard is not None else len(entry.words)
        entry.backchannels.append((heard, event.token))
        tl.backchannels.append((event.t, event.trigger))

    def _on_short_pause(self, event: ShortPause) -> None:
        tl = self.timeline
        tl.pauses.append((event.t, event.index))

    def _on_opportunity(self, event: Opportunity) -> None:
        self._opportunity(event)

    def _on_turn_end(self, event: TurnEnd) -> None:
        tl = self.timeline
        tl.turn_ends.append(event.t)
        mark = tl.opportunities.get(
            event.short_pause_index if event.short_pause_index is not None else -1
        )
        if mark is not None:
            mark.at_turn_end = True
        if (
            self.decision is not None
            and event.short_pause_index is not None
            and self.decision.pause_index == event.short_pause_index
        ):
            self.decision.at_turn_end = True

    def _on_agent_yield(self, event: AgentYield) -> None:
        self._agent_yield(event)

    def _on_line_event(self, event: LineEvent) -> None:
        if self.line is None:
            self.line = LineView()
        self.line.apply(event)
        if event.kind == "no_response":  # the agent went quiet: say so as it happens
            self.note(clean_text(f"no response: {event.detail}"), "warn")

    def _on_dials_changed(self, event: DialsChanged) -> None:
        if event.autos.get("adapt") is False and self.calibration is not None:
            self.calibration = self.adapted = None
            self.note("adapt off: the paper's constants apply", "info")

    def _on_rule_calibration(self, event: RuleCalibration) -> None:
        self.calibration = event.summary or None
        self.adapted = dict(event.params) if event.calibrated and event.params else None
        if event.summary:
            self.note(clean_text(event.summary), "info")

    def _on_error_event(self, event: ErrorEvent) -> None:
        self.errors += 1
        self.note(clean_text(f"error in {event.where or 'call'}: {event.message}"), "error")

    def _on_end_event(self, event: EndEvent) -> None:
        self.ended = event.reason
        self.agent_speaking = False
        for index in self._queued:
            waiting = self.entries[index]
            if isinstance(waiting, NoteEntry):
                waiting.text = waiting.text.replace(QUEUED, NEVER_SAID, 1)
                self._touch(index)
        self._queued.clear()
        why = _END_REASONS.get(event.reason)
        reason = f": {why}" if why else f" ({event.reason})"
        self.note(f"call ended at {event.t:.1f} s{reason}", "end")

    def _agent_yield(self, event: AgentYield) -> None:
        entry = self._agent(event.turn)
        entry.black_box = True
        if event.after == "interruption":
            entry.yielded = event.yielded
            entry.stop_t = event.stop_t
            entry.stop_latency_s = event.latency_s
            kind = "yield" if event.yielded else "warn"
        else:
            if event.yielded and event.stop_t is not None:
                entry.false_yields.append((event.stop_t, event.latency_s))
            kind = "warn" if event.yielded else "yield"
        if event.stop_t is not None:
            bisect.insort(self.timeline.stops, event.stop_t)
        if self.line is not None:
            self.line.count_yield(event)
        phrase = yield_phrase(
            event.after, event.yielded, event.latency_s, event.window_s, event.talk_over_s
        )
        self.note(phrase, kind)
        d = self.decision
        wanted = "INTERRUPT" if event.after == "interruption" else "BACKCHANNEL"
        if (
            d is not None
            and d.executed
            and d.turn == event.turn
            and d.decision == wanted
            and d.t <= event.onset_t + 1e-6
        ):
            d.outcome = short_outcome(event.after, event.yielded, event.latency_s, event.window_s)

    def _user_turn(self, event: UserTurn) -> None:
        if event.source == "typed":
            for position, index in enumerate(self._queued):
                entry = self.entries[index]
                if isinstance(entry, NoteEntry) and entry.text.endswith(event.original):
                    entry.text = ""  # spoken now: the real turn below replaces it
                    self._touch(index)
                    del self._queued[position]
                    break
        self.entries.append(
            UserEntry(
                turn=event.turn,
                source=event.source,
                original=event.original,
                rendered=event.rendered,
                insertions=[(i.index, i.kind, i.token) for i in event.insertions],
            )
        )
        self.changed.add(len(self.entries) - 1)
        counted = count(event.rendered)  # once per turn, as the audit counts it
        self.caller_words += counted.words
        self.caller_disfluencies += counted.combined
        end = event.end_t if event.end_t is not None else event.t
        self.timeline.user.append((event.t, end, event.source))
        self.user_speaking_until = max(self.user_speaking_until, end)

    def _opportunity(self, event: Opportunity) -> None:
        if event.mode == "shadow":
            self.shadow_llm_calls += int((event.llm or {}).get("calls", 0))
            if self.decision is not None and self.decision.index == event.index:
                self.decision.shadow = ShadowView(event.policy, event.decision, event.llm)
            return
        mark = OpportunityMark(event.t, event.decision, event.executed)
        if event.pause_index is None:
            self.timeline.polls.append(mark)
        else:
            self.timeline.opportunities[event.pause_index] = mark
        self.decision = DecisionView(
            t=event.t,
            index=event.index,
            pause_index=event.pause_index,
            turn=event.turn,
            decision=event.decision,
            executed=event.executed,
            checks=list(event.checks),
            autos=dict(event.autos) if event.autos is not None else None,
            policy=event.policy,
            llm=event.llm,
            adapt=self.calibration if event.policy == "rules" else None,
            words_estimated=_estimated(event.situation),
        )

    def take_changed(self) -> set[int]:
        """Entry indices changed since the last call (and forget them)."""
        out, self.changed = self.changed, set()
        return out

    def floor_free(self, now: float) -> bool:
        """Best guess whether typed text is spoken at once (the loop decides; this
        only chooses whether to show it as waiting)."""
        if self.ended is not None or self.agent_speaking or now < self.user_speaking_until:
            return False
        last = next(
            (e for e in reversed(self.entries) if isinstance(e, AgentEntry | UserEntry)), None
        )
        # The agent opens the call, and after the caller's turn its reply is due.
        return isinstance(last, AgentEntry)

    def status(self, now: float) -> str:
        """One phrase for who holds the floor."""
        if self.ended is not None:
            return f"call ended ({self.ended})"
        if self.agent_speaking:
            return f"agent speaking · turn {(self.agent_turn or 0) + 1}"
        if now < self.user_speaking_until:
            return "you are speaking"
        if not self.floor_free(now):
            return "waiting for the agent"
        return "your turn · type and press Enter"


_ON_EVENT: dict[type[Event], Callable[[CallView, Any], None]] = {
    AgentTurnStart: CallView._on_agent_turn_start,
    AgentWords: CallView._on_agent_words,
    AgentTurnEnd: CallView._on_agent_turn_end,
    UserTurn: CallView._on_user_turn,
    Interruption: CallView._on_interruption,
    Backchannel: CallView._on_backchannel,
    ShortPause: CallView._on_short_pause,
    Opportunity: CallView._on_opportunity,
    TurnEnd: CallView._on_turn_end,
    AgentYield: CallView._on_agent_yield,
    LineEvent: CallView._on_line_event,
    DialsChanged: CallView._on_dials_changed,
    RuleCalibration: CallView._on_rule_calibration,
    ErrorEvent: CallView._on_error_event,
    EndEvent: CallView._on_end_event,
}
"""Event model → how the view takes it in (every other event only moves the clock and
the counts)."""


def realized_by_dial(view: CallView) -> dict[str, str]:
    """What each dial has produced so far: α as fillers + repetitions per 1,000 words of
    what the caller said (the independent counter, as the audit counts), β and γ as
    actions per agent turn and per opportunity."""
    out: dict[str, str] = {}
    words, combined = view.caller_words, view.caller_disfluencies
    if words:
        out["alpha"] = f"{1000 * combined / words:.0f}/1k words"
    c = view.counts
    for name, taken in (("beta", c.taken_interrupt), ("gamma", c.taken_backchannel)):
        per_turn = c.per_turn(taken)
        if per_turn is not None:
            per_opp = c.per_opportunity(taken)
            opp = f" · {100 * per_opp:.0f}% opp." if per_opp is not None else ""
            out[name] = f"{per_turn:.2f}/turn{opp}"
    return out
