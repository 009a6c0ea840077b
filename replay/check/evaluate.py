"""Expectations over the calls of a run: each a row with measure, expected, measured,
interval, n and a verdict. Pure: the calls come loaded (:mod:`replay.check.load`).

* A **threshold** (``yield_rate >= 0.9``) is judged on the audit's pooled value over
  the run's calls (:func:`replay.audit.agent_measures.condition_row`: counts and sums
  pooled over calls, a 95% bootstrap interval that resamples whole calls). The verdict
  compares the pooled value; the interval is shown beside it. Fewer than
  :data:`~replay.audit.stats.MIN_EVENTS` events for a rate or latency (one call for
  dead air) is NOT ENOUGH DATA, which fails the check: never a silent pass.
* Calls whose frames were processed late (p99 frame lag over one frame) are left out
  of the thresholds, as in the audit, unless ``keep_lagged``; each row counts them.
* **agent_says**: every call must say every phrase, matched on the agent's transcript
  (what cutin's ears heard) by :func:`says`; n is the calls.
* **judge**: every call must carry no failing verdict of that judge: ``rules`` verdicts
  as recorded in the log (``cutin judge``) or, when none are, computed now (the rule
  judge needs no network); ``llm`` verdicts only as recorded (a call without them is
  NOT ENOUGH DATA: ``cutin judge --judge llm RUN_DIR`` first).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from replay.check.load import RunCall
from replay.check.measures import SPECS, measured
from sessions.log.models import LAG_LIMIT_S
from sessions.scenarios.expect import Expectations, Threshold

Status = Literal["PASS", "FAIL", "NOT ENOUGH DATA"]
PASS: Final = "PASS"
FAIL: Final = "FAIL"
NOT_ENOUGH: Final = "NOT ENOUGH DATA"
SAYS_SLACK = 2
"""Extra words a phrase's words may have between them (tiny.en inserts and splits words)."""


@dataclass(frozen=True, slots=True)
class CheckRow:
    measure: str
    expected: str
    measured: float | None
    interval: tuple[float, float] | None
    n: int
    status: Status
    note: str = ""
    unit: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "expected": self.expected,
            "measured": self.measured,
            "interval": list(self.interval) if self.interval is not None else None,
            "n": self.n,
            "verdict": self.status,
            "note": self.note,
        }


@dataclass(slots=True)
class CheckResult:
    rows: list[CheckRow]
    calls: int
    """Calls in the run folder."""
    agent_calls: int
    """Of those, calls to a black-box agent (the thresholds' calls, lagged ones included)."""
    lagged: int
    kept_lagged: bool
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(r.status == PASS for r in self.rows)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.rows) for s in (PASS, FAIL, NOT_ENOUGH)}

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "calls": self.calls,
            "agent_calls": self.agent_calls,
            "lagged": self.lagged,
            "kept_lagged": self.kept_lagged,
            "counts": self.counts(),
            "rows": [r.as_dict() for r in self.rows],
            "notes": self.notes,
        }


def is_lagged(call: RunCall) -> bool:
    return call.lag_p99_s is not None and call.lag_p99_s > LAG_LIMIT_S


def evaluate(
    expectations: Expectations,
    calls: Sequence[RunCall],
    *,
    keep_lagged: bool = False,
    resamples: int = 2000,
    seed: int = 0,
) -> CheckResult:
    """Every expectation's row, in the order: thresholds, agent_says, judge."""
    from replay.audit.agent_measures import condition_row

    agent = [c for c in calls if c.agent is not None]
    lagged = [c for c in agent if is_lagged(c)]
    used = agent if keep_lagged else [c for c in agent if not is_lagged(c)]
    result = CheckResult([], len(calls), len(agent), len(lagged), keep_lagged)
    if lagged:
        result.notes.append(
            f"{len(lagged)} of {len(agent)} calls lagged (frames over one frame late at p99): "
            + (
                "kept in the thresholds (--keep-lagged)"
                if keep_lagged
                else "left out of the thresholds, as in the audit (--keep-lagged keeps them)"
            )
        )
    if expectations.thresholds and not agent:
        result.notes.append("no call in the run is to a black-box agent: no measure to check")
    row: dict[str, Any] = {}
    if used:
        row = condition_row({}, [c.agent for c in used if c.agent is not None],
                            resamples=resamples, seed=seed)  # fmt: skip
    left_out = f"; {len(lagged)} lagged left out" if lagged and not keep_lagged else ""
    for t in expectations.thresholds:
        result.rows.append(_threshold_row(t, row, len(used), left_out))
    if expectations.agent_says:
        result.rows.append(_says_row(expectations.agent_says, calls))
    if expectations.judge is not None:
        result.rows.append(_judge_row(expectations.judge, calls))
    return result


