"""Observations for an audit: one :class:`Conversation` per call, whatever its source.

Three sources, each read without I/O here (the caller loads files):

**cutin session logs** (:func:`from_session`), counted as the method requires:

* *user turns*: every ``user_turn`` event; disfluency is counted by
  :func:`replay.audit.counter.count` on ``rendered`` (what was spoken), never on the
  metadata;
* *agent turns*: ``agent_turn_start`` events;
* *opportunities*: ``opportunity`` events whose ``mode`` is not ``shadow``, except
  those whose pause later grew into a turn end (``ShortPause.became_turn_end`` as
  :func:`sessions.log.read_session` marks it, or a ``turn_end`` naming the pause).
  An *executed* opportunity always counts, even if its pause then grew into a turn
  end: the interruption itself is what ended the turn. An opportunity without a
  pause (a polling policy's consultation) cannot grow into a turn end;
* *actions*: executed opportunities, by decision (``INTERRUPT`` → interruptions,
  ``BACKCHANNEL`` → backchannels). ``interruption``/``backchannel`` events with
  ``trigger: manual`` are counted apart (``manual``), and the ``auto`` events are
  kept as a cross-check (an action delayed by a policy's latency may never happen);
* *where an action lands*: the 1-based position of its opportunity among the
  counted opportunities of the same agent turn (1 = the turn's first available
  pause);
* *shadow* opportunities (``mode: shadow``) are tallied per policy with the same
  turn-end exclusion; their "actions" are the decisions they would have made;
* *pause events*: every ``short_pause`` (``pause_events``). They are no clean
  negative control: a cut shortens the agent's turn and takes its later pauses
  with it, so they fall as β rises;
* *the negative control* is measured where no action can move it: in each agent
  turn, up to its first action (automatic or manual interruption or backchannel;
  the whole turn when there is none), the agent's 200 ms silences (``short_pause``
  events at or before the action, the one that ends the turn included) and the
  seconds of agent speech (the logged word timings, clipped at the action).
  ``pre_action_pauses / pre_action_speech_s * 60`` is pauses per minute of agent
  speech before any action. Every window ends on a silence that is counted (the
  pause acted at, or the turn's own end), so a window cut short by an action and a
  whole turn measure the same thing: speech stretches per minute. (Counting only
  mid-turn pauses would not: a whole turn ends on an uncounted stretch, a cut
  window on a counted pause, and the rate would rise with β by construction.);
* *the session* a call is (:func:`pair_key`), so paired tests pair the same session
  under two conditions; the key names the agent (its kind, name and model), so a
  scripted call never pairs with a call to a black-box agent;
* *the dials in force* (:mod:`replay.audit.spans`): a call whose dials changed
  mid-call is *mixed*, left out of the condition tables and listed span by span;
* *each user turn's source* (``source`` as logged: typed, mic, scenario, simulator,
  interruption; a ``scenario`` turn of a batch run with ``--user llm`` is the LLM
  caller's, as older simulated calls logged it), so disfluency can be read per source;
* *the agent's rhythm*: its words and seconds of speech, for the likely cause of a
  moved negative control;
* a call run with ``--transcribe off`` (``speech.transcribe`` in its header) logged no
  agent words: its word-based counts (the negative control's and the opening control's
  seconds of speech, the agent's words) are None, and the report says why
  (:func:`untranscribed_note`).

**τ2 trials**: :func:`replay.audit.tau2.from_trial`.

**Plain text**: :func:`replay.audit.texts.from_texts`, user turns only, injected at each α.

Condition fields come from the header (:func:`condition_of`): ``alpha``, ``beta``,
``gamma`` (``tendencies.*``), ``policy``, ``model`` and ``agent_model``
(``agent.model``), ``user_model`` (``user.model``: the user simulator's, for τ2
trials ``info.user_info.llm``), ``scenario``,
or any dotted header path (``speech.tts``, ``batch.user``, ``seeds.call``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replay.audit.counter import TurnCounts, count
from replay.audit.provenance import SOURCES, agent_identity, agent_label, lookup, turn_source
from replay.audit.spans import Span, dial_spans
from sessions.log.fold import CallLog, fold
from sessions.log.realized import BACKCHANNEL, INTERRUPT

if TYPE_CHECKING:
    from replay.audit.agent_measures import AgentCall
    from sessions.log import Session

ALIASES: dict[str, str] = {
    "alpha": "tendencies.alpha",
    "beta": "tendencies.beta",
    "gamma": "tendencies.gamma",
    "policy": "policy",
    "model": "agent.model",
    "agent_model": "agent.model",
    "user_model": "user.model",
    "scenario": "scenario",
    "agent_kind": "agent.kind",
    "agent": "agent.name",
}
DIALS = ("alpha", "beta", "gamma")
DEFAULT_BY = ("alpha", "beta", "gamma", "policy", "model")
DEFAULT_DISFLUENCY_BY = ("alpha", "beta", "gamma", "policy", "user_model")
"""Disfluency is the user simulator's behaviour: by default its table groups by the
user simulator's model, not the agent's (``model`` = ``agent_model``)."""


@dataclass(slots=True)
class Behaviour:
    """One behaviour's tally in one conversation (or one shadow policy's)."""

    opportunities: int = 0
    actions: int = 0
    manual: int = 0
    auto_events: int = 0
    positions: list[int] = field(default_factory=list)
    """Per action: its opportunity's 1-based position within the agent turn."""
    per_agent_turn: list[int] = field(default_factory=list)
    """Actions in each agent turn, in turn order (for the trend test)."""


