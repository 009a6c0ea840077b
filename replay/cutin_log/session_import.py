"""A cutin session log (``cutin.session/1``) → :class:`~replay.model.Trial`.

Agent turns come from ``agent_turn_start`` / ``agent_words`` / ``agent_turn_end``
(an agent turn the log never closed — a crash mid-turn — keeps the words heard so
far and is marked ``meta["incomplete"]``). User turns come from ``user_turn``.
Pauses, opportunities, interruptions, backchannels and errors become inline events
of the turn they name (agent turn index) or, failing that, of the turn in progress.
JudgeVerdict events become verdicts, matched to turns by ``(speaker, turn)``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from replay.model import InlineEvent, InsertedToken, JudgeVerdict, Speaker, Trial, Turn, WordTime
from sessions.log.fold import AgentTurnLog, fold
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    AgentYield,
    Backchannel,
    CallerSound,
    DialsChanged,
    EndEvent,
    ErrorEvent,
    Event,
    Interruption,
    LineEvent,
    Opportunity,
    RuleCalibration,
    ShortPause,
    SpeechStart,
    TurnEnd,
    UnknownEvent,
    UserTurn,
)
from sessions.log.models import Verdict as LogVerdict
from sessions.log.reader import Session


def trial_from_session(session: Session) -> Trial:
    """Build the replay model of one loaded session log."""
    header = session.header
    log = fold(session.events)
    agent = {number: _agent_turn(turn) for number, turn in log.agent.items()}
    user = [_user_turn(e) for e in log.user]
    pending: list[tuple[int | None, InlineEvent]] = []
    for e in log.inline:
        event = _inline(e)
        if event is not None:
            pending.append((getattr(e, "turn", None), event))
    end = log.end
    last_t = log.last_t
    for turn in agent.values():
        if "incomplete" in turn.meta:
            heard = " ".join(w.word for w in turn.words)
            turn.spoken = heard
            if not turn.text:
                turn.text = heard
            turn.unspoken = _rest(turn.text, heard)
            turn.end = turn.words[-1].end if turn.words else turn.start
    turns = sorted(
        [*agent.values(), *user],
        key=lambda t: (t.start if t.start is not None else 0.0, t.speaker == "user"),
    )
    for i, turn in enumerate(turns):
        turn.index = i
    _place_events(turns, agent, pending)
    _describe_interruptions(agent)
    duration = end.t if end is not None else session.duration
    trial = Trial(
        id=header.session_id,
        task_id=header.scenario,
        source=str(session.path) if session.path else "",
        kind="cutin",
        mode="cutin",
        turns=turns,
        header=header.model_dump(mode="json", by_alias=True, exclude_none=True),
        warnings=[f"{session.path}: {w}" for w in session.warnings],
        duration=duration if duration or last_t else None,
    )
    trial.meta["end_reason"] = end.reason if end is not None else None
    # How late the call processed its frames (a lagged call's timings are flagged).
    if end is not None and end.frame_lag is not None:
        trial.meta["frame_lag"] = end.frame_lag.model_dump()
    trial.meta["events"] = len(session.events) + session.unknown  # those read, not kept
    # The one realized count (the live panel's and the audit's), for the reports.
    trial.meta["realized"] = log.realized.snapshot.line()
    snap = log.realized.snapshot  # its counts, for the batch page's realized rates per dial
    trial.meta["realized_counts"] = {
        "agent_turns": snap.agent_turns,
        "opportunities": snap.opportunities,
        "interruptions": snap.interruptions,
        "backchannels": snap.backchannels,
    }
    # Caller turns a black-box agent left unanswered (agent_measures' response rate).
    trial.meta["no_responses"] = [
        {"t": e.t, **e.data}
        for e in log.inline
        if isinstance(e, LineEvent) and e.kind == "no_response"
    ]
    trial.verdicts = [verdict_from_log(v, trial) for v in log.verdicts]
    return trial


def _agent_turn(log: AgentTurnLog) -> Turn:
    turn = Turn(
        index=0,
        speaker="agent",
        number=log.number,
        start=log.first_t,
        end=None,
        text="",
        spoken="",
        meta={"incomplete": True},
    )
    for start in log.starts:
        turn.start = start.t
        if start.text:
            turn.text = start.text
        if start.response_latency_s is not None:
            turn.meta["response_latency_s"] = start.response_latency_s
        if start.response_to is not None:
            turn.meta["response_to"] = start.response_to
        if start.over_caller:  # a black-box agent that started inside the caller's turn
            turn.meta["over_caller"] = True
    for words in log.words:
        turn.words.extend(WordTime(w.word, w.start, w.end, w.p) for w in words.words)
    e = log.end
    if e is not None:
        turn.end = e.t
        turn.text = e.text
        turn.spoken = e.spoken
        turn.unspoken = e.unspoken
        turn.interrupted = e.interrupted
        turn.cut_t = e.cut_t
        turn.cut_word = e.cut_word
        turn.talk_over_s = e.talk_over_s
        for key, value in (("stop_t", e.stop_t), ("speech_s", e.speech_s), ("end_t", e.end_t)):
            if value is not None:  # a black-box agent's turn (agent_measures)
                turn.meta[key] = value
        turn.meta.pop("incomplete", None)
    return turn


def _user_turn(e: UserTurn) -> Turn:
    return Turn(
        index=0,
        speaker="user",
        number=e.turn,
        start=e.t,
        end=e.end_t if e.end_t is not None else e.t,
        text=e.original,
        spoken=e.rendered,
        original=e.original,
        rendered=e.rendered,
        insertions=[InsertedToken(i.index, i.kind, i.token) for i in e.insertions],
        source=e.source,
        meta={"alpha": e.alpha},
    )


def _rest(text: str, heard: str) -> str:
    words = text.split()
    n = len(heard.split())
    return " ".join(words[n:]) if words[:n] == heard.split() else ""


def _inline(e: Event) -> InlineEvent | None:
    build = _INLINE.get(type(e))
    if build is None:  # the turns, the header or the meta already say it (_NOT_INLINE)
        return None
    event = build(e)
    # fields this version does not know stay with the event
    extra = e.model_extra or {}
    event.data.update({k: v for k, v in extra.items() if k not in event.data})
    return event


def _short_pause(e: ShortPause) -> InlineEvent:
    data = {
        "index": e.index,
        "silence_start": e.silence_start,
        "became_turn_end": e.became_turn_end,
        "turn": e.turn,
    }
    return InlineEvent(e.t, e, f"#{e.index}", data)


def _turn_end(e: TurnEnd) -> InlineEvent:
    data = {"silence_start": e.silence_start, "short_pause_index": e.short_pause_index}
    return InlineEvent(e.t, e, "", data)


def _opportunity(e: Opportunity) -> InlineEvent:
    data = {
        "index": e.index,
        "pause_index": e.pause_index,
        "executed": e.executed,
        "mode": e.mode,
        "policy": e.policy,
        "checks": e.checks,
    }
    return InlineEvent(e.t, e, e.decision, data)


def _interruption(e: Interruption) -> InlineEvent:
    data = {"trigger": e.trigger, "cut_word": e.cut_word, "text": e.text}
    return InlineEvent(e.cut_t if e.cut_t is not None else e.t, e, e.trigger, data)


def _backchannel(e: Backchannel) -> InlineEvent:
    data = {"trigger": e.trigger, "words_heard": e.words_heard}
    return InlineEvent(e.t, e, e.token, data)


def _error(e: ErrorEvent) -> InlineEvent:
    return InlineEvent(e.t, e, e.message, {"where": e.where})


def _agent_yield(e: AgentYield) -> InlineEvent:
    # At the caller's onset, beside the interruption or backchannel it answers.
    data = e.model_dump(exclude={"type", "t"})
    data["decided_t"] = e.t
    return InlineEvent(e.onset_t, e, _yield_label(e), data)


_INLINE: dict[type[Event], Callable[[Any], InlineEvent]] = {
    ShortPause: _short_pause,
    TurnEnd: _turn_end,
    Opportunity: _opportunity,
    Interruption: _interruption,
    Backchannel: _backchannel,
    ErrorEvent: _error,
    AgentYield: _agent_yield,
}
"""Event model → the replay model's inline event for it."""

