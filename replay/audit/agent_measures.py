"""Agent-side measures of a call to the tester's own (black-box) voice agent.

When cutin calls an agent over audio (``agent.kind`` ``twilio`` or ``realtime`` in the
header), the agent decides for itself when to stop talking, and how it behaves is the
finding. Per call, from the loaded :class:`~replay.model.Trial` (the
``agent_yield`` inline events and the agent turns' logged measures, see
:mod:`replay.cutin_log.session_import`):

* **yields** after an interruption (τ-Voice's R_Y, ``yield_rate``): ``agent_yield``
  events with ``after: "interruption"`` are the denominator (``yield_total``), those
  with ``yielded`` the numerator (``yields``): the agent fell silent (a silence that
  grew into a 500 ms turn end) within 2.0 s of the caller's audio onset;
* **yield latency** (τ-Voice's L_Y, ``yield_latency_mean``, plus ``_median`` and
  ``_p95``): ``latency_s`` (where the agent's audio stopped − the caller's onset, ≥ 0)
  of the yielded ones;
* **false yields** after a backchannel: ``agent_yield`` events with ``after:
  "backchannel"`` are the denominator (``backchannel_total``), ``yielded`` ones (it
  stopped within 1.0 s of the token's onset) the numerator (``false_yields``);
  ``false_yield_rate`` = false_yields / backchannel_total and
  ``selectivity_backchannel`` = 1 − that (τ-Voice's S_BC, computed the way it is);
* an act whose ``agent_yield`` is ``already_silent`` (or, in an older log, "yielded"
  with ``stop_t`` before ``onset_t``: the agent's sound had ended before the caller's
  onset) is in neither count, only in ``already_silent``: the agent had finished on its
  own, so it answered no act (τ-Voice scores only acts during agent speech);
* **response latency** (τ-Voice's L_R, ``response_latency_mean``, plus ``_median``):
  ``response_latency_s`` of the agent turns that answer a caller turn or barge-in
  (``response_to`` turn | interruption; an older log's latency counts as a turn's):
  the end of the caller's sound on the line → the agent's audio onset, when the agent
  was silent at that end; ``responses`` is how many. A turn that answers a
  backchannel (after a false yield) is timed from the backchannel:
  ``backchannel_response_latency_mean``, apart, as τ-Voice leaves backchannels out;
* **response rate** (τ-Voice's R_R, ``response_rate``): ``responses`` over
  ``response_total`` = responses + ``no_responses`` (``line`` events of kind
  ``no_response``: no agent turn within the 5 s response window of the caller's end,
  or the caller spoke again first);
* **agent interruption rate** (τ-Voice's I_A, ``agent_interruption_rate``): agent turns
  that started inside the caller's turn (``over_caller``: in its audio or a pause in
  it) per ``response_total``; ``agent_interruptions`` counts them;
* **dead air** (τ2's interaction facts): the time no turn holds the floor (an agent
  turn from its onset to the end of its last sound, a caller turn from its onset to
  the end of its sound on the line), over the call: ``dead_air_s``,
  ``dead_air_fraction`` (of ``duration_s``), ``dead_air_max_gap_s`` and
  ``dead_air_long_gaps`` (gaps longer than 3.0 s);
* **talk-over**: ``talk_over_s`` = the sum over agent turns of the seconds the agent
  spoke while the caller's audio was playing; ``talk_over_per_turn_s`` divides by the
  agent turns that logged it (``talk_over_turns``);
* **pause profile**: ``pauses_per_min`` = 60 × ``short_pauses`` / ``speech_s``, where
  ``speech_s`` sums the agent turns' VAD speech seconds (``speech_s`` of
  ``agent_turn_end``) and ``short_pauses`` counts that turns' mid-turn pauses of at
  least 200 ms (``short_pause`` events that did not grow into a turn end): the
  opportunities the rules get.

Every rate or mean with a zero denominator is None, never NaN.

**Per condition** (the audit's ``--by`` grouping) the same quantities pool the calls'
counts and sums (a pooled mean is the sum of the pooled latencies over their number,
as τ-Voice pools events), with 95% bootstrap intervals that resample whole calls
(:func:`replay.audit.stats.resample_counts`, :func:`replay.audit.stats.percentile_interval`);
medians and p95 pool the events and have no interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from replay.audit.agent_floor import LONG_GAP_S, already_silent, dead_air, floor_spans, number
from replay.audit.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    _safe_divide,
    percentile_interval,
    ratio,
    resample_counts,
)
from sessions.log.models import AgentYield, ShortPause
from sessions.plan import BLACK_BOX_KINDS

if TYPE_CHECKING:
    from replay.model import Trial
    from sessions.log import Session

ANSWERED_KINDS = ("turn", "interruption")
SELECTIVITY_KINDS = ("vocal_tic", "non_directed")
"""Caller sounds not meant as a turn (``caller_sound``), scored as τ-Voice's S_VT, S_ND."""
"""What a response answers for the response rate (a backchannel is timed, not owed)."""