@dataclass(slots=True)
class Shadow:
    """A shadow policy's would-be decisions at the same opportunities."""

    policy: str
    opportunities: int = 0
    interruptions: int = 0
    backchannels: int = 0


@dataclass(slots=True)
class Conversation:
    """Everything an audit needs from one call."""

    id: str
    source: str
    kind: str
    """cutin | tau2 | texts."""
    header: dict[str, Any]
    """The header as plain data (τ2 and texts: an equivalent built by the importer)."""
    turns: list[TurnCounts] = field(default_factory=list)
    """User turns, in order, as the counter read them."""
    turn_taking: bool = False
    """Whether the source records turn-taking (opportunities, actions, agent turns)."""
    opportunity_unit: str = "pause"
    """pause (a 200 ms mid-turn pause) | consultation (a classifier call on a schedule)."""
    agent_turns: int = 0
    opportunities: int = 0
    interruptions: Behaviour = field(default_factory=Behaviour)
    backchannels: Behaviour = field(default_factory=Behaviour)
    pause_events: int | None = None
    pre_action_pauses: int | None = None
    pre_action_speech_s: float | None = None
    opening_pauses: int | None = None
    opening_speech_s: float | None = None
    shadows: dict[str, Shadow] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    agent: AgentCall | None = None
    """A call to a black-box agent: its agent-side counts (:mod:`replay.audit.agent_measures`)."""
    turn_sources: list[str] = field(default_factory=list)
    """Per user turn (parallel to ``turns``): where its text came from (:data:`SOURCES`)."""
    spans: list[Span] = field(default_factory=list)
    """The call's dial spans (:mod:`replay.audit.spans`); more than one: mixed."""
    agent_words: int | None = None
    """The agent's words said (each once), and their seconds of speech."""
    agent_speech_s: float | None = None
    planned_words: int | None = None
    """The words of the agent's replies as written (before any cut), and how many
    turns that counts: what it meant to say, which no dial moves."""
    planned_turns: int = 0

    @property
    def transcribed(self) -> bool:
        """False for a call run with ``--transcribe off`` (no agent words in its log)."""
        return bool(lookup(self.header, "speech.transcribe") != "off")

    @property
    def mixed(self) -> bool:
        """The dials changed mid-call: the call belongs to no single condition."""
        return len(self.spans) > 1

    @property
    def name(self) -> str:
        """How the audit names the call: its file's name, else its id."""
        return self.source.replace("\\", "/").rsplit("/", 1)[-1] or self.id

    def source_of(self, index: int) -> str:
        """User turn ``index``'s source (the conversation's kind when not logged)."""
        if index < len(self.turn_sources):
            return self.turn_sources[index]
        return {"tau2": "tau2", "texts": "text"}.get(self.kind, "unknown")

    @property
    def scenario(self) -> str | None:
        value = self.header.get("scenario")
        return None if value is None else str(value)

    def dial(self, name: str) -> float | None:
        value = lookup(self.header, ALIASES.get(name, name))
        return float(value) if isinstance(value, int | float) else None

    @property
    def pauses_per_minute_before_action(self) -> float | None:
        """The negative control: mid-turn pauses per minute of agent speech before any
        action in the turn (None without speech)."""
        if self.pre_action_pauses is None or not self.pre_action_speech_s:
            return None
        return 60.0 * self.pre_action_pauses / self.pre_action_speech_s

    @property
    def pauses_per_minute_opening(self) -> float | None:
        """The control no rule can reach: pauses per minute of agent speech in the first
        :data:`OPENING_WORDS` words of every agent turn (None without speech)."""
        if self.opening_pauses is None or not self.opening_speech_s:
            return None
        return 60.0 * self.opening_pauses / self.opening_speech_s

    @property
    def pair_key(self) -> tuple[str, ...] | None:
        return pair_key(self.header)

    @property
    def call_seed(self) -> int | None:
        seed = lookup(self.header, "seeds.seed")
        return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