TURN_EVENTS: frozenset[type[Event]] = frozenset(
    {AgentTurnStart, AgentWords, AgentTurnEnd, UserTurn}
)
"""The models that become the trial's turns (through the fold)."""
NOT_INLINE: frozenset[type[Event]] = frozenset(
    {
        SpeechStart,  # the turns' start times say it
        EndEvent,  # the trial's duration and meta["end_reason"]
        LogVerdict,  # the trial's verdicts
        LineEvent,  # meta["no_responses"]; the rest is the line's own chatter
        CallerSound,  # its agent_yield (after = its kind) says what the agent did
        DialsChanged,  # the opportunities and acts carry the dials in force
        RuleCalibration,  # the live panel's; the audit reads the log's own
        UnknownEvent,  # kept only when asked, never drawn
    }
)
"""The models the import takes in otherwise, or leaves out on purpose (named, so that a
new model is a choice; tests/test_event_types.py checks each model is placed)."""


def _yield_label(e: AgentYield) -> str:
    after = {
        "backchannel": "backchannel",
        "vocal_tic": "vocal tic",
        "non_directed": "side talk",
    }.get(e.after, "interruption")
    if e.already_silent:
        return f"agent already silent at the {after}"
    if e.responded is not None:
        return f"{'answered' if e.responded else 'did not answer'} the {after}"
    if not e.yielded:
        return f"kept talking after the {after}"
    stopped = "false yield: stopped" if after != "interruption" else "stopped"
    lat = f" {e.latency_s:.2f} s" if e.latency_s is not None else ""
    return f"{stopped}{lat} after the {after}"


