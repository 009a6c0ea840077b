"""One side of ``cutin compare``: a run folder (or one session log), or an ``audit
--json`` file — the only file reading of a comparison.

A run folder is read as ``cutin check`` reads it (:func:`replay.check.load.load_run`);
each call's log header gives its scenario and seed (what pairs it with the other run's),
its dials and cutin's version. An ``audit --json`` file's ``agent_under_test`` rows hold
each call's counts and sums (``per_call``), from which every measure but the medians and
p95 is pooled and resampled again; it names no seeds (no pairing) and no versions.
Anything else — a file that is not JSON, a JSON document that is not an audit, a count
that is negative or not a number — is one line (:class:`~replay.errors.LoadError`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.check.compare import EVENT_MEASURES, Side, Unit
from replay.errors import LoadError
from sessions.hostile.safe_files import FileError, exists, is_file, read_json, shown_name

if TYPE_CHECKING:
    from replay.audit.agent_measures import AgentCall
    from replay.check.load import RunCall

MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_COUNT = 1_000_000
"""No call holds this many events or seconds; a bigger number is not an audit's."""
MAX_CALLS = 5_000
"""Calls on one side: the bootstrap holds a (resamples × calls) matrix."""
MAX_EVENTS = 200_000
"""Events (latencies, dead-air gaps) rebuilt from one file: the resampling stays bounded."""


def load_side(
    path: Path | str, label: str, *, keep_lagged: bool = False, baselines: Path | None = None
) -> Side:
    """``path`` as one side: a saved baseline (``*.json``, or a name kept in
    ``baselines``), an ``audit --json`` file (``*.json``), or a run folder or log."""
    from replay.check.baseline import NAME, is_baseline, side_of_baseline
    from replay.check.load import load_run

    p = Path(path)
    if not exists(p) and baselines is not None and NAME.match(str(path)):
        saved = baselines / f"{path}.json"
        if not is_file(saved):
            raise LoadError(f"{shown_name(path)}: no such file or directory, nor a saved baseline")
        p = saved
    if is_file(p) and p.suffix.lower() == ".json":
        try:
            doc = read_json(p, max_bytes=MAX_JSON_BYTES)
        except FileError as exc:
            raise LoadError(str(exc)) from None
        if is_baseline(doc):
            side = side_of_baseline(doc, shown_name(p), label)
        else:
            side = side_of_audit_json(doc, shown_name(p), label)
    else:
        side = side_of_run(load_run(p), label, keep_lagged=keep_lagged)
    side.run = shown_name(path)
    return side


def _dials(header: Mapping[str, Any]) -> str:
    t = header.get("tendencies")
    t = t if isinstance(t, Mapping) else {}
    autos = header.get("autos")
    off = sorted(k for k, v in autos.items() if v is False) if isinstance(autos, Mapping) else []
    parts = [
        "α {:g} β {:g} γ {:g}".format(
            *(float(t.get(k, 0.0) or 0.0) for k in ("alpha", "beta", "gamma"))
        ),
        f"policy {header.get('policy', 'rules')}",
    ]
    if header.get("shadow"):
        parts.append(f"shadow {header['shadow']}")
    if header.get("profile", "default") != "default":
        parts.append(f"profile {header.get('profile')}")
    if header.get("disfluency_style", "paper") != "paper":
        parts.append(f"style {header.get('disfluency_style')}")
    if off:
        parts.append("autos off: " + "+".join(str(k) for k in off))
    return ", ".join(parts)


def _key(header: Mapping[str, Any]) -> tuple[str, int] | None:
    scenario = header.get("scenario")
    seeds = header.get("seeds")
    seed = seeds.get("seed") if isinstance(seeds, Mapping) else None
    if isinstance(scenario, str) and isinstance(seed, int) and not isinstance(seed, bool):
        return scenario, seed
    return None


def side_of_run(calls: list[RunCall], label: str, *, keep_lagged: bool = False) -> Side:
    """The side of a loaded run folder: its calls to a black-box agent, lagged ones left
    out (and counted) unless kept."""
    from replay.check.evaluate import is_lagged

    units: list[Unit] = []
    scenarios: set[str] = set()
    dials: set[str] = set()
    versions: set[str] = set()
    lagged = 0
    if len(calls) > MAX_CALLS:
        raise LoadError(f"{label}: {len(calls)} calls: compare at most {MAX_CALLS} at once")
    for call in calls:
        if call.agent is None:
            continue
        if is_lagged(call) and not keep_lagged:
            lagged += 1
            continue
        header = call.trial.header
        units.append(Unit(call.name, _key(header), call.agent))
        if call.scenario:
            scenarios.add(call.scenario)
        dials.add(_dials(header))
        version = header.get("cutin_version")
        if isinstance(version, str) and version:
            versions.add(version)
    side = Side(label, units, len(calls), lagged, True, frozenset(scenarios), frozenset(dials),
                frozenset(versions))  # fmt: skip
    if not any(c.agent is not None for c in calls):
        side.notes.append(f"{label}: no call is to a black-box agent (nothing to measure)")
    elif lagged:
        side.notes.append(
            f"{label}: {lagged} of {lagged + len(units)} calls lagged (frames over one frame "
            "late at p99): left out, as in the audit (--keep-lagged keeps them)"
        )
    return side


# ---- audit --json ----------------------------------------------------------------------


