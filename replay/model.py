"""The in-memory model every replay view, judge and report works on.

One :class:`Trial` is one call: a cutin session log, or one τ2-bench simulation
(half-duplex messages or full-duplex ticks). Its :class:`Turn` list is in order of
onset on the call's one clock (seconds since call start). Events that happen inside
a turn (backchannels, pauses, opportunities, interruptions, tool calls) sit on the
turn as :class:`InlineEvent`, each holding its typed source: the log's own event model
(:mod:`sessions.log.models`) for a cutin log, one of the small τ2 classes below for a
τ2 run. Readers match an event by its source's class, never by a kind's text.
Verdicts from any judge are :class:`JudgeVerdict`.

Plain dataclasses with slots, not pydantic: a two-hour log has tens of thousands
of words and must open in well under a second.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from sessions.log.models import Backchannel, Interruption
from sessions.log.models import Event as LogEvent

Speaker = Literal["agent", "user"]
TrialKind = Literal["cutin", "tau2"]

PASS = "pass"
FAIL = "fail"
WARN = "warn"
INFO = "info"
ERROR = "error"


@dataclass(slots=True)
class InsertedToken:
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


# ---- τ2's events (not cutin log events: what a τ2 run's messages and ticks hold) ----


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """The agent called a tool (a τ2 message's ``tool_calls``)."""

    type: ClassVar[str] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A tool's answer (a τ2 ``tool`` message)."""

    type: ClassVar[str] = "tool_result"


@dataclass(frozen=True, slots=True)
class CallControl:
    """A control token (``###STOP###`` and kin, :mod:`replay.tau2.control`): an
    instruction to τ2's orchestrator, never speech."""

    type: str
    """hang_up | transfer | out_of_scope | control (the token's meaning, from its name)."""


@dataclass(frozen=True, slots=True)
class UserInterruption:
    """τ2's user started a real turn over the agent (full-duplex ticks)."""

    type: ClassVar[str] = "interruption"


@dataclass(frozen=True, slots=True)
class UserBackchannel:
    """τ2's user backchannelled over the agent."""

    type: ClassVar[str] = "backchannel"


@dataclass(frozen=True, slots=True)
class UserSound:
    """τ2's user made a sound over the agent that is not a turn."""

    effect: str
    """vocal_tic | non_directed_speech (τ2's effect type: the overlap's kind)."""

    @property
    def type(self) -> str:
        return self.effect


@dataclass(frozen=True, slots=True)
class AgentInterruption:
    """τ2's agent started speaking inside a user turn (τ-Voice's I_A)."""

    type: ClassVar[str] = "agent_interruption"


@dataclass(frozen=True, slots=True)
class EffectEvent:
    """A speech-environment effect during a turn (:mod:`replay.tau2.effects`)."""

    type: ClassVar[str] = "effect"


@dataclass(frozen=True, slots=True)
class OutOfTurnEffect:
    """An effect heard outside any user turn, on the agent turn it fell in."""

    effect: str
    """τ2's effect type (vocal_tic | non_directed_speech | burst_noise | ...)."""

    @property
    def type(self) -> str:
        return self.effect


Tau2Event = (
    ToolCallEvent
    | ToolResultEvent
    | CallControl
    | UserInterruption
    | UserBackchannel
    | UserSound
    | AgentInterruption
    | EffectEvent
    | OutOfTurnEffect
)
InlineSource = LogEvent | Tau2Event
"""What an inline event is: a cutin log event (its model) or a τ2 event."""

INTERRUPTIONS = (Interruption, UserInterruption)
"""The caller (tester or τ2's user) cut in: a cutin log's or a τ2 run's."""
BACKCHANNELS = (Backchannel, UserBackchannel)
"""The caller backchannelled: a cutin log's or a τ2 run's."""


@dataclass(slots=True)
class InlineEvent:
    """Something that happened inside a turn, drawn in line with it: its typed
    ``source`` (match on its class), when it is drawn (``t``), its one-line ``label``
    and what the import derived for the views (``data``)."""

    t: float
    source: InlineSource
    label: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The event's type as text (reports, JSON): the log model's ``type`` (its
        Literal default, :func:`sessions.log.models.type_name`), or the τ2 class's."""
        return self.source.type


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
    insertions: list[InsertedToken] = field(default_factory=list)
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

    def events_of(self, *types: type[InlineSource]) -> list[InlineEvent]:
        """This turn's inline events whose source is one of ``types``."""
        return [e for e in self.events if isinstance(e.source, types)]


@dataclass(slots=True)
class JudgeVerdict:
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


@dataclass(frozen=True, slots=True)
class TickEffect:
    """An effect active during one tick of a full-duplex τ2 run (merged into spans across
    ticks; read by :func:`replay.tau2.ticks.timeline_from_tau2`)."""

    kind: str
    """vocal_tic | non_directed_speech | burst_noise | muffling."""
    text: str | None = None
    file: str | None = None


@dataclass(slots=True)
class TickTimeline:
    """The per-tick facts of one full-duplex simulation, as flat lists."""

    tick_s: float
    user_speech: list[bool]
    agent_speech: list[bool]
    user_action: list[str | None]
    user_effects: list[tuple[TickEffect, ...]]
    user_text: list[str]
    agent_text: list[str]

    def __len__(self) -> int:
        return len(self.user_speech)

    def without_end_artifact(self) -> TickTimeline:
        """Drop a final lone user speech tick (τ2's ``###STOP###`` artifact)."""
        n = len(self)
        if n >= 2 and self.user_speech[-1] and not self.user_speech[-2]:
            return TickTimeline(
                self.tick_s,
                self.user_speech[:-1],
                self.agent_speech[:-1],
                self.user_action[:-1],
                self.user_effects[:-1],
                self.user_text[:-1],
                self.agent_text[:-1],
            )
        return self

    def time(self, tick: int) -> float:
        return tick * self.tick_s


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
    verdicts: list[JudgeVerdict] = field(default_factory=list)
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

    def current_verdicts(self) -> list[JudgeVerdict]:
        """Verdicts with later ones replacing earlier ones of the same key, in order."""
        latest: dict[tuple[str, str, int | None, str], JudgeVerdict] = {}
        for v in self.verdicts:
            latest.pop(v.key, None)
            latest[v.key] = v
        return list(latest.values())

    def verdicts_for(self, turn: int) -> list[JudgeVerdict]:
        return [v for v in self.current_verdicts() if v.scope == "turn" and v.turn == turn]

    def verdicts_by_turn(self) -> dict[int, list[JudgeVerdict]]:
        """Current turn-scope verdicts grouped by turn index (one pass, for views)."""
        grouped: dict[int, list[JudgeVerdict]] = {}
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
    "BACKCHANNELS",
    "ERROR",
    "FAIL",
    "INFO",
    "INTERRUPTIONS",
    "PASS",
    "WARN",
    "AgentInterruption",
    "Batch",
    "Call",
    "CallControl",
    "EffectEvent",
    "InlineEvent",
    "InlineSource",
    "InsertedToken",
    "JudgeVerdict",
    "OutOfTurnEffect",
    "Speaker",
    "Tau2Event",
    "TickEffect",
    "TickTimeline",
    "ToolCallEvent",
    "ToolResultEvent",
    "Trial",
    "TrialKind",
    "Turn",
    "UserBackchannel",
    "UserInterruption",
    "UserSound",
    "WordTime",
]
