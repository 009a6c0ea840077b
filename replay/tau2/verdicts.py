"""τ2 ``reward_info`` and reviews → verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replay.model import FAIL, INFO, PASS, WARN, JudgeVerdict, Trial
from replay.plural import plural
from replay.tau2.messages import call_label, short

# Which reward_info check belongs to which reward_basis entry.
_BASIS = {
    "db": "DB",
    "env": "ENV_ASSERTION",
    "actions": "ACTION",
    "nl": "NL_ASSERTION",
    "communicate": "COMMUNICATE",
}


def _in_basis(kind: str, basis: Any) -> bool:
    return not isinstance(basis, list) or _BASIS[kind] in basis


def _check_label(ok: bool, kind: str, basis: Any) -> str:
    if not _in_basis(kind, basis):
        return INFO
    return PASS if ok else FAIL


def reward_verdicts(ri: Mapping[str, Any], trial: Trial) -> list[JudgeVerdict]:
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
            JudgeVerdict(
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
            JudgeVerdict(
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
        labels = [call_label(a.get("action") or {}) for a in missed]
        ok = not missed
        out.append(
            JudgeVerdict(
                "tau2",
                _check_label(ok, "actions", basis),
                "actions",
                score=(len(actions) - len(missed)) / len(actions),
                rationale=(
                    f"all {len(actions)} expected actions"
                    if len(actions) > 1
                    else "the expected action"
                )
                + " taken"
                if ok
                else f"{len(missed)} of {plural(len(actions), 'expected action')} "
                "missing or wrong: " + "; ".join(labels),
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
                JudgeVerdict(
                    "tau2",
                    _check_label(ok, kind, basis),
                    f"{kind} {i + 1}: {short(what, 80)}",
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


SEVERITY_LABELS = {
    ("agent", "critical"): FAIL,
    ("agent", "minor"): WARN,
    ("user", "critical"): WARN,
    ("user", "critical_helped"): WARN,
    ("user", "critical_hindered"): WARN,
    ("user", "minor"): INFO,
}
"""(who, severity) → label. An agent's critical error fails the call; a user
simulator's error never does (it says the trial is suspect, not the agent)."""


def _error_label(source: str, severity: Any, agent_blame: bool) -> str:
    if source == "agent" and not agent_blame:
        return WARN
    found = SEVERITY_LABELS.get((source, str(severity)))
    if found is not None:
        return found
    return FAIL if source == "agent" else WARN


def review_verdicts(
    review: Mapping[str, Any], trial: Trial, judge: str, *, agent_blame: bool
) -> list[JudgeVerdict]:
    """τ2's LLM review: one call verdict (its summary) and one per error, on the turn
    it names (``turn_idx`` for messages, ``tick_start`` for ticks), each with who made
    it and how severe it is."""
    out = []
    agent_error = bool(review.get("agent_error")) and agent_blame
    user_error = bool(review.get("user_error"))
    critical_user = bool(review.get("critical_user_error"))
    label = FAIL if agent_error else WARN if user_error or review.get("has_errors") else PASS
    found = [
        w
        for w, on in (
            ("agent error", agent_error),
            ("critical user error", critical_user),
            ("user error", user_error and not critical_user),
        )
        if on
    ]
    summary = str(review.get("summary") or "")
    out.append(
        JudgeVerdict(
            judge,
            label,
            "review",
            rationale=" ".join(x for x in (summary, f"({'; '.join(found)})" if found else "") if x),
            t=trial.duration,
            extra={
                "agent_error": agent_error,
                "user_error": user_error,
                "critical_user_error": critical_user,
                "errors": len(review.get("errors") or []),
            },
        )
    )
    for i, err in enumerate(review.get("errors") or []):
        if not isinstance(err, Mapping):
            continue
        source = str(err.get("source") or ("agent" if agent_blame else "user"))
        severity = err.get("severity")
        tags = [str(t) for t in err.get("error_tags") or []]
        kind = err.get("error_type") or "error"
        who = f"{source} {severity}" if severity else source
        name = f"error {i + 1}: {who} {kind}" + (f" ({', '.join(tags)})" if tags else "")
        why = str(err.get("reasoning") or "")
        if err.get("user_message"):
            why = f'"{short(err["user_message"], 80)}": {why}'
        if err.get("correct_behavior"):
            why += f" Instead: {err['correct_behavior']}"
        turn = _turn_for_error(err, trial)
        out.append(
            JudgeVerdict(
                judge,
                _error_label(source, severity, agent_blame),
                name,
                scope="turn" if turn is not None else "call",
                turn=turn,
                rationale=why.strip(),
                t=trial.turns[turn].start if turn is not None else trial.duration,
                extra={
                    "source": source,
                    "severity": severity,
                    "error_type": err.get("error_type"),
                    "tags": tags,
                    **{k: err[k] for k in ("turn_idx", "tick_start", "tick_end") if k in err},
                },
            )
        )
    return out


def hallucination_verdicts(check: Mapping[str, Any], trial: Trial) -> list[JudgeVerdict]:
    """τ2's check of the user simulator for made-up facts: a call verdict (warn when
    it found any: the trial is suspect) and one per hallucination."""
    found = bool(check.get("hallucination_found"))
    errors = [e for e in check.get("errors") or [] if isinstance(e, Mapping)]
    out = [
        JudgeVerdict(
            "tau2-hallucination",
            WARN if found else PASS,
            "hallucination check",
            rationale=str(check.get("summary") or check.get("reasoning") or ""),
            t=trial.duration,
            extra={"hallucination_found": found, "errors": len(errors)},
        )
    ]
    for i, err in enumerate(errors):
        why = str(err.get("reasoning") or "")
        if err.get("user_message"):
            why = f'"{short(err["user_message"], 80)}": {why}'
        if err.get("correct_behavior"):
            why += f" Instead: {err['correct_behavior']}"
        out.append(
            JudgeVerdict(
                "tau2-hallucination",
                WARN,
                f"hallucination {i + 1}: user",
                rationale=why.strip(),
                t=trial.duration,
                extra={"source": "user"},
            )
        )
    return out


def auth_verdict(auth: Mapping[str, Any], trial: Trial) -> JudgeVerdict | None:
    """τ2's classification of how the user's authentication went (succeeded, failed,
    not_needed): information beside the review, not a pass or fail of its own."""
    status = auth.get("status")
    if not isinstance(status, str) or not status:
        return None
    return JudgeVerdict(
        "tau2-auth",
        INFO,
        f"authentication {status}",
        rationale=str(auth.get("reasoning") or ""),
        t=trial.duration,
        extra={"status": status},
    )


__all__ = [
    "SEVERITY_LABELS",
    "auth_verdict",
    "hallucination_verdicts",
    "review_verdicts",
    "reward_verdicts",
]
