"""τ2 ``reward_info`` and reviews → verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replay.model import FAIL, INFO, PASS, WARN, Trial, Verdict
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


def reward_verdicts(ri: Mapping[str, Any], trial: Trial) -> list[Verdict]:
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
        labels = [call_label(a.get("action") or {}) for a in missed]
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


def review_verdicts(
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


__all__ = ["review_verdicts", "reward_verdicts"]
