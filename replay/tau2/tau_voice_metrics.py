"""τ-Voice's interaction metrics, computed from full-duplex tick timelines.

Definitions follow tau2-bench's ``docs/interaction-metrics.md`` (the τ-Voice
leaderboard panel); the output uses that panel's field names exactly:

* **response** (L_R, R_R): for each user segment that is not a backchannel and
  ends with the agent silent, the agent *responds* if its next segment starts no
  later than the user's next such segment; the gap is the response latency.
  Otherwise (the user spoke again first) it is a *no response*. A final segment
  followed by nobody is not scored.
* **yield** (L_Y, R_Y): a user segment starting during agent speech that is not a
  backchannel, vocal tic or aside is a real interruption; the agent yields if it
  falls silent within 2.0 s (latency = ticks until silence × tick length).
* **agent interruptions** (I_A): agent segments starting while the user speaks,
  per response-eligible user turn.
* **selectivity** (S_BC, S_VT, S_ND), reported as 1 − error rate:
  a backchannel / vocal tic / aside during agent speech is an error when the agent
  stops within 1.0 s; a tic / aside while the agent is silent is an error when the
  agent starts within 2.0 s of its end. Tics and asides injected into silence
  (outside user speech) are scored too: during agent speech only a stop within 1.0 s
  is recorded (as an error); during silence, a start within 2.0 s is an error and
  none a correct event.

The end-of-call artifact tick is dropped first (see :mod:`replay.tau2.ticks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from replay.model import TickTimeline
from replay.tau2.ticks import (
    NON_DIRECTED,
    VOCAL_TIC,
    Segment,
    out_of_turn_effects,
    overlaps,
    segments,
)

METRIC_FIELDS = (
    "response_latency_mean",
    "yield_latency_mean",
    "response_rate",
    "yield_rate",
    "agent_interruption_rate",
    "selectivity_backchannel",
    "selectivity_vocal_tic",
    "selectivity_non_directed",
)
COUNT_FIELDS = (
    "n_simulations",
    "response_total",
    "yield_total",
    "backchannel_total",
    "vocal_tic_total",
    "non_directed_total",
    "agent_interrupts_count",
)


@dataclass(frozen=True, slots=True)
class Windows:
    """Detection windows in seconds (τ-Voice's defaults)."""

    no_yield_s: float = 2.0
    backchannel_yield_s: float = 1.0
    vocal_tic_yield_s: float = 1.0
    non_directed_yield_s: float = 1.0
    vocal_tic_response_s: float = 2.0
    non_directed_response_s: float = 2.0


@dataclass(frozen=True, slots=True)
class VoiceEvent:
    """One scored interaction event."""

    category: str
    """response | yield | backchannel | vocal_tic | non_directed | agent_interruption."""
    outcome: str
    """response/no_response, yield/no_yield, <category>_correct/_error, agent_interrupts_user."""
    tick: int
    t: float
    latency_s: float | None = None

    @property
    def is_error(self) -> bool:
        return self.outcome in ("no_response", "no_yield", "agent_interrupts_user") or (
            self.outcome.endswith("_error")
        )


def _ticks(seconds: float, tick_s: float) -> int:
    return int(seconds / tick_s)


def _response_events(
    user_segs: Sequence[Segment], agent_segs: Sequence[Segment]
) -> list[VoiceEvent]:
    eligible = [s for s in user_segs if not s.is_backchannel and not s.other_at_end]
    agents = sorted(agent_segs, key=lambda s: s.start_tick)
    out: list[VoiceEvent] = []
    for i, seg in enumerate(eligible):
        agent = next((a for a in agents if a.start_tick >= seg.end_tick), None)
        again = next((u for u in eligible[i + 1 :] if u.start_tick >= seg.end_tick), None)
        if agent is not None and (again is None or agent.start_tick <= again.start_tick):
            latency = agent.start_s - seg.end_s
            out.append(VoiceEvent("response", "response", seg.end_tick, seg.end_s, latency))
        elif again is not None:
            out.append(VoiceEvent("response", "no_response", seg.end_tick, seg.end_s))
    return out


def _category(kind: str) -> str:
    return {"interruption": "yield", NON_DIRECTED: "non_directed"}.get(kind, kind)


def events_for(timeline: TickTimeline, windows: Windows | None = None) -> list[VoiceEvent]:
    """All scored events of one simulation, in time order."""
    w = windows or Windows()
    tl = timeline.without_end_artifact()
    dt = tl.tick_s
    user_segs = segments(tl, "user")
    agent_segs = segments(tl, "agent")
    events = _response_events(user_segs, agent_segs)

    yield_windows = {
        "interruption": w.no_yield_s,
        "backchannel": w.backchannel_yield_s,
        VOCAL_TIC: w.vocal_tic_yield_s,
        NON_DIRECTED: w.non_directed_yield_s,
    }
    for o in overlaps(tl, user_segs, agent_segs, yield_windows):
        cat = _category(o.kind)
        if cat == "yield":
            outcome = "yield" if o.yielded else "no_yield"
            latency = o.yield_latency_s if o.yielded else None
        else:
            outcome = f"{cat}_error" if o.yielded else f"{cat}_correct"
            latency = None
        events.append(VoiceEvent(cat, outcome, o.user.start_tick, o.user.start_s, latency))

    for a in agent_segs:
        if a.other_at_start:
            events.append(
                VoiceEvent("agent_interruption", "agent_interrupts_user", a.start_tick, a.start_s)
            )

    # Tics and asides inside user speech that began while the agent was silent.
    for seg in user_segs:
        if seg.other_at_start or not (seg.has_vocal_tic or seg.has_non_directed):
            continue
        cat = "vocal_tic" if seg.has_vocal_tic else "non_directed"
        window = _ticks(
            w.vocal_tic_response_s if seg.has_vocal_tic else w.non_directed_response_s, dt
        )
        responder = next(
            (a for a in agent_segs if seg.start_tick <= a.start_tick <= seg.end_tick + window), None
        )
        if responder is not None:
            events.append(VoiceEvent(cat, f"{cat}_error", responder.start_tick, responder.start_s))
        else:
            events.append(VoiceEvent(cat, f"{cat}_correct", seg.start_tick, seg.start_s))

    # Tics and asides injected while the user was not speaking.
    for span in out_of_turn_effects(tl):
        if span.kind not in (VOCAL_TIC, NON_DIRECTED):
            continue
        cat = "vocal_tic" if span.kind == VOCAL_TIC else "non_directed"
        tick = span.start_tick
        speaking = next((a for a in agent_segs if a.start_tick <= tick < a.end_tick), None)
        if speaking is not None:
            yield_s = w.vocal_tic_yield_s if span.kind == VOCAL_TIC else w.non_directed_yield_s
            after = (speaking.end_tick - tick) * dt
            if after <= yield_s:
                events.append(VoiceEvent(cat, f"{cat}_error", tick, span.start_s, after))
            continue
        window = _ticks(
            w.vocal_tic_response_s if span.kind == VOCAL_TIC else w.non_directed_response_s, dt
        )
        responder = next(
            (a for a in agent_segs if tick <= a.start_tick <= span.end_tick + window), None
        )
        if responder is not None:
            events.append(VoiceEvent(cat, f"{cat}_error", responder.start_tick, responder.start_s))
        else:
            events.append(VoiceEvent(cat, f"{cat}_correct", tick, span.start_s))

    events.sort(key=lambda e: e.t)
    return events


def summarize(events: Iterable[VoiceEvent], *, n_simulations: int) -> dict[str, Any]:
    """The panel (τ-Voice field names) from events of one or more simulations.
    Rates with an empty denominator are ``None``."""
    counts: dict[str, int] = {}
    latencies: dict[str, list[float]] = {"response": [], "yield": []}
    for e in events:
        counts[e.outcome] = counts.get(e.outcome, 0) + 1
        if e.outcome in latencies and e.latency_s is not None:
            latencies[e.outcome].append(e.latency_s)

    def n(outcome: str) -> int:
        return counts.get(outcome, 0)

    def mean(values: list[float]) -> float | None:
        if not values:
            return None
        # numpy's pairwise summation, as in the pandas-based original pipeline: the
        # published means are reproduced to the last bit (event order = call order,
        # then time within a call).
        import numpy as np

        return float(np.mean(np.asarray(values, dtype=np.float64)))

    def rate(num: int, den: int) -> float | None:
        return num / den if den else None

    def correct_rate(cat: str) -> tuple[float | None, int]:
        total = n(f"{cat}_correct") + n(f"{cat}_error")
        # The panel defines selectivity as 1 − error rate; computed that way, not
        # as correct/total, so values match τ-Voice's published numbers bit for bit.
        return (1.0 - n(f"{cat}_error") / total if total else None), total

    response_total = n("response") + n("no_response")
    yield_total = n("yield") + n("no_yield")
    s_bc, bc_total = correct_rate("backchannel")
    s_vt, vt_total = correct_rate("vocal_tic")
    s_nd, nd_total = correct_rate("non_directed")
    return {
        "response_latency_mean": mean(latencies["response"]),
        "yield_latency_mean": mean(latencies["yield"]),
        "response_rate": rate(n("response"), response_total),
        "yield_rate": rate(n("yield"), yield_total),
        "agent_interruption_rate": rate(n("agent_interrupts_user"), response_total),
        "selectivity_backchannel": s_bc,
        "selectivity_vocal_tic": s_vt,
        "selectivity_non_directed": s_nd,
        "counts": {
            "n_simulations": n_simulations,
            "response_total": response_total,
            "yield_total": yield_total,
            "backchannel_total": bc_total,
            "vocal_tic_total": vt_total,
            "non_directed_total": nd_total,
            "agent_interrupts_count": n("agent_interrupts_user"),
        },
    }


def metrics_for_timelines(
    timelines: Sequence[TickTimeline], windows: Windows | None = None
) -> dict[str, Any] | None:
    """The panel over several simulations (events pooled), or None without any."""
    if not timelines:
        return None
    pooled: list[VoiceEvent] = []
    for tl in timelines:
        pooled.extend(events_for(tl, windows))
    return summarize(pooled, n_simulations=len(timelines))


__all__ = [
    "COUNT_FIELDS",
    "METRIC_FIELDS",
    "VoiceEvent",
    "Windows",
    "events_for",
    "metrics_for_timelines",
    "summarize",
]