def _threshold_row(t: Threshold, row: dict[str, Any], calls: int, left_out: str) -> CheckRow:
    spec = SPECS[t.measure]
    m = measured(row, t.measure) if row else None
    where = f"{calls} call{'s' if calls != 1 else ''}{left_out}"
    if m is None or m.value is None:
        return CheckRow(t.measure, t.text, None, None, 0 if m is None else m.n, NOT_ENOUGH,
                        f"no events to measure ({where})", spec.unit)  # fmt: skip
    if not m.enough(spec):
        what = "call" if spec.kind == "floor" else "events"
        return CheckRow(t.measure, t.text, m.value, m.interval, m.n, NOT_ENOUGH,
                        f"fewer than {spec.min_n} {what} ({where})", spec.unit)  # fmt: skip
    status: Status = PASS if t.holds(m.value) else FAIL
    return CheckRow(t.measure, t.text, m.value, m.interval, m.n, status, where, spec.unit)


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


_ENDINGS = ("ing", "ed", "es", "s")


def _plain(word: str) -> str:
    """``ordered``, ``orders``, ``ordering`` → ``order``: the ending dropped when at
    least three letters stay (tiny.en often hears an ending the speaker did not say)."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def words(text: str) -> list[str]:
    """Lower-case plain words, punctuation and apostrophes dropped, an ending -ing,
    -ed, -es or -s dropped (``Orders-number.`` → order, number)."""
    return [_plain(w.replace("'", "")) for w in _WORD.findall(text.lower())]


def says(transcript: Sequence[str], phrase: str, slack: int = SAYS_SLACK) -> bool:
    """Whether ``phrase``'s words occur in ``transcript`` (a list of :func:`words`) in
    order, within a window of the phrase's length plus ``slack`` words. Words are
    compared as :func:`words` gives them, so a transcript's ``Ordered number:`` or
    ``order, numbers`` matches "order number"."""
    needle = words(phrase)
    if not needle:
        return False
    window = len(needle) + slack
    for start, word in enumerate(transcript):
        if word != needle[0]:
            continue
        k = 1
        for w in transcript[start + 1 : start + window]:
            if k < len(needle) and w == needle[k]:
                k += 1
        if k == len(needle):
            return True
    return False


def _says_row(phrases: Sequence[str], calls: Sequence[RunCall]) -> CheckRow:
    expected = "says " + ", ".join(f'"{p}"' for p in phrases)
    if not calls:
        return CheckRow("agent_says", expected, None, None, 0, NOT_ENOUGH, "no calls")
    missing: list[str] = []
    ok = 0
    for call in calls:
        heard = words(" ".join(t.spoken or t.text for t in call.trial.agent_turns()))
        lost = [p for p in phrases if not says(heard, p)]
        ok += not lost
        if lost and len(missing) < 3:
            missing.append(f'{call.name} never said "{lost[0]}"')
    status: Status = PASS if ok == len(calls) else FAIL
    note = "; ".join(missing) + (" …" if len(calls) - ok > len(missing) else "")
    return CheckRow("agent_says", expected, ok / len(calls), None, len(calls), status,
                    note or "every call said every phrase")  # fmt: skip


def _judge_row(judge: str, calls: Sequence[RunCall]) -> CheckRow:
    from replay.judges.rules import judge_trial
    from replay.model import FAIL as FAIL_LABEL

    expected = f"{judge} verdicts pass"
    judged = passed = 0
    failing: list[str] = []
    for call in calls:
        name = "rules" if judge == "rules" else "llm"
        verdicts = [v for v in call.trial.current_verdicts() if v.judge == name]
        if not verdicts and judge == "rules":
            verdicts = judge_trial(call.trial)
        if not verdicts:
            continue
        judged += 1
        bad = [v for v in verdicts if v.label == FAIL_LABEL]
        passed += not bad
        if bad and len(failing) < 3:
            failing.append(f"{call.name}: {bad[0].name or 'call'}")
    if not judged or judged < len(calls):
        note = f"{len(calls) - judged} of {len(calls)} calls carry no {judge} verdicts"
        if judge == "llm":
            note += " (cutin judge --judge llm RUN_DIR records them)"
        value = passed / judged if judged else None
        return CheckRow("judge", expected, value, None, judged, NOT_ENOUGH, note)
    status: Status = PASS if passed == judged else FAIL
    note = "; ".join(failing) or ("the call passes" if judged == 1 else f"all {judged} calls pass")
    return CheckRow("judge", expected, passed / judged, None, judged, status, note)


__all__ = [
    "FAIL",
    "NOT_ENOUGH",
    "PASS",
    "SAYS_SLACK",
    "CheckResult",
    "CheckRow",
    "evaluate",
    "is_lagged",
    "says",
    "words",
]
