"""The report's JSON form (documented in docs/report-json.md): every trial, turn by
turn, with its verdicts, and the τ-Voice metrics of the tick trials. The Markdown and
HTML forms (:mod:`.markdown`, :mod:`.html_page`) render this object."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from replay.audit.agent_measures import measures_of_trial
from replay.model import JudgeVerdict, Trial, Turn
from replay.report.confidence import mean_confidence, unsure_indices
from replay.tau2.tau_voice_metrics import metrics_for_timelines
from sessions.hostile.safe_files import inert_json, terminal_line

REPORT_SCHEMA = "cutin.report/1"

TIME_DIGITS = 6
"""Times in the JSON form are rounded to the microsecond: tick products such as
306 × 0.2 carry float noise no reader wants. Metrics are never rounded."""


def _r(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, TIME_DIGITS)
    if isinstance(value, dict):
        return {k: _r(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_r(v) for v in value]
    return value


def _verdict_json(v: JudgeVerdict, trial: Trial) -> dict[str, Any]:
    turn = trial.turns[v.turn] if v.turn is not None and v.turn < len(trial.turns) else None
    return {
        "judge": v.judge,
        "scope": v.scope,
        "turn": v.turn,
        "speaker": turn.speaker if turn is not None else None,
        "name": v.name,
        "label": v.label,
        "score": _r(v.score),
        "rationale": v.rationale,
        "t": _r(v.t),
        "data": _r(v.extra),
    }


def _turn_json(t: Turn) -> dict[str, Any]:
    return {
        "index": t.index,
        "speaker": t.speaker,
        "number": t.number,
        "start": _r(t.start),
        "end": _r(t.end),
        "text": t.text,
        "spoken": t.spoken,
        "unspoken": t.unspoken,
        "confidence": _r(mean_confidence(t.words)),
        "unsure_words": sorted(unsure_indices(t)),
        "interrupted": t.interrupted,
        "cut_t": _r(t.cut_t),
        "cut_word": t.cut_word,
        "talk_over_s": _r(t.talk_over_s),
        "original": t.original,
        "rendered": t.rendered,
        "insertions": [{"index": i.index, "kind": i.kind, "token": i.token} for i in t.insertions],
        "source": t.source,
        "events": [
            {"t": _r(e.t), "kind": e.kind, "label": e.label, "data": _r(e.data)} for e in t.events
        ],
    }


def trial_json(trial: Trial) -> dict[str, Any]:
    """One trial in the report's JSON form."""
    out: dict[str, Any] = {
        "id": trial.id,
        "task_id": trial.task_id,
        "reward": trial.reward,
        "failed": trial.failed,
        "judged": trial.judged,
        "source": trial.source,
        "kind": trial.kind,
        "mode": trial.mode,
        "duration_s": _r(trial.duration),
        "verdict_counts": trial.verdict_counts(),
        "verdicts": [_verdict_json(v, trial) for v in trial.current_verdicts()],
        "turns": [_turn_json(t) for t in trial.turns],
        "warnings": list(trial.warnings),
    }
    if trial.ticks is not None:
        out["tau_voice_metrics"] = metrics_for_timelines([trial.ticks])
    agent = measures_of_trial(trial)
    if agent is not None:  # a call to a black-box agent (twilio, realtime)
        out["agent_under_test"] = agent
    if trial.kind == "tau2":
        out["tau2"] = tau2_json(trial)
    return out


def tau2_json(trial: Trial) -> dict[str, Any]:
    """What the importer learnt about a τ2 file: version, models, environment, and
    the fields it does not know, with their values (so nothing is lost)."""
    return {
        "version": trial.meta.get("tau2_version"),
        "mode": trial.meta.get("tau2_mode", trial.mode),
        "agent_model": trial.meta.get("agent_llm"),
        "user_model": trial.meta.get("user_llm"),
        "speech_environment": trial.meta.get("speech_environment"),
        "effect_events": trial.meta.get("effect_timeline"),
        "unknown_fields": trial.meta.get("tau2_unknown", {}),
        "unknown_record_fields": trial.meta.get("tau2_unknown_wrapper", {}),
    }


def build_report(trials: Sequence[Trial], warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The whole report as one JSON-ready object."""
    failed = sum(1 for t in trials if t.failed)
    unjudged = sum(1 for t in trials if not t.judged)
    timelines = [t.ticks for t in trials if t.ticks is not None]
    return {
        "schema": REPORT_SCHEMA,
        "summary": {
            "trials": len(trials),
            "failed": failed,
            "passed": len(trials) - failed - unjudged,
            "not_judged": unjudged,  # no reward and no verdict: neither passed nor failed
            "with_reward": sum(1 for t in trials if t.reward is not None),
            "tick_trials": len(timelines),
        },
        "trials": [trial_json(t) for t in trials],
        "tau_voice_metrics": metrics_for_timelines(timelines),
        # Loaders' warnings name files: one line each, no control character.
        "warnings": list(
            dict.fromkeys(
                terminal_line(w) for w in [*warnings, *(w for t in trials for w in t.warnings)]
            )
        ),
    }


def render_json(trials: Sequence[Trial], warnings: Sequence[str] = ()) -> str:
    # inert_json: a file name's DEL or C1 byte is escaped as ensure_ascii would.
    text = json.dumps(build_report(trials, warnings), ensure_ascii=False, indent=2, default=str)
    return inert_json(text) + "\n"
