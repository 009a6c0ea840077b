"""τ2-bench (τ-Voice) results → :class:`~replay.model.Trial`.

Three layouts, as τ2-bench writes them:

* **monolithic** ``results.json``: ``{"info", "tasks", "simulations": [...]}``;
* **dir**: ``results.json`` holding ``info``/``tasks`` (and, in newer runs, a
  ``simulation_index``) next to ``simulations/<id>.json``, one file per simulation;
* a single **simulation** file on its own (``{"id", "task_id", "messages"|"ticks"}``).

Half-duplex simulations carry ``messages``; consecutive messages of one side (an
assistant's tool call, the tool's result, then its reply) become one turn, tool
traffic as inline events. Full-duplex simulations carry ``ticks``, turned into
turns by :mod:`replay.ticks`. ``reward_info`` becomes ``tau2`` verdicts and
``review`` / ``user_only_review`` become ``tau2-review`` / ``tau2-user-review``
verdicts. Simulations of a dir layout load in file-name order, as τ2 loads them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from replay.errors import LoadError
from replay.model import FAIL, INFO, PASS, WARN, InlineEvent, Speaker, Trial, Turn, Verdict
from replay.ticks import DEFAULT_TICK_S, TickTimeline, analyze

SIMULATIONS_DIR = "simulations"
RESULTS_FILE = "results.json"

# Which reward_info check belongs to which reward_basis entry.
_BASIS = {
    "db": "DB",
    "env": "ENV_ASSERTION",
    "actions": "ACTION",
    "nl": "NL_ASSERTION",
    "communicate": "COMMUNICATE",
}


def is_results(data: Any) -> bool:
    """A τ2 results object (monolithic, or the metadata file of a dir layout)."""
    return (
        isinstance(data, Mapping)
        and "info" in data
        and ("simulations" in data or "tasks" in data or "simulation_index" in data)
    )


def is_simulation(data: Any) -> bool:
    """One τ2 simulation run object."""
    return (
        isinstance(data, Mapping)
        and "task_id" in data
        and "id" in data
        and ("messages" in data or "ticks" in data)
    )


def read_json(path: Path) -> Any:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LoadError(f"{path}: not valid JSON ({exc})") from None


def load_results_file(path: Path, data: Mapping[str, Any]) -> list[Trial]:
    """A monolithic results file (already parsed)."""
    sims = data.get("simulations")
    if not isinstance(sims, list):
        raise LoadError(f'{path}: τ2 results file has no "simulations" list')
    return trials_from_results(data, sims, str(path))


def load_results_dir(folder: Path) -> list[Trial]:
    """The dir layout: ``folder/results.json`` + ``folder/simulations/*.json``."""
    meta_path = folder / RESULTS_FILE
    meta = read_json(meta_path)
    if not is_results(meta):
        raise LoadError(f'{meta_path}: not a τ2 results file (no "info" with "tasks")')
    sims_dir = folder / SIMULATIONS_DIR
    files = sorted(sims_dir.glob("*.json")) if sims_dir.is_dir() else []
    warnings: list[str] = []
    index = meta.get("simulation_index")
    if isinstance(index, list):
        indexed = {str(e.get("id")) for e in index if isinstance(e, Mapping)}
        on_disk = {f.stem for f in files}
        missing = sorted(indexed - on_disk)
        extra = sorted(on_disk - indexed)
        if missing:
            warnings.append(
                f"{folder}: simulation_index lists {len(missing)} simulation(s) "
                f"with no file in simulations/: {', '.join(missing[:5])}"
            )
        if extra:
            warnings.append(
                f"{folder}: {len(extra)} file(s) in simulations/ are not in "
                f"simulation_index: {', '.join(extra[:5])}"
            )
    sims: list[dict[str, Any]] = []
    for f in files:
        sim = read_json(f)
        if not is_simulation(sim):
            raise LoadError(
                f'{f}: not a τ2 simulation (expected "id", "task_id" and "messages" or "ticks")'
            )
        sim = dict(sim)
        sim["_file"] = str(f)
        sims.append(sim)
    if not sims and not isinstance(meta.get("simulations"), list):
        raise LoadError(f"{folder}: τ2 results directory has no simulations/*.json files")
    if not sims:
        sims = list(meta["simulations"])
    trials = trials_from_results(meta, sims, str(folder))
    for trial in trials:
        trial.warnings.extend(warnings)
    return trials


def load_simulation_file(path: Path, sim: Mapping[str, Any]) -> list[Trial]:
    """A lone simulation file; its results.json (if beside ``simulations/``) gives context."""
    info: Mapping[str, Any] = {}
    tasks: Sequence[Any] = []
    meta_path = path.parent.parent / RESULTS_FILE
    if path.parent.name == SIMULATIONS_DIR and meta_path.is_file():
        meta = read_json(meta_path)
        if is_results(meta):
            info = meta.get("info") or {}
            tasks = meta.get("tasks") or []
    return [trial_from_simulation(sim, info=info, tasks=_tasks_by_id(tasks), source=str(path))]


def trials_from_results(meta: Mapping[str, Any], sims: Sequence[Any], source: str) -> list[Trial]:
    info = meta.get("info") if isinstance(meta.get("info"), Mapping) else {}
    tasks = _tasks_by_id(meta.get("tasks") or [])
    trials = []
    for i, sim in enumerate(sims):
        if not is_simulation(sim):
            raise LoadError(
                f'{source}: simulation {i} is not a τ2 simulation (expected "id", '
                f'"task_id" and "messages" or "ticks")'
            )
        trials.append(trial_from_simulation(sim, info=info or {}, tasks=tasks, source=source))
    return trials


def _tasks_by_id(tasks: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(tasks, list):
        return {}
    return {str(t.get("id")): t for t in tasks if isinstance(t, Mapping)}


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
) -> Trial:
    """One simulation run → one trial."""
    reward_info = sim.get("reward_info") if isinstance(sim.get("reward_info"), Mapping) else None
    reward = reward_info.get("reward") if reward_info else None
    ticks = sim.get("ticks")
    mode = str(sim.get("mode") or ("full_duplex" if ticks else "half_duplex"))
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
    if sim.get("_file"):
        trial.meta["file"] = sim["_file"]
    if isinstance(ticks, list) and ticks:
        try:
            timeline = TickTimeline.from_tau2(ticks, _tick_s(info))
        except ValueError as exc:
            raise LoadError(f"{trial.source}: simulation {trial.id}: {exc}") from None
        trial.ticks = timeline
        trial.turns = analyze(timeline).turns
        trial.meta["ticks"] = len(timeline)
        trial.meta["tick_s"] = timeline.tick_s
        if trial.duration is None:
            trial.duration = len(timeline) * timeline.tick_s
    elif isinstance(sim.get("messages"), list):
        trial.turns = _turns_from_messages(sim["messages"], _parse_time(sim.get("start_time")))
    if reward_info:
        trial.verdicts.extend(_reward_verdicts(reward_info, trial))
    for key, judge, blame in (
        ("review", "tau2-review", True),
        ("user_only_review", "tau2-user-review", False),
    ):
        review = sim.get(key)
        if isinstance(review, Mapping):
            trial.verdicts.extend(_review_verdicts(review, trial, judge, agent_blame=blame))
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
    task = tasks.get(str(sim.get("task_id")))
    if task is not None:
        description = task.get("description")
        if isinstance(description, Mapping) and description.get("purpose"):
            meta["task_purpose"] = description["purpose"]
        criteria = task.get("evaluation_criteria")
        if isinstance(criteria, Mapping) and criteria.get("nl_assertions"):
            meta["nl_assertions"] = list(criteria["nl_assertions"])
    return {k: v for k, v in meta.items() if v is not None}


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _rel(value: Any, t0: datetime | None) -> float | None:
    t = _parse_time(value)
    if t is None or t0 is None:
        return None
    try:
        return round((t - t0).total_seconds(), 6)
    except TypeError:  # one aware, one naive
        return None


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_label(call: Mapping[str, Any]) -> str:
    args = call.get("arguments")
    if isinstance(args, Mapping):
        inner = ", ".join(f"{k}={_short(v, 40)}" for k, v in args.items())
    else:
        inner = _short(args or "", 60)
    return f"{call.get('name', '?')}({inner})"


def _turns_from_messages(messages: Sequence[Any], t0: datetime | None) -> list[Turn]:
    turns: list[Turn] = []
    counters = {"agent": 0, "user": 0}
    for pos, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        t = _rel(msg.get("timestamp"), t0)
        idx = msg.get("turn_idx", pos)
        if role == "tool":
            if turns:
                content = msg.get("content")
                turns[-1].events.append(
                    InlineEvent(
                        t if t is not None else (turns[-1].end or 0.0),
                        "tool_result",
                        _short(content or ""),
                        {"id": msg.get("id"), "error": bool(msg.get("error")), "content": content},
                    )
                )
                turns[-1].meta["messages"].append(idx)
            continue
        if role not in ("assistant", "user"):
            continue
        speaker: Speaker = "agent" if role == "assistant" else "user"
        last = turns[-1] if turns else None
        if last is not None and last.speaker == speaker:
            turn = last
        else:
            turn = Turn(
                index=len(turns),
                speaker=speaker,
                number=counters[speaker],
                start=t,
                end=t,
                text="",
                spoken="",
                source="tau2" if speaker == "user" else "",
                meta={"messages": []},
            )
            counters[speaker] += 1
            turns.append(turn)
        turn.meta["messages"].append(idx)
        if t is not None:
            turn.end = t
            if turn.start is None:
                turn.start = t
        content = msg.get("content")
        if isinstance(content, str) and content.strip() and not msg.get("is_audio"):
            turn.text = f"{turn.text}\n{content}" if turn.text else content
            turn.spoken = turn.text
        for call in msg.get("tool_calls") or []:
            if isinstance(call, Mapping):
                turn.events.append(
                    InlineEvent(
                        t if t is not None else (turn.end or 0.0),
                        "tool_call",
                        _call_label(call),
                        {
                            "id": call.get("id"),
                            "name": call.get("name"),
                            "arguments": call.get("arguments"),
                        },
                    )
                )
    return turns


def _in_basis(kind: str, basis: Any) -> bool:
    return not isinstance(basis, list) or _BASIS[kind] in basis


def _check_label(ok: bool, kind: str, basis: Any) -> str:
    if not _in_basis(kind, basis):
        return INFO
    return PASS if ok else FAIL


def _reward_verdicts(ri: Mapping[str, Any], trial: Trial) -> list[Verdict]:
    t = trial.duration
    basis = ri.get("reward_basis")
    reward = ri.get("reward")
    parts = []
    breakdown = ri.get("reward_breakdown")
    if isinstance(breakdown, Mapping) and breakdown:
        parts.append(
            "breakdown "
            + ", ".join(f"{k} {v:g}" for k, v in breakdown.items() if isinstance(v, int | float))
        )
    elif isinstance(basis, list):
        parts.append("basis " + ", ".join(str(b) for b in basis))
    out = []
    if isinstance(reward, int | float):
        out.append(
            Verdict(
                "tau2",
                PASS if reward >= 1.0 else FAIL,
                "reward",
                score=float(reward),
                rationale=f"reward {reward:g}" + (f"; {parts[0]}" if parts else ""),
                t=t,
            )
        )
    db = ri.get("db_check")
    if isinstance(db, Mapping) and "db_match" in db:
        ok = bool(db.get("db_match"))
        out.append(
            Verdict(
                "tau2",
                _check_label(ok, "db", basis),
                "db",
                score=db.get("db_reward"),
                rationale="final database matches the expected state"
                if ok
                else "final database differs from the expected state",
                t=t,
            )
        )
    actions = ri.get("action_checks")
    if isinstance(actions, list) and actions:
        missed = [a for a in actions if isinstance(a, Mapping) and not a.get("action_match")]
        labels = [_call_label(a.get("action") or {}) for a in missed]
        ok = not missed
        out.append(
            Verdict(
                "tau2",
                _check_label(ok, "actions", basis),
                "actions",
                score=(len(actions) - len(missed)) / len(actions),
                rationale=f"all {len(actions)} expected actions taken"
                if ok
                else f"{len(missed)} of {len(actions)} expected actions missing or wrong: "
                + "; ".join(labels),
                t=t,
            )
        )
    for kind, key, text_key, score_key in (
        ("env", "env_assertions", None, "reward"),
        ("nl", "nl_assertions", "nl_assertion", None),
        ("communicate", "communicate_checks", "info", None),
    ):
        checks = ri.get(key)
        if not isinstance(checks, list):
            continue
        for i, check in enumerate(checks):
            if not isinstance(check, Mapping):
                continue
            if text_key is None:
                assertion = check.get("env_assertion") or {}
                what = assertion.get("func_name", "?") if isinstance(assertion, Mapping) else "?"
            else:
                what = str(check.get(text_key, ""))
            ok = bool(check.get("met"))
            score = check.get(score_key) if score_key else None
            out.append(
                Verdict(
                    "tau2",
                    _check_label(ok, kind, basis),
                    f"{kind} {i + 1}: {_short(what, 80)}",
                    score=float(score) if isinstance(score, int | float) else None,
                    rationale=str(check.get("justification") or what),
                    t=t,
                )
            )
    return out


def _turn_for_error(err: Mapping[str, Any], trial: Trial) -> int | None:
    idx = err.get("turn_idx")
    if isinstance(idx, int):
        for turn in trial.turns:
            if idx in turn.meta.get("messages", ()):
                return turn.index
    tick = err.get("tick_start")
    if isinstance(tick, int):
        best = None
        for turn in trial.turns:
            if turn.meta.get("tick_start", tick + 1) <= tick:
                best = turn.index
            if turn.meta.get("tick_start", -1) <= tick < turn.meta.get("tick_end", -1):
                return turn.index
        return best
    return None


def _review_verdicts(
    review: Mapping[str, Any], trial: Trial, judge: str, *, agent_blame: bool
) -> list[Verdict]:
    out = []
    agent_error = bool(review.get("agent_error")) and agent_blame
    user_error = bool(review.get("user_error"))
    label = FAIL if agent_error else WARN if user_error or review.get("has_errors") else PASS
    out.append(
        Verdict(
            judge, label, "review", rationale=str(review.get("summary") or ""), t=trial.duration
        )
    )
    for i, err in enumerate(review.get("errors") or []):
        if not isinstance(err, Mapping):
            continue
        source = str(err.get("source") or ("agent" if agent_blame else "user"))
        tags = ", ".join(str(t) for t in err.get("error_tags") or [])
        name = f"error {i + 1}: {source} {err.get('error_type') or 'error'}" + (
            f" ({tags})" if tags else ""
        )
        why = str(err.get("reasoning") or "")
        if err.get("correct_behavior"):
            why += f" Instead: {err['correct_behavior']}"
        turn = _turn_for_error(err, trial)
        out.append(
            Verdict(
                judge,
                FAIL if source == "agent" and agent_blame else WARN,
                name,
                scope="turn" if turn is not None else "call",
                turn=turn,
                rationale=why.strip(),
                t=trial.turns[turn].start if turn is not None else trial.duration,
                extra={"severity": err.get("severity"), "source": source},
            )
        )
    return out


__all__ = [
    "RESULTS_FILE",
    "SIMULATIONS_DIR",
    "is_results",
    "is_simulation",
    "load_results_dir",
    "load_results_file",
    "load_simulation_file",
    "read_json",
    "trial_from_simulation",
    "trials_from_results",
]