Row = dict[str, Any]


def is_black_box(trial: Trial) -> bool:
    """A call to a black-box agent: its header says so, or it measured the agent's yields."""
    agent = trial.header.get("agent")
    kind = agent.get("kind") if isinstance(agent, Mapping) else None
    if kind in BLACK_BOX_KINDS:
        return True
    return any(isinstance(e.source, AgentYield) for t in trial.agent_turns() for e in t.events)


@dataclass(slots=True)
class AgentCall:
    """One call's raw counts and values (everything the measures are computed from)."""

    id: str
    source: str = ""
    agent_kind: str | None = None
    yield_total: int = 0
    yields: int = 0
    yield_latencies: list[float] = field(default_factory=list)
    backchannel_total: int = 0
    false_yields: int = 0
    response_latencies: list[float] = field(default_factory=list)
    backchannel_response_latencies: list[float] = field(default_factory=list)
    already_silent: int = 0
    no_responses: int = 0
    agent_interruptions: int = 0
    dead_air_gaps: list[float] = field(default_factory=list)
    selectivity: dict[str, list[int]] = field(default_factory=dict)
    """Vocal tics and side talk: kind → [events, errors] (it stopped or answered)."""
    duration_s: float = 0.0
    agent_turns: int = 0
    talk_over_turns: int = 0
    talk_over_s: float = 0.0
    speech_turns: int = 0
    speech_s: float = 0.0
    short_pauses: int = 0

    def sums(self) -> list[float]:
        """The per-call column of the bootstrap matrix (order: :data:`_COLUMNS`)."""
        return [
            self.yields,
            self.yield_total,
            math.fsum(self.yield_latencies),
            len(self.yield_latencies),
            self.false_yields,
            self.backchannel_total,
            math.fsum(self.response_latencies),
            len(self.response_latencies),
            self.talk_over_s,
            self.talk_over_turns,
            self.short_pauses,
            self.speech_s,
            len(self.response_latencies) + self.no_responses,
            self.agent_interruptions,
            math.fsum(self.dead_air_gaps),
            self.duration_s,
        ]


_COLUMNS = (
    "yields",
    "yield_total",
    "yield_latency_sum",
    "yield_latency_n",
    "false_yields",
    "backchannel_total",
    "response_latency_sum",
    "response_latency_n",
    "talk_over_s",
    "talk_over_turns",
    "short_pauses",
    "speech_s",
    "response_total",
    "agent_interruptions",
    "dead_air_s",
    "duration_s",
)
SUM_COLUMN = {name: i for i, name in enumerate(_COLUMNS)}

# measure -> (numerator column, denominator column, scale)
RATIOS: dict[str, tuple[str, str, float]] = {
    "yield_rate": ("yields", "yield_total", 1.0),
    "yield_latency_mean": ("yield_latency_sum", "yield_latency_n", 1.0),
    "false_yield_rate": ("false_yields", "backchannel_total", 1.0),
    "response_latency_mean": ("response_latency_sum", "response_latency_n", 1.0),
    "talk_over_per_turn_s": ("talk_over_s", "talk_over_turns", 1.0),
    "pauses_per_min": ("short_pauses", "speech_s", 60.0),
    "response_rate": ("response_latency_n", "response_total", 1.0),
    "agent_interruption_rate": ("agent_interruptions", "response_total", 1.0),
    "dead_air_fraction": ("dead_air_s", "duration_s", 1.0),
}
MEASURES = (*RATIOS, "selectivity_backchannel")
"""The measures that carry a bootstrap interval (``<name>_ci``) per condition."""


