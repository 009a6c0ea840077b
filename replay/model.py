"""The in-memory model every replay view, judge and report works on.

One :class:`Trial` is one call: a cutin session log, or one τ2-bench simulation
(half-duplex messages or full-duplex ticks). Its :class:`Turn` list is in order of
onset on the call's one clock (seconds since call start). Events that happen inside
a turn (backchannels, pauses, opportunities, interruptions, tool calls) sit on the
turn as :class:`InlineEvent`. Verdicts from any judge are :class:`Verdict`.

Plain dataclasses with slots, not pydantic: a two-hour log has tens of thousands
of words and must open in well under a second.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from replay.tau2.ticks import TickTimeline

Speaker = Literal["agent", "user"]
TrialKind = Literal["cutin", "tau2"]

PASS = "pass"
FAIL = "fail"
WARN = "warn"
INFO = "info"
ERROR = "error"


@dataclass(slots=True)
class Insertion:
    """One disfluency token added to the user's text (index = word index in ``rendered``)."""

    index: int
    kind: str
    """filler | repetition | pause | repair | restart (the last two: a self-correction's
    broken-off words, human style)."""
    token: str


@dataclass(slots=True)
class WordTime:
    word: str
    start: float
    end: float
    p: float | None = None
    """The STT's confidence in a heard word (0..1); None for known words."""


@dataclass(slots=True)
class InlineEvent:
    """Something that happened inside a turn, drawn in line with it."""

    t: float
    kind: str
    """backchannel | short_pause | turn_end | opportunity | interruption |
    agent_interruption | vocal_tic | non_directed_speech | burst_noise |
    tool_call | tool_result | error | speech_start."""
    label: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Turn:
    """One turn of one speaker.

    ``text`` is everything the speaker meant to say (the user's *original* text);
    ``spoken`` is what was actually heard (for the user: the rendered text). An
    interrupted agent turn has ``cut_t`` (the tester's onset), ``cut_word`` (index of
    the first unspoken word) and the ``unspoken`` rest.
    """

    index: int
    """Position in :attr:`Trial.turns`."""
    speaker: Speaker
    number: int
    """The speaker's own turn counter, as in the log's ``turn`` field (0-based)."""
    start: float | None
    end: float | None
    text: str
    spoken: str
    unspoken: str = ""
    interrupted: bool = False
    cut_t: float | None = None
    cut_word: int | None = None
    talk_over_s: float | None = None
    original: str | None = None
    rendered: str | None = None
    insertions: list[Insertion] = field(default_factory=list)
    source: str = ""
    """For user turns: typed | mic | simulator | interruption | scenario | tau2."""
    words: list[WordTime] = field(default_factory=list)
    events: list[InlineEvent] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    """Import details (τ2 message indices, tick range, ...)."""

    @property
    def duration(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return max(0.0, self.end - self.start)

    def events_of(self, kind: str) -> list[InlineEvent]:
        return [e for e in self.events if e.kind == kind]


@dataclass(slots=True)
class Verdict:
    """A judge's finding about a whole call (``scope="call"``) or one turn."""

    judge: str
    """rules | llm | tau2 | tau2-review | tau2-user-review | ..."""
    label: str
    """pass | fail | warn | info | error."""
    name: str = ""
    scope: Literal["call", "turn"] = "call"
    turn: int | None = None
    """Index into :attr:`Trial.turns` for turn scope."""
    rationale: str = ""
    score: float | None = None
    t: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, int | None, str]:
        """Identity for "latest wins": a judge re-run replaces its earlier finding."""
        return (self.judge, self.scope, self.turn, self.name)


@dataclass(slots=True)
class Trial:
    """One call or one τ2 simulation, ready to replay."""

    id: str
    task_id: str | None
    source: str
    """The file (or directory) it was loaded from."""
    kind: TrialKind
    mode: str
    """cutin | half_duplex | full_duplex."""
    reward: float | None = None
    turns: list[Turn] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    header: dict[str, Any] = field(default_factory=dict)
    """The cutin log header, or the τ2 simulation's metadata (no messages/ticks)."""
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    duration: float | None = None
    ticks: TickTimeline | None = None
    """Full-duplex τ2 trials keep their tick timeline (for τ-Voice metrics)."""

    @property
    def failed(self) -> bool:
        """Failed when the reward is known and below 1; without a reward, when any
        current verdict says ``fail``."""
        if self.reward is not None:
            return self.reward < 1.0
        return any(v.label == FAIL for v in self.current_verdicts())

    @property
    def judged(self) -> bool:
        """Whether anything judged the call: a reward, or a verdict of any judge. One
        that nothing judged has neither passed nor failed (it is shown "not judged")."""
        return self.reward is not None or bool(self.verdicts)

    def current_verdicts(self) -> list[Verdict]:
        """Verdicts with later ones replacing earlier ones of the same key, in order."""
        latest: dict[tuple[str, str, int | None, str], Verdict] = {}
        for v in self.verdicts:
            latest.pop(v.key, None)
            latest[v.key] = v
        return list(latest.values())

    def verdicts_for(self, turn: int) -> list[Verdict]:
        return [v for v in self.current_verdicts() if v.scope == "turn" and v.turn == turn]

    def verdicts_by_turn(self) -> dict[int, list[Verdict]]:
        """Current turn-scope verdicts grouped by turn index (one pass, for views)."""
        grouped: dict[int, list[Verdict]] = {}
        for v in self.current_verdicts():
            if v.scope == "turn" and v.turn is not None:
                grouped.setdefault(v.turn, []).append(v)
        return grouped

    def agent_turns(self) -> Iterator[Turn]:
        return (t for t in self.turns if t.speaker == "agent")

    def user_turns(self) -> Iterator[Turn]:
        return (t for t in self.turns if t.speaker == "user")

    def turn_by_number(self, speaker: Speaker, number: int) -> Turn | None:
        for turn in self.turns:
            if turn.speaker == speaker and turn.number == number:
                return turn
        return None

    def verdict_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for v in self.current_verdicts():
            counts[v.label] = counts.get(v.label, 0) + 1
        return counts


@dataclass(slots=True)
class Batch:
    """Trials loaded together (a results file, a directory, several paths)."""

    trials: list[Trial] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Load problems that did not stop loading (torn last lines, skipped files)."""

    def __iter__(self) -> Iterator[Trial]:
        return iter(self.trials)

    def __len__(self) -> int:
        return len(self.trials)

    def failures(self) -> list[Trial]:
        return [t for t in self.trials if t.failed]

    def find(self, trial_id: str) -> Trial | None:
        return next((t for t in self.trials if t.id == trial_id), None)

    def tick_trials(self) -> list[Trial]:
        return [t for t in self.trials if t.ticks is not None]


Call = Trial
"""A cutin call is a trial too; both names read naturally in different places."""


__all__ = [
    "ERROR",
    "FAIL",
    "INFO",
    "PASS",
    "WARN",
    "Batch",
    "Call",
    "InlineEvent",
    "Insertion",
    "Speaker",
    "Trial",
    "TrialKind",
    "Turn",
    "Verdict",
    "WordTime",
]
