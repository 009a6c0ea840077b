"""One τ2 simulation object → one :class:`~replay.model.Trial`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replay.errors import LoadError
from replay.model import Trial
from replay.tau2.effects import attach_effects
from replay.tau2.messages import parse_time, strip_controls, turns_from_messages
from replay.tau2.tick_turns import analyze
from replay.tau2.ticks import DEFAULT_TICK_S, timeline_from_tau2
from replay.tau2.verdicts import (
    auth_verdict,
    hallucination_verdicts,
    review_verdicts,
    reward_verdicts,
)
from replay.tau2.version import SIMULATION_FIELDS, detect, unknown_keys


def _tick_s(info: Mapping[str, Any]) -> float:
    config = info.get("audio_native_config")
    if isinstance(config, Mapping):
        value = config.get("tick_duration_seconds")
        if isinstance(value, int | float) and value > 0:
            return float(value)
    return DEFAULT_TICK_S


def trial_from_simulation(
    sim: Mapping[str, Any],
    *,
    info: Mapping[str, Any],
    tasks: Mapping[str, Mapping[str, Any]],
    source: str,
    layout: str = "simulation",
    results: Mapping[str, Any] | None = None,
) -> Trial:
    """One simulation run → one trial. ``layout`` and the ``results`` object around
    the run (if any) feed the version detection."""
    reward_info = sim.get("reward_info") if isinstance(sim.get("reward_info"), Mapping) else None
    reward = reward_info.get("reward") if reward_info else None
    ticks = sim.get("ticks")
    mode = "full_duplex" if isinstance(ticks, list) and ticks else "half_duplex"
    header = {k: v for k, v in sim.items() if k not in ("messages", "ticks", "_file")}
    trial = Trial(
        id=str(sim.get("id")),
        task_id=str(sim.get("task_id")) if sim.get("task_id") is not None else None,
        source=source,
        kind="tau2",
        mode=mode,
        reward=float(reward) if isinstance(reward, int | float) else None,
        header=header,
        duration=float(sim["duration"]) if isinstance(sim.get("duration"), int | float) else None,
    )
    trial.meta.update(_trial_meta(sim, info, tasks))
    if sim.get("mode") not in (None, mode):
        trial.meta["tau2_mode"] = sim["mode"]  # e.g. "voice" on a messages-only run
    trial.meta["tau2_version"] = detect(sim, layout, results).as_dict()
    unknown = unknown_keys(sim, SIMULATION_FIELDS)
    if unknown:
        trial.meta["tau2_unknown"] = {k: sim[k] for k in unknown}
    if sim.get("_file"):
        trial.meta["file"] = sim["_file"]
    if isinstance(ticks, list) and ticks:
        try:
            timeline = timeline_from_tau2(ticks, _tick_s(info))
        except ValueError as exc:
            raise LoadError(f"{trial.source}: simulation {trial.id}: {exc}") from None
        trial.ticks = timeline
        trial.turns = analyze(timeline).turns
        strip_controls(trial.turns)
        trial.meta["ticks"] = len(timeline)
        trial.meta["tick_s"] = timeline.tick_s
        if trial.duration is None:
            trial.duration = len(timeline) * timeline.tick_s
    elif isinstance(sim.get("messages"), list):
        trial.turns = turns_from_messages(sim["messages"], parse_time(sim.get("start_time")))
    attach_effects(trial, sim)
    if reward_info:
        trial.verdicts.extend(reward_verdicts(reward_info, trial))
    for key, judge, blame in (
        ("review", "tau2-review", True),
        ("user_only_review", "tau2-user-review", False),
    ):
        review = sim.get(key)
        if isinstance(review, Mapping):
            trial.verdicts.extend(review_verdicts(review, trial, judge, agent_blame=blame))
    check = sim.get("hallucination_check")
    if isinstance(check, Mapping):
        trial.verdicts.extend(hallucination_verdicts(check, trial))
    auth = sim.get("auth_classification")
    verdict = auth_verdict(auth, trial) if isinstance(auth, Mapping) else None
    if verdict is not None:
        trial.verdicts.append(verdict)
    return trial


def _trial_meta(
    sim: Mapping[str, Any], info: Mapping[str, Any], tasks: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "termination_reason": sim.get("termination_reason"),
        "trial": sim.get("trial"),
        "seed": sim.get("seed"),
        "start_time": sim.get("start_time"),
    }
    env = info.get("environment_info")
    if isinstance(env, Mapping):
        meta["domain"] = env.get("domain_name")
    for side in ("agent", "user"):
        side_info = info.get(f"{side}_info")
        if isinstance(side_info, Mapping):
            meta[f"{side}_llm"] = side_info.get("llm")
    native = info.get("audio_native_config")
    if not meta.get("agent_llm") and isinstance(native, Mapping) and native.get("model"):
        meta["agent_llm"] = native["model"]
    task = tasks.get(str(sim.get("task_id")))
    if task is not None:
        description = task.get("description")
        if isinstance(description, Mapping) and description.get("purpose"):
            meta["task_purpose"] = description["purpose"]
        criteria = task.get("evaluation_criteria")
        if isinstance(criteria, Mapping) and criteria.get("nl_assertions"):
            meta["nl_assertions"] = list(criteria["nl_assertions"])
    return {k: v for k, v in meta.items() if v is not None}


__all__ = ["trial_from_simulation"]