def call_of_trial(trial: Trial) -> AgentCall | None:
    """The raw counts of one call to a black-box agent (None for any other call)."""
    if not is_black_box(trial):
        return None
    agent = trial.header.get("agent")
    call = AgentCall(
        id=trial.id,
        source=trial.source,
        agent_kind=str(agent.get("kind")) if isinstance(agent, Mapping) else None,
    )
    for turn in trial.agent_turns():
        call.agent_turns += 1
        latency = number(turn.meta.get("response_latency_s"))
        answers = turn.meta.get("response_to")
        if latency is not None and answers == "backchannel":
            call.backchannel_response_latencies.append(latency)
        elif latency is not None:
            call.response_latencies.append(latency)
        call.agent_interruptions += turn.meta.get("over_caller") is True
        if turn.talk_over_s is not None:
            call.talk_over_turns += 1
            call.talk_over_s += turn.talk_over_s
        speech = number(turn.meta.get("speech_s"))
        if speech is not None:
            call.speech_turns += 1
            call.speech_s += speech
        for e in turn.events:
            if isinstance(e.source, ShortPause) and speech is not None:
                mid_turn = not e.data.get("became_turn_end") and e.data.get("turn") is not None
                call.short_pauses += bool(mid_turn)
            elif isinstance(e.source, AgentYield):
                yielded = e.data.get("yielded") is True
                if already_silent(e.data):
                    call.already_silent += 1
                elif e.data.get("after") == "backchannel":
                    call.backchannel_total += 1
                    call.false_yields += yielded
                elif e.data.get("after") == "interruption":
                    call.yield_total += 1
                    call.yields += yielded
                    lat = number(e.data.get("latency_s"))
                    if yielded and lat is not None:
                        call.yield_latencies.append(lat)
    for turn in trial.turns:  # a tic in the agent's silence sits in any turn
        for e in turn.events:
            kind = e.data.get("after") if isinstance(e.source, AgentYield) else None
            if kind in SELECTIVITY_KINDS and not already_silent(e.data):
                error = e.data.get("yielded") is True or e.data.get("responded") is True
                totals = call.selectivity.setdefault(str(kind), [0, 0])
                totals[0] += 1
                totals[1] += error
    call.talk_over_s = round(call.talk_over_s, 6)
    call.speech_s = round(call.speech_s, 6)
    missed = trial.meta.get("no_responses")
    call.no_responses = len(missed) if isinstance(missed, list) else 0
    call.duration_s, call.dead_air_gaps = dead_air(trial)
    return call


def call_of_session(session: Session) -> AgentCall | None:
    """:func:`call_of_trial` of a loaded session log, building its trial only when the
    call is to a black-box agent (the audit's hook)."""
    kind = session.header.agent.kind
    if kind not in BLACK_BOX_KINDS and not any(isinstance(e, AgentYield) for e in session.events):
        return None
    from replay.cutin_log.session_import import trial_from_session

    return call_of_trial(trial_from_session(session))


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(np.asarray(values, dtype=np.float64))) if values else None


def _p95(values: Sequence[float]) -> float | None:
    # numpy's default (linear) interpolation, as the audit's intervals.
    return float(np.percentile(np.asarray(values, dtype=np.float64), 95.0)) if values else None


def _selectivities(calls: Sequence[AgentCall]) -> Row:
    """τ-Voice's S_VT and S_ND (1 − error rate) with their counts, pooled over calls."""
    out: Row = {}
    for kind in SELECTIVITY_KINDS:
        total = sum(c.selectivity.get(kind, [0, 0])[0] for c in calls)
        errors = sum(c.selectivity.get(kind, [0, 0])[1] for c in calls)
        out[f"{kind}_total"] = total
        out[f"{kind}_errors"] = errors
        out[f"selectivity_{kind}"] = _selectivity(errors, total)
    return out


def _selectivity(false_yields: float, total: float) -> float | None:
    # τ-Voice: selectivity = 1 − error rate (computed this way, as in tau_voice_metrics).
    return 1.0 - false_yields / total if total else None