def side_of_audit_json(doc: Any, where: str, label: str) -> Side:
    """A side from a parsed ``cutin audit --json`` document (``where`` names the file)."""
    if not isinstance(doc, dict) or "turn_taking" not in doc:
        raise LoadError(f"{where}: not the output of `cutin audit --json` (no turn_taking)")
    rows = doc.get("agent_under_test")
    if rows is None:
        raise LoadError(
            f"{where}: the audit holds no call to a black-box agent (no agent_under_test)"
        )
    if not isinstance(rows, list) or not rows:
        raise LoadError(f"{where}: agent_under_test: expected a list of condition rows")
    units: list[Unit] = []
    scenarios: set[str] = set()
    dials: set[str] = set()
    events = 0
    for i, row in enumerate(rows):
        at = f"{where}: agent_under_test[{i}]"
        if not isinstance(row, dict):
            raise LoadError(f"{at}: expected an object")
        per_call = row.get("per_call")
        if not isinstance(per_call, list) or not per_call:
            raise LoadError(f"{at}.per_call: expected a list of calls")
        if len(units) + len(per_call) > MAX_CALLS:
            raise LoadError(f"{at}.per_call: more than {MAX_CALLS} calls")
        condition = row.get("condition")
        condition = condition if isinstance(condition, dict) else {}
        if isinstance(condition.get("scenario"), str):
            scenarios.add(condition["scenario"])
        dials.add(_dials({"tendencies": condition, "policy": condition.get("policy", "rules")}))
        for j, call in enumerate(per_call):
            agent = _agent_call(call, f"{at}.per_call[{j}]")
            events += sum(
                map(
                    len,
                    (
                        agent.yield_latencies,
                        agent.response_latencies,
                        agent.backchannel_response_latencies,
                        agent.dead_air_gaps,
                    ),
                )
            )
            if events > MAX_EVENTS:
                raise LoadError(f"{at}.per_call[{j}]: more than {MAX_EVENTS} events in the file")
            units.append(Unit(agent.id, None, agent))
    side = Side(label, units, len(units), 0, False, frozenset(scenarios), frozenset(dials))
    if len(rows) == 1:
        for name in EVENT_MEASURES:
            value = rows[0].get(name)
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            side.event_values[name] = float(value) if ok and math.isfinite(value) else None
    side.notes.append(
        f"{label}: an audit --json file (per-call counts, no events, no seeds: medians and "
        "p95 not compared, calls not paired)"
    )
    return side


_COUNTS = (
    "yield_total", "yields", "backchannel_total", "false_yields", "responses", "no_responses",
    "backchannel_responses", "agent_interruptions", "already_silent", "vocal_tic_total",
    "vocal_tic_errors", "non_directed_total", "non_directed_errors", "talk_over_turns",
    "short_pauses", "agent_turns",
)  # fmt: skip
_SECONDS = ("duration_s", "dead_air_s", "talk_over_s", "speech_s")
_MEANS = ("yield_latency_mean", "response_latency_mean", "backchannel_response_latency_mean",
          "dead_air_max_gap_s")  # fmt: skip


def _number(call: Mapping[str, Any], key: str, at: str, *, integer: bool, optional: bool) -> float:
    value = call.get(key)
    if value is None and optional:
        return 0.0
    if not isinstance(value, int | float) or isinstance(value, bool):
        value = -1.0
    if math.isfinite(value) and 0 <= value <= MAX_COUNT and (not integer or value == int(value)):
        return float(value)
    kind = "a whole number" if integer else "a number"
    raise LoadError(f"{at}.{key}: expected {kind} from 0 to {MAX_COUNT}")


def _agent_call(call: Any, at: str) -> AgentCall:
    """A call's counts and sums as an :class:`AgentCall` whose sums are the row's: each
    latency list holds its mean once per event (sum and count right, no events), the
    dead-air gaps hold the longest gap and the rest (sum and max right)."""
    from replay.audit.agent_measures import AgentCall

    if not isinstance(call, dict):
        raise LoadError(f"{at}: expected an object")
    c = {k: int(_number(call, k, at, integer=True, optional=False)) for k in _COUNTS}
    s = {k: _number(call, k, at, integer=False, optional=False) for k in _SECONDS}
    m = {k: _number(call, k, at, integer=False, optional=True) for k in _MEANS}
    if c["yields"] > c["yield_total"] or c["false_yields"] > c["backchannel_total"]:
        raise LoadError(f"{at}: more yields than barge-ins")
    if s["dead_air_s"] > s["duration_s"]:
        raise LoadError(f"{at}: more dead air than call")
    gap, rest = m["dead_air_max_gap_s"], s["dead_air_s"] - m["dead_air_max_gap_s"]
    gaps = [gap] if gap else []
    if rest > 1e-9 and gap:
        pieces = min(math.ceil(rest / gap), 1000)
        gaps += [rest / pieces] * pieces
    name = call.get("id")
    return AgentCall(
        id=shown_name(name) if isinstance(name, str) else at,
        yield_total=c["yield_total"],
        yields=c["yields"],
        yield_latencies=[m["yield_latency_mean"]] * c["yields"],
        backchannel_total=c["backchannel_total"],
        false_yields=c["false_yields"],
        response_latencies=[m["response_latency_mean"]] * c["responses"],
        backchannel_response_latencies=[m["backchannel_response_latency_mean"]]
        * c["backchannel_responses"],
        already_silent=c["already_silent"],
        no_responses=c["no_responses"],
        agent_interruptions=c["agent_interruptions"],
        dead_air_gaps=gaps,
        selectivity={
            "vocal_tic": [c["vocal_tic_total"], c["vocal_tic_errors"]],
            "non_directed": [c["non_directed_total"], c["non_directed_errors"]],
        },
        duration_s=s["duration_s"],
        agent_turns=c["agent_turns"],
        talk_over_turns=c["talk_over_turns"],
        talk_over_s=s["talk_over_s"],
        speech_s=s["speech_s"],
        short_pauses=c["short_pauses"],
    )


__all__ = ["load_side", "side_of_audit_json", "side_of_run"]