def _place_events(
    turns: list[Turn], agent: dict[int, Turn], pending: list[tuple[int | None, InlineEvent]]
) -> None:
    starts = [t.start if t.start is not None else 0.0 for t in turns]
    for number, event in pending:
        host = agent.get(number) if number is not None else None
        if host is None:
            i = bisect_right(starts, event.t) - 1
            host = turns[max(i, 0)] if turns else None
        if host is not None:
            host.events.append(event)
    for turn in turns:
        turn.events.sort(key=lambda ev: ev.t)


def _describe_interruptions(agent: dict[int, Turn]) -> None:
    """Give each interruption event the agent's reaction: how long it kept talking
    after the cut (the yield latency; the talk-over while the tester speaks). A
    black-box agent's reaction was measured: its ``agent_yield`` at the same onset."""
    for turn in agent.values():
        events = turn.events_of(Interruption)
        cut_by_backchannel = turn.cut_t is not None and any(
            abs(b.t - turn.cut_t) < 1e-6 for b in turn.events_of(Backchannel)
        )
        if not events and turn.interrupted and turn.cut_t is not None and not cut_by_backchannel:
            cut = Interruption(t=turn.cut_t, turn=turn.number, trigger="unknown", cut_t=turn.cut_t)
            event = InlineEvent(turn.cut_t, cut, "unknown", {"trigger": "unknown"})
            turn.events.append(event)
            turn.events.sort(key=lambda ev: ev.t)
            events = [event]
        answers = [
            y
            for y in turn.events_of(AgentYield)
            if isinstance(y.source, AgentYield) and y.source.after == "interruption"
        ]
        for event in events:
            answer = next((y for y in answers if abs(y.t - event.t) < 1e-6), None)
            if answer is not None:  # a black-box agent: what it did, as measured
                stopped = answer.data.get("yielded") is True
                event.data.setdefault("yielded", stopped)
                event.data.setdefault(
                    "yield_latency_s", answer.data.get("latency_s") if stopped else None
                )
                event.data.setdefault("talk_over_s", answer.data.get("talk_over_s"))
            latency = _kept_talking(turn, event.t)
            event.data.setdefault("yielded", latency is not None)
            event.data.setdefault("yield_latency_s", latency)
            event.data.setdefault("talk_over_s", latency)


def _kept_talking(turn: Turn, cut: float) -> float | None:
    """Seconds the agent's audio went on after ``cut``: the logged talk-over, else the
    last word's end, else the turn's end."""
    if turn.talk_over_s is not None and turn.cut_t is not None and abs(turn.cut_t - cut) < 1e-6:
        return max(0.0, turn.talk_over_s)
    if turn.words:
        return max(0.0, max(w.end for w in turn.words) - cut)
    if turn.end is not None:
        return max(0.0, turn.end - cut)
    return None


def verdict_from_log(v: LogVerdict, trial: Trial) -> JudgeVerdict:
    """A log verdict event as a model verdict of ``trial``."""
    index = None
    if v.scope == "turn" and v.turn is not None:
        speaker: Speaker = "user" if v.speaker == "user" else "agent"
        turn = trial.turn_by_number(speaker, v.turn)
        index = turn.index if turn is not None else None
    known = {
        "type",
        "t",
        "judge",
        "scope",
        "turn",
        "speaker",
        "name",
        "label",
        "score",
        "rationale",
        "trial",
    }
    extra = {k: val for k, val in v.model_dump().items() if k not in known}
    return JudgeVerdict(
        judge=v.judge,
        label=v.label,
        name=v.name,
        scope="turn" if index is not None else "call",
        turn=index,
        rationale=v.rationale,
        score=v.score,
        t=v.t,
        extra=extra,
    )


def log_verdict(v: JudgeVerdict, trial: Trial) -> LogVerdict:
    """The log event for a model verdict (turn scope names the speaker's own turn number)."""
    turn = trial.turns[v.turn] if v.scope == "turn" and v.turn is not None else None
    t = v.t if v.t is not None else (turn.start if turn and turn.start is not None else None)
    if t is None:
        t = trial.duration or 0.0
    fields: dict[str, Any] = dict(v.extra)
    fields.update(
        t=t,
        judge=v.judge,
        scope="turn" if turn is not None else "call",
        turn=turn.number if turn is not None else None,
        speaker=turn.speaker if turn is not None else None,
        name=v.name,
        label=v.label,
        score=v.score,
        rationale=v.rationale,
    )
    return LogVerdict(**fields)


__all__ = ["log_verdict", "trial_from_session", "verdict_from_log"]