def pooled_measures(
    sums: Sequence[float],
    yield_latencies: Sequence[float],
    response_latencies: Sequence[float],
    calls: Sequence[AgentCall] = (),
) -> Row:
    s = dict(zip(_COLUMNS, sums, strict=True))
    gaps = [g for c in calls for g in c.dead_air_gaps]
    bc_latencies = [v for c in calls for v in c.backchannel_response_latencies]
    return {
        "yield_total": int(s["yield_total"]),
        "yields": int(s["yields"]),
        "yield_rate": ratio(s["yields"], s["yield_total"]),
        "yield_latency_mean": ratio(s["yield_latency_sum"], s["yield_latency_n"]),
        "yield_latency_median": _median(yield_latencies),
        "yield_latency_p95": _p95(yield_latencies),
        "backchannel_total": int(s["backchannel_total"]),
        "false_yields": int(s["false_yields"]),
        "false_yield_rate": ratio(s["false_yields"], s["backchannel_total"]),
        "selectivity_backchannel": _selectivity(s["false_yields"], s["backchannel_total"]),
        "responses": int(s["response_latency_n"]),
        "no_responses": int(s["response_total"] - s["response_latency_n"]),
        "response_total": int(s["response_total"]),
        "response_rate": ratio(s["response_latency_n"], s["response_total"]),
        "response_latency_mean": ratio(s["response_latency_sum"], s["response_latency_n"]),
        "response_latency_median": _median(response_latencies),
        "backchannel_responses": len(bc_latencies),
        "backchannel_response_latency_mean": (
            math.fsum(bc_latencies) / len(bc_latencies) if bc_latencies else None
        ),
        "agent_interruptions": int(s["agent_interruptions"]),
        "agent_interruption_rate": ratio(s["agent_interruptions"], s["response_total"]),
        "already_silent": sum(c.already_silent for c in calls),
        **_selectivities(calls),
        "duration_s": round(s["duration_s"], 6),
        "dead_air_s": round(s["dead_air_s"], 6),
        "dead_air_fraction": ratio(s["dead_air_s"], s["duration_s"]),
        "dead_air_max_gap_s": max(gaps) if gaps else None,
        "dead_air_long_gaps": sum(1 for g in gaps if g > LONG_GAP_S),
        "talk_over_turns": int(s["talk_over_turns"]),
        "talk_over_s": round(s["talk_over_s"], 6),
        "talk_over_per_turn_s": ratio(s["talk_over_s"], s["talk_over_turns"]),
        "short_pauses": int(s["short_pauses"]),
        "speech_s": round(s["speech_s"], 6),
        "pauses_per_min": ratio(s["short_pauses"], s["speech_s"], 60.0),
    }


def call_row(call: AgentCall) -> Row:
    """One call's measures (field names in the module docstring), JSON-ready."""
    return {
        "id": call.id,
        "source": call.source,
        "agent_kind": call.agent_kind,
        "agent_turns": call.agent_turns,
        **pooled_measures(call.sums(), call.yield_latencies, call.response_latencies, [call]),
    }


def measures_of_trial(trial: Trial) -> Row | None:
    """:func:`call_row` of a black-box call; None for any other call."""
    call = call_of_trial(trial)
    return None if call is None else call_row(call)


def condition_row(
    condition: dict[str, Any],
    calls: Sequence[AgentCall],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Row:
    """The condition's measures pooled over its calls, each ratio with a 95% bootstrap
    interval over calls (``<measure>_ci``; None when the pooled denominator is 0), and
    the per-call rows (``per_call``)."""
    m = np.asarray([c.sums() for c in calls], dtype=np.float64).reshape(len(calls), len(_COLUMNS))
    total = m.sum(axis=0)
    boot = resample_counts(len(calls), resamples, seed).astype(np.float64) @ m
    yield_lat = [v for c in calls for v in c.yield_latencies]
    response_lat = [v for c in calls for v in c.response_latencies]
    row: Row = {
        "condition": condition,
        "calls": len(calls),
        "agent_turns": sum(c.agent_turns for c in calls),
        **pooled_measures([float(v) for v in total], yield_lat, response_lat, calls),
    }
    for name, (num, den, scale) in RATIOS.items():
        defined = bool(total[SUM_COLUMN[den]])
        values = scale * _safe_divide(boot[:, SUM_COLUMN[num]], boot[:, SUM_COLUMN[den]])
        row[f"{name}_ci"] = _interval(values) if defined else None
    fy = row["false_yield_rate_ci"]
    row["selectivity_backchannel_ci"] = None if fy is None else [1.0 - fy[1], 1.0 - fy[0]]
    row["per_call"] = [call_row(c) for c in calls]
    return row


def _interval(values: np.ndarray[Any, np.dtype[np.float64]]) -> list[float] | None:
    ci = percentile_interval(values)
    return None if ci is None else [ci[0], ci[1]]


class _Group(Protocol):
    @property
    def condition(self) -> dict[str, Any]: ...

    @property
    def conversations(self) -> Sequence[Any]: ...


def condition_rows(
    groups: Iterable[_Group],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[Row]:
    """One row per condition that holds a black-box call (the audit's groups, in order);
    an empty list when no call in the input is one."""
    rows: list[Row] = []
    for g in groups:
        calls = [c.agent for c in g.conversations if getattr(c, "agent", None) is not None]
        if calls:
            rows.append(condition_row(g.condition, calls, resamples=resamples, seed=seed))
    return rows


__all__ = [
    "BLACK_BOX_KINDS",
    "MEASURES",
    "AgentCall",
    "call_of_session",
    "call_of_trial",
    "call_row",
    "condition_row",
    "condition_rows",
    "dead_air",
    "floor_spans",
    "is_black_box",
    "measures_of_trial",
]