PAIR_KEY_DOC = "agent · scenario · run · base seed"
"""What a paired test pairs, in words (the session as logged)."""


def pair_key(header: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The session a conversation is, as its header logs it: the same key under two
    conditions means the same session run under each (the paper's pairing).

    * a ``cutin simulate`` call: scenario, run index and the batch's base seed
      (``batch.run``, ``batch.seed``); with ``--paired`` the call seed is the same
      too (:attr:`Conversation.call_seed`), so the timings are identical;
    * any other cutin call: scenario and call seed (``seeds.seed``);
    * a τ2 trial: task and trial number; a ``--texts`` conversation: its position.

    Every key starts with the agent (:func:`agent_identity`): a session only ever pairs
    with the same agent, agent kind and scenario. None when there is no scenario to
    pair on."""
    scenario = header.get("scenario")
    if scenario is None:
        return None
    agent = agent_identity(header)
    batch = header.get("batch")
    if isinstance(batch, Mapping) and batch.get("run") is not None:
        run = (str(batch["run"]), str(batch.get("seed", "")))
        return ("session", *agent, str(scenario), *run)
    source = header.get("source")
    if source == "tau2":
        return ("tau2", *agent, str(scenario), str(header.get("trial")))
    if source == "texts":
        return ("texts", *agent, str(scenario))
    return ("call", *agent, str(scenario), str(lookup(header, "seeds.seed")))


def canonical_field(name: str) -> str:
    """``tendencies.alpha`` → ``alpha``; other names unchanged."""
    name = name.strip()
    for alias, path in ALIASES.items():
        if name == path:
            return alias
    return name


def condition_of(conv: Conversation, fields: Sequence[str]) -> dict[str, Any]:
    """The condition a conversation belongs to: one value per field (None if absent)."""
    out: dict[str, Any] = {}
    for name in fields:
        value = lookup(conv.header, ALIASES.get(name, name))
        if isinstance(value, Mapping | list):
            value = repr(value)
        out[name] = value
    return out


# ---- cutin session logs -----------------------------------------------------------


def from_session(session: Session) -> Conversation:
    """One cutin session log → one conversation (rules in the module docstring; the
    turn-taking counts are :mod:`sessions.log.realized`'s, the live panel's)."""
    header = session.header.model_dump(mode="json", by_alias=True)
    conv = Conversation(
        id=session.header.session_id,
        source=str(session.path) if session.path is not None else "",
        kind="cutin",
        header=header,
        turn_taking=True,
    )
    log = fold(session.events)
    counter = log.realized
    real = counter.snapshot
    conv.turns = [count(e.rendered) for e in log.user]
    conv.turn_sources = [turn_source(e.source, header) for e in log.user]
    conv.spans = dial_spans(header, session.events, counter.counted())
    conv.pause_events = real.pauses
    conv.agent_turns = real.agent_turns
    conv.opportunities = real.opportunities
    for o in counter.counted(shadow=True):
        shadow = conv.shadows.setdefault(o.policy, Shadow(o.policy))
        shadow.opportunities += 1
        shadow.interruptions += o.decision == INTERRUPT
        shadow.backchannels += o.decision == BACKCHANNEL
    ints: dict[int, int] = {}
    bcs: dict[int, int] = {}
    position: dict[int, int] = {}
    for o in counter.counted():
        position[o.turn] = position.get(o.turn, 0) + 1
        if o.executed and o.decision in (INTERRUPT, BACKCHANNEL):
            behaviour, per_turn = (
                (conv.interruptions, ints) if o.decision == INTERRUPT else (conv.backchannels, bcs)
            )
            behaviour.actions += 1
            behaviour.positions.append(position[o.turn])
            per_turn[o.turn] = per_turn.get(o.turn, 0) + 1
    conv.interruptions.manual = real.manual_interruptions
    conv.interruptions.auto_events = real.interruption_events
    conv.backchannels.manual = real.manual_backchannels
    conv.backchannels.auto_events = real.backchannel_events
    conv.interruptions.opportunities = conv.backchannels.opportunities = conv.opportunities
    turns = counter.agent_turn_numbers
    conv.interruptions.per_agent_turn = [ints.get(t, 0) for t in turns]
    conv.backchannels.per_agent_turn = [bcs.get(t, 0) for t in turns]
    _pre_action(conv, log)
    from replay.audit.agent_measures import call_of_session

    conv.agent = call_of_session(session)
    return conv


def _pre_action(conv: Conversation, log: CallLog) -> None:
    """The negative control's counts (module docstring): per agent turn, up to its
    first action, the 200 ms silences and the seconds of agent speech."""
    first_action: dict[int, float] = {}

    def acted(turn: int, t: float) -> None:
        first_action[turn] = min(t, first_action.get(turn, t))

    for o in log.realized.counted():
        if o.executed and o.decision in (INTERRUPT, BACKCHANNEL):
            acted(o.turn, o.t)
    for a in log.actions:
        acted(a.turn, a.t)
    pauses = sum(
        1
        for p in log.pauses
        if p.turn is not None and p.t <= first_action.get(p.turn, float("inf")) + 1e-9
    )
    speech = 0.0
    for turn in log.agent.values():
        cutoff = first_action.get(turn.number, float("inf"))
        seen: set[int] = set()
        for e in turn.words:
            for k, w in enumerate(e.words):
                if e.first_index + k in seen:
                    continue  # a word reported twice counts once
                seen.add(e.first_index + k)
                speech += max(0.0, min(w.end, cutoff) - w.start)
    conv.pre_action_pauses = pauses
    conv.pre_action_speech_s = round(speech, 6)
    words = 0
    total = 0.0
    for turn in log.agent.values():
        said: dict[int, float] = {}
        for e in turn.words:
            for k, w in enumerate(e.words):
                said.setdefault(e.first_index + k, max(0.0, w.end - w.start))
        words += len(said)
        total += sum(said.values())
    conv.agent_words = words
    conv.agent_speech_s = round(total, 6)
    if not conv.transcribed:
        conv.pre_action_pauses = conv.pre_action_speech_s = None
        conv.agent_words = conv.agent_speech_s = None
    planned = [
        t.end.text if t.end is not None else next((s.text for s in t.starts if s.text), None)
        for t in log.agent.values()
    ]
    known = [len(text.split()) for text in planned if text]
    conv.planned_words = sum(known) if known else None
    conv.planned_turns = len(known)
    _opening(conv, log)
    if not conv.transcribed:
        conv.opening_pauses = conv.opening_speech_s = None


def untranscribed_note(convs: Sequence[Conversation]) -> str | None:
    """One line for the calls that logged no agent words (``--transcribe off``)."""
    off = [c for c in convs if c.kind == "cutin" and not c.transcribed]
    if not off:
        return None
    many = len(off) != 1
    return (
        f"{len(off)} call{'s' if many else ''} ran with --transcribe off (no agent words "
        f"logged): left out of the word-based measures (the negative and opening controls' "
        "pauses per minute of agent speech, the agent's words); yields, latencies and "
        "counts keep them"
    )


OPENING_WORDS = 6
"""No rule acts before a turn's 6th word: a backchannel needs 6 words heard, an
interruption 12 (and 1.5 s). So the first six words of every turn are the same window
under every β and γ, where the pre-action window is not (an early backchannel cuts it
to a turn's opening, whose short sentences pause more)."""


def _opening(conv: Conversation, log: CallLog) -> None:
    """Per agent turn, its first :data:`OPENING_WORDS` words: their speech seconds and the
    200 ms silences that begin by the end of the last of them."""
    words: dict[int, dict[int, tuple[float, float]]] = {}
    for turn in log.agent.values():
        for e in turn.words:
            for k, w in enumerate(e.words):
                index = e.first_index + k
                if index < OPENING_WORDS:
                    words.setdefault(turn.number, {}).setdefault(index, (w.start, w.end))
    ends = {turn: max(end for _, end in ws.values()) for turn, ws in words.items()}
    pauses = sum(
        1
        for p in log.pauses
        if p.turn is not None and p.turn in ends and p.silence_start <= ends[p.turn] + 1e-6
    )
    speech = sum(end - start for ws in words.values() for start, end in ws.values())
    conv.opening_pauses = pauses
    conv.opening_speech_s = round(speech, 6)


__all__ = [
    "ALIASES",
    "DEFAULT_BY",
    "DEFAULT_DISFLUENCY_BY",
    "DIALS",
    "PAIR_KEY_DOC",
    "SOURCES",
    "Behaviour",
    "Conversation",
    "Shadow",
    "agent_identity",
    "agent_label",
    "canonical_field",
    "condition_of",
    "from_session",
    "lookup",
    "pair_key",
    "untranscribed_note",
]
