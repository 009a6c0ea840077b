"""Pydantic models for the session log. The file format is a contract:

* line 1 is a :class:`Header` (``schema: "cutin.session/1"``);
* every later line is an event with ``type`` and ``t`` (seconds since call start,
  one monotonic clock for everything);
* unknown fields are kept (``extra="allow"``) and written back unchanged; an
  unknown event ``type`` loads as :class:`UnknownEvent`, so newer logs still open
  (the reader checks and counts it, and keeps it only when asked to).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from sessions.hostile.redact import public_url, redact_url

SCHEMA_NAME = "cutin.session"
SCHEMA_VERSION = 1
SCHEMA = f"{SCHEMA_NAME}/{SCHEMA_VERSION}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class AgentInfo(_Model):
    kind: str = "scripted"
    """Connector: scripted | openai | realtime | tau2 (imported)."""
    name: str = ""
    model: str | None = None
    base_url: str | None = None
    """The endpoint as :func:`sessions.hostile.redact.public_url` gives it: scheme, host, port and
    path only (no user info, query or fragment), however it was given."""

    @field_validator("base_url")
    @classmethod
    def _public(cls, value: str | None) -> str | None:
        # Here rather than at each writer: no header, written or read back, holds a secret.
        return public_url(value) if value else value

    def model_post_init(self, context: Any, /) -> None:
        for key, value in (self.__pydantic_extra__ or {}).items():
            if isinstance(value, str) and "://" in value:
                self.__pydantic_extra__[key] = redact_url(value)  # type: ignore[index]


class SpeechInfo(_Model):
    tts: str = "text"
    """Speech out: text | espeak | openai."""
    input: str = "type"
    """Tester input: type | mic | simulator."""
    stt: str | None = None
    vad: str | None = None
    words_per_minute: float | None = None
    transcribe: str | None = None
    """A line's ``--transcribe`` when not ``live``: ``end`` (each agent turn transcribed
    once it ends; decisions count estimated words) or ``off`` (no agent words logged)."""


class TendencyValues(_Model):
    alpha: float = 0.0
    beta: float = 0.0
    gamma: float = 0.0


class Header(_Model):
    type: Literal["header"] = "header"
    schema_: str = Field(default=SCHEMA, alias="schema")
    session_id: str
    started_at: str
    """ISO-8601 wall-clock time (UTC, milliseconds) of t = 0. Logs before ``t0_unix``
    took it when the log was created, up to a second before t = 0."""
    t0_unix: float | None = None
    """``time.time()`` (seconds since the epoch) at t = 0, read from the clock the call
    runs on as it starts; None in older logs (docs/log-format.md, "Aligning")."""
    t0_monotonic: float | None = None
    """``time.monotonic()`` at t = 0 on the machine that ran the call (comparable only
    with that machine's monotonic clock, before it reboots)."""
    clock: Literal["real", "virtual"] | None = None
    """real: ``t`` runs with the wall clock from ``t0_unix``; virtual: ``t`` is simulated
    time (only t = 0 is an instant); None in older logs."""
    cutin_version: str = ""
    agent: AgentInfo = Field(default_factory=AgentInfo)
    scenario: str | None = None
    speech: SpeechInfo = Field(default_factory=SpeechInfo)
    tendencies: TendencyValues = Field(default_factory=TendencyValues)
    policy: str = "rules"
    shadow: str | None = None
    autos: dict[str, bool] = Field(default_factory=lambda: {"interrupt": True, "backchannel": True})
    profile: str = "default"
    disfluency_style: Literal["paper", "human"] = "paper"
    """The caller's disfluency style (controls.disfluency.STYLES); older logs are "paper"."""
    seeds: dict[str, int] = Field(default_factory=dict)
    batch: dict[str, Any] | None = None
    """For `cutin simulate`: the condition and run index of this call."""


class _Event(_Model):
    t: float


class WordTiming(_Model):
    word: str
    start: float
    end: float
    p: float | None = Field(default=None, ge=0.0, le=1.0)
    """How sure the speech-to-text was of this word (0..1), for words cutin *heard* (a
    black-box agent's); None when the words are known (text clock, TTS estimates)."""


class AgentTurnStart(_Event):
    type: Literal["agent_turn_start"] = "agent_turn_start"
    turn: int
    """Agent turn index, 0-based."""
    text: str | None = None
    """The full planned text when the agent is scripted or the text is known."""
    response_latency_s: float | None = None
    """A black-box agent: seconds from the end of the caller's last sound (a turn, a
    barge-in or a backchannel, as it left on the line) to this onset, when the agent was
    silent at that end (docs/agent-measures.md)."""
    response_to: str | None = None
    """A black-box agent: what ``response_latency_s`` is measured from: turn |
    interruption | backchannel (None: no latency, or an older log)."""
    over_caller: bool = False
    """A black-box agent started this turn while the caller's turn was still going (its
    audio or a pause inside it): an agent interruption (τ-Voice's I_A)."""


class AgentWords(_Event):
    type: Literal["agent_words"] = "agent_words"
    turn: int
    words: list[WordTiming]
    first_index: int = 0
    """Index (within the turn) of the first word in ``words``."""


class AgentTurnEnd(_Event):
    type: Literal["agent_turn_end"] = "agent_turn_end"
    turn: int
    text: str
    """Everything the agent meant to say this turn."""
    spoken: str
    unspoken: str = ""
    interrupted: bool = False
    cut_t: float | None = None
    cut_word: int | None = None
    """Index of the first unspoken word."""
    talk_over_s: float | None = None
    stop_t: float | None = None
    """A black-box agent: where its audio actually stopped after the cut (``cut_t`` is the
    caller's onset). None: it did not stop, or the agent's speech is cutin's own."""
    speech_s: float | None = None
    """A black-box agent: seconds of speech in the turn (VAD), for its pause profile."""
    end_t: float | None = None
    """A black-box agent: the end of its last sound in the turn, to the sample (the turn
    holds the floor from its onset to here; dead air is the time no turn holds it)."""


class InsertionRecord(_Model):
    index: int
    kind: Literal["filler", "repetition", "pause", "repair", "restart"]
    token: str


class UserTurn(_Event):
    type: Literal["user_turn"] = "user_turn"
    turn: int
    source: str = "typed"
    """typed | mic | simulator | interruption | scenario."""
    original: str
    rendered: str
    insertions: list[InsertionRecord] = Field(default_factory=list)
    alpha: float = 0.0
    end_t: float | None = None
    """When the user's (rendered) speech ended."""
    words: list[WordTiming] | None = None
    """Timings of the rendered words as spoken (text clock or STT), when known."""


class SpeechStart(_Event):
    type: Literal["speech_start"] = "speech_start"
    speaker: str = "agent"
    turn: int | None = None


class ShortPause(_Event):
    type: Literal["short_pause"] = "short_pause"
    index: int
    silence_start: float
    turn: int | None = None
    became_turn_end: bool = False
    """Set on load when a later turn_end names this pause."""


class TurnEnd(_Event):
    type: Literal["turn_end"] = "turn_end"
    silence_start: float
    turn: int | None = None
    short_pause_index: int | None = None


class Opportunity(_Event):
    type: Literal["opportunity"] = "opportunity"
    index: int
    pause_index: int | None = None
    """The short pause this opportunity was evaluated at (None for a polling policy's
    consultation, e.g. τ-Voice's every-2-s classifier call)."""
    turn: int
    decision: str
    """INTERRUPT | BACKCHANNEL | NOTHING."""
    checks: list[dict[str, Any]] = Field(default_factory=list)
    executed: bool = False
    mode: str = "auto"
    """auto (acting, autos on) | shadow (logged only) | off (the auto for it is off)."""
    policy: str = "rules"
    situation: dict[str, Any] = Field(default_factory=dict)
    llm: dict[str, Any] | None = None
    """For LLM policies: calls, latency_s, tokens."""
    tendencies: TendencyValues | None = None
    """The dials in force when this was decided (the header's, then the latest
    ``dials`` event's); None in logs written before it was logged."""
    autos: dict[str, bool] | None = None
    """The auto toggles in force (``interrupt``, ``backchannel``); None in older logs."""


class Interruption(_Event):
    type: Literal["interruption"] = "interruption"
    turn: int
    trigger: str = "auto"
    """auto | manual."""
    cut_t: float | None = None
    cut_word: int | None = None
    text: str = ""
    tendencies: TendencyValues | None = None
    """The dials in force when the caller cut in (None in older logs)."""
    autos: dict[str, bool] | None = None


class Backchannel(_Event):
    type: Literal["backchannel"] = "backchannel"
    turn: int
    trigger: str = "auto"
    token: str = "mm-hmm"
    words_heard: int | None = None
    tendencies: TendencyValues | None = None
    """The dials in force when the caller backchannelled (None in older logs)."""
    autos: dict[str, bool] | None = None


class Verdict(_Event):
    type: Literal["verdict"] = "verdict"
    judge: str
    """rules | llm | tau2 | ..."""
    scope: str = "call"
    """call | turn."""
    turn: int | None = None
    speaker: str | None = None
    name: str = ""
    label: str
    """pass | fail | info (or a judge-specific label)."""
    score: float | None = None
    rationale: str = ""


class DialsChanged(_Event):
    """The tester changed a dial or an auto toggle mid-call (the header has the start)."""

    type: Literal["dials"] = "dials"
    tendencies: TendencyValues
    autos: dict[str, bool] = Field(default_factory=dict)


class RuleCalibration(_Event):
    """``--adapt`` set the short-pause rule's thresholds for the agent's rhythm."""

    type: Literal["calibration"] = "calibration"
    source: str
    """sample (the agent's script spoken in its style before the call) | live (this call's
    agent turns so far)."""
    reason: str
    """start | turn (an agent turn ended) | dials (the dials changed)."""
    tendencies: TendencyValues
    calibrated: bool
    """False: too few turns yet, the paper's constants apply."""
    params: dict[str, float] | None = None
    """interrupt_patience_s, interrupt_min_words, backchannel_first_words,
    backchannel_spacing_words (None when not calibrated)."""
    scales: dict[str, float] = Field(default_factory=dict)
    target: dict[str, float] = Field(default_factory=dict)
    replayed: dict[str, float] = Field(default_factory=dict)
    reached: bool = True
    rhythm: dict[str, float] = Field(default_factory=dict)
    turns: list[int] = Field(default_factory=list)
    summary: str = ""


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    where: str = ""
    message: str


class FrameLag(_Model):
    """How late a real-time call processed its 32 ms frames (seconds after each was due).

    A call whose ``p99_s`` exceeds one frame sent and heard its audio off the beat (the
    machine could not pace it): its timings are not trusted (:func:`lagged`)."""

    p50_s: float = 0.0
    p99_s: float = 0.0
    max_s: float = 0.0
    frames: int = 0
    late_frames: int = 0
    """Frames processed more than one frame late."""


class EndEvent(_Event):
    type: Literal["end"] = "end"
    reason: str = "hangup"
    frame_lag: FrameLag | None = None
    """Real-time calls only (None on the virtual clock and in older logs)."""


class AgentYield(_Event):
    """A black-box agent after the caller barged in or backchannelled: did it stop?

    Definitions follow τ-Voice's: after an interruption the agent *yields* if it falls
    silent within 2.0 s of the caller's onset; after a backchannel, stopping within
    1.0 s is a *false yield*. "Falls silent" is a silence that grows into a turn end
    (500 ms); ``stop_t`` is the end of the agent's last sound before it, to the sample.
    """

    type: Literal["agent_yield"] = "agent_yield"
    turn: int
    after: str
    """interruption | backchannel."""
    onset_t: float
    """When the caller's audio started on the line."""
    window_s: float
    yielded: bool
    stop_t: float | None = None
    """Where the agent's audio actually stopped (None: it did not within the window)."""
    latency_s: float | None = None
    """``stop_t - onset_t``, at least 0 (0: the agent never spoke again after the onset)."""
    resumed: bool = False
    """The agent spoke after the onset (before stopping, or instead of stopping)."""
    clear_t: float | None = None
    """When the agent flushed its queued audio (a Twilio ``clear``), if it did."""
    heard: str = ""
    """What the agent had said by ``stop_t`` (or by the window's end), as transcribed."""
    talk_over_s: float = 0.0
    """Seconds the agent spoke while the caller's audio was playing, after the onset."""
    already_silent: bool = False
    """The agent's sound had ended before the caller's onset and it made none after it
    (it had finished on its own): not a yield to this act, and not scored."""
    responded: bool | None = None
    """A vocal tic or side talk while the agent was silent: whether it started talking
    within 2.0 s of the sound's end (τ-Voice's error); None for acts during its speech."""


class CallerSound(_Event):
    """A caller sound that is not a turn, on a line: a vocal tic (a short non-lexical
    sound) or side talk not meant for the agent, played at ``level_db`` below the
    caller's speech. Its ``agent_yield`` (``after`` = ``kind``) says what the agent did."""

    type: Literal["caller_sound"] = "caller_sound"
    kind: str
    """vocal_tic | non_directed."""
    turn: int | None = None
    """The agent turn it fell in (None: the agent was silent)."""
    end_t: float
    level_db: float = 0.0
    text: str = ""
    """What the side talk says (empty for a vocal tic)."""


class LineEvent(_Event):
    """Something the line to a black-box agent reported (not audio)."""

    type: Literal["line"] = "line"
    kind: str
    """open | format | clear | mark | agent_event | error | closed | failed."""
    detail: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


class UnknownEvent(_Event):
    """An event type this version does not know, kept as-is when the reader is asked
    to (``read_session(keep_unknown=True)``); otherwise only counted."""

    type: str


# The known event classes, written once: the discriminated union, the open Event
# union and KNOWN_TYPES all derive from this alias.
_KnownUnion = (
    AgentTurnStart
    | AgentWords
    | AgentTurnEnd
    | UserTurn
    | SpeechStart
    | ShortPause
    | TurnEnd
    | Opportunity
    | Interruption
    | Backchannel
    | Verdict
    | DialsChanged
    | RuleCalibration
    | ErrorEvent
    | EndEvent
    | AgentYield
    | LineEvent
    | CallerSound
)
KnownEvent = Annotated[_KnownUnion, Field(discriminator="type")]
Event = _KnownUnion | UnknownEvent
EVENT_CLASSES: tuple[type[_Event], ...] = get_args(_KnownUnion)
"""The event table: every known event model, in one place. Readers (the fold, the import,
the live view, the gallery) dispatch on these classes, never on the ``type`` text."""


def type_name(cls: type[_Event]) -> str:
    """The ``type`` an event model writes to the log (its ``type`` Literal default): the
    only place an event's type becomes text."""
    return str(cls.model_fields["type"].default)


EVENT_TYPES: dict[str, type[_Event]] = {type_name(m): m for m in EVENT_CLASSES}
"""The log's ``type`` text → its model (reading a log is the one place it is looked up)."""
KNOWN_TYPES = frozenset(EVENT_TYPES)
_KNOWN = TypeAdapter(KnownEvent)


LAG_LIMIT_S = 0.032
"""One frame: a call whose p99 frame lag exceeds it is flagged as lagged."""


def lagged(end: EndEvent | None, limit_s: float = LAG_LIMIT_S) -> bool:
    """The call's frame lag exceeded one frame (p99): its timings are not trusted."""
    lag = end.frame_lag if end is not None else None
    return lag is not None and lag.p99_s > limit_s


def parse_event(data: dict[str, Any]) -> Event:
    """Validate one event line's object. Raises pydantic's ValidationError. Strict:
    a known field of the wrong type (``true`` for a time, ``5`` for a text) is an
    error, never silently coerced. A ``type`` that is not a string (a list, an object)
    is an error too: it is checked before it is looked up, since a list is unhashable."""
    kind = data.get("type")
    if isinstance(kind, str) and kind in KNOWN_TYPES:
        event: Event = _KNOWN.validate_python(data, strict=True)
        return event
    return UnknownEvent.model_validate(data, strict=True)


__all__ = ["EVENT_CLASSES", "EVENT_TYPES", "KNOWN_TYPES", "ValidationError", "type_name"]
