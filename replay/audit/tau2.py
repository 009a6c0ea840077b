"""τ-Voice's realized turn-taking, counted from a full-duplex τ2 tick timeline.

τ-Voice decides interruptions and backchannels with two LLM classifiers, consulted
together on a fixed schedule. Its user simulator (τ2-bench ``basic_turn_taking_policy``
with ``listener_reaction_check_interval``) consults them on a tick when all hold:

* the user's tick counter is a multiple of the interval (``interruption_check_
  interval_seconds`` / tick = 2.0 s / 0.2 s = 10 ticks). The counter is 1 on tick 0
  and goes up by one per tick, so tick ``k`` qualifies when ``(k + 1) % 10 == 0``;
* the agent chunk the user just received — the agent's chunk of tick ``k - 1``,
  since each side hears the other's previous chunk — contains speech;
* the user is not talking and not waiting on a tool: its action on tick ``k`` is
  one of ``wait``, ``generate_message``, ``backchannel`` (while it talks the action
  is ``keep_talking``/``stop_talking``; while it waits for a tool there is none).

One consultation is one *opportunity* (the method's definition for τ-Voice). A
consultation that returns ``generate_message`` is an interruption (the interrupt
classifier said yes; with the agent speaking, the silence rule cannot fire), one
that returns ``backchannel`` is a backchannel. A ``backchannel`` action off the
schedule would mean this reading is wrong; it is reported as a warning.

The timeline is read as :mod:`replay.tau2.ticks` reads it, with τ2's end-of-call
``###STOP###`` tick removed, and agent turns are that module's turns (agent speech
segments joined across short silences). An action's position is its consultation's
1-based place among the consultations of the same agent turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from replay.audit.counter import count
from replay.audit.sessions import Conversation

if TYPE_CHECKING:
    from replay.model import TickTimeline, Trial

CHECK_INTERVAL_S = 2.0
"""τ-Voice's ``interruption_check_interval_seconds`` in the published runs."""
LISTENING = frozenset({"wait", "generate_message", "backchannel"})


@dataclass(frozen=True, slots=True)
class Consultation:
    """One classifier consultation: the tick, what came of it, and where it fell."""

    tick: int
    action: str
    agent_turn: int | None
    """Index among the trial's agent turns (None if no turn holds the speech tick)."""
    position: int
    """1-based among the consultations of that agent turn."""


def check_interval_ticks(tick_s: float, interval_s: float = CHECK_INTERVAL_S) -> int:
    """Ticks between consultations (10 at τ-Voice's 0.2 s ticks)."""
    return max(1, round(interval_s / tick_s))


def consultations(
    timeline: TickTimeline,
    agent_spans: list[tuple[int, int]],
    *,
    interval_s: float = CHECK_INTERVAL_S,
) -> list[Consultation]:
    """Every consultation of one simulation (rules in the module docstring).
    ``agent_spans`` are the agent turns' ``[tick_start, tick_end)`` in order."""
    tl = timeline.without_end_artifact()
    every = check_interval_ticks(tl.tick_s, interval_s)
    out: list[Consultation] = []
    seen: dict[int | None, int] = {}
    span = 0
    for k in range(1, len(tl)):
        if (k + 1) % every or not tl.agent_speech[k - 1] or tl.user_action[k] not in LISTENING:
            continue
        while span < len(agent_spans) and agent_spans[span][1] <= k - 1:
            span += 1
        turn = span if span < len(agent_spans) and agent_spans[span][0] <= k - 1 else None
        seen[turn] = seen.get(turn, 0) + 1
        out.append(Consultation(k, str(tl.user_action[k]), turn, seen[turn]))
    return out


def tally_ticks(conv: Conversation, trial: Trial) -> None:
    """Fill ``conv``'s turn-taking tally from ``trial``'s ticks."""
    assert trial.ticks is not None
    agent = list(trial.agent_turns())
    spans = [(int(t.meta["tick_start"]), int(t.meta["tick_end"])) for t in agent]
    found = consultations(trial.ticks, spans)
    conv.turn_taking = True
    conv.opportunity_unit = "consultation"
    conv.agent_turns = len(agent)
    conv.opportunities = len(found)
    ints = [0] * len(agent)
    bcs = [0] * len(agent)
    for c in found:
        if c.action == "generate_message":
            behaviour, per_turn = conv.interruptions, ints
        elif c.action == "backchannel":
            behaviour, per_turn = conv.backchannels, bcs
        else:
            continue
        behaviour.actions += 1
        behaviour.auto_events += 1
        behaviour.positions.append(c.position)
        if c.agent_turn is not None:
            per_turn[c.agent_turn] += 1
    conv.interruptions.opportunities = conv.backchannels.opportunities = len(found)
    conv.interruptions.per_agent_turn = ints
    conv.backchannels.per_agent_turn = bcs
    tl = trial.ticks.without_end_artifact()
    on_schedule = {c.tick for c in found}
    stray = [k for k, a in enumerate(tl.user_action) if a == "backchannel" and k not in on_schedule]
    if stray:
        conv.warnings.append(
            f"{trial.id}: {len(stray)} backchannel(s) off τ-Voice's consultation schedule "
            f"(ticks {', '.join(map(str, stray[:5]))}); not counted"
        )


# ---- one τ2 trial as an audit conversation ------------------------------------------


def tau2_header(trial: Trial) -> dict[str, Any]:
    """A header-shaped view of a τ2 trial, so ``--by`` fields resolve the same way.

    The policy names who decides turn-taking: ``tau-voice`` (LLM classifiers on a
    schedule) for full-duplex runs, ``tau2-half-duplex`` otherwise. τ2 has no dials,
    so ``alpha``/``beta``/``gamma`` are absent."""
    return {
        "source": "tau2",
        "session_id": trial.id,
        "scenario": trial.task_id,
        "policy": "tau-voice" if trial.ticks is not None else "tau2-half-duplex",
        "agent": {"kind": "tau2", "model": trial.meta.get("agent_llm")},
        "user": {"model": trial.meta.get("user_llm")},
        "domain": trial.meta.get("domain"),
        "mode": trial.mode,
        "tendencies": {},
        "trial": trial.meta.get("trial"),
        "effects": _tau2_effects(trial),
    }


def _tau2_effects(trial: Trial) -> dict[str, Any] | None:
    """Configured and realized speech effects (:mod:`replay.audit.effects`); None
    for a run with neither (a text run)."""
    from replay.tau2.effects import configured, realized

    conf = configured(trial.meta.get("speech_environment"))
    real = realized(trial)
    if not conf and not real:
        return None
    minutes = (trial.duration or 0.0) / 60
    return {"configured": conf, "realized": real, "minutes": minutes}


def from_trial(trial: Trial) -> Conversation:
    """One τ2 simulation → one conversation: user-turn text (when the file has it)
    for disfluency, and for full-duplex runs the classifier consultations."""
    conv = Conversation(
        id=trial.id,
        source=trial.source,
        kind="tau2",
        header=tau2_header(trial),
    )
    for turn in trial.user_turns():
        # The importer took control tokens out (and the counter never hears them).
        text = (turn.spoken or turn.text or "").strip()
        if text:
            conv.turns.append(count(text))
    if trial.ticks is not None:
        tally_ticks(conv, trial)
    return conv


__all__ = [
    "CHECK_INTERVAL_S",
    "Consultation",
    "check_interval_ticks",
    "consultations",
    "from_trial",
    "tally_ticks",
    "tau2_header",
]
