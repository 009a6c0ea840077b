"""A saved baseline: one run's calls kept under a name, for ``cutin compare NAME NEW``.

``cutin compare --save-baseline NAME RUN_DIR`` writes what a comparison reads of the run
and nothing else: each call's name, scenario and seed (so a later run pairs with it),
its raw counts, sums and event values (so medians and p95 compare too), and the run's
dials and cutin versions (so a different one is flagged). No transcript, no path of
the machine. The file (``cutin.baseline/1``, JSON) lives in the baselines folder
(``CUTIN_BASELINES_DIR``, by default ``baselines/`` in cutin's data folder) as
``NAME.json``, or at a path given instead of a name.

Reading one back checks every field (a count a whole number, a value a finite number,
both bounded, lists bounded): anything else is one line (:class:`~replay.errors.LoadError`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replay.check.compare import Side, Unit
from replay.errors import LoadError
from sessions.hostile.inert_text import shown_name

SCHEMA = "cutin.baseline/1"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""A baseline's name: a file name, never a path."""
MAX_CALLS = 5_000
MAX_EVENTS = 1_000_000
MAX_VALUE = 1_000_000
_INTS = (
    "yield_total", "yields", "backchannel_total", "false_yields", "already_silent",
    "no_responses", "agent_interruptions", "agent_turns", "talk_over_turns", "speech_turns",
    "short_pauses",
)  # fmt: skip
_FLOATS = ("duration_s", "talk_over_s", "speech_s")
_LISTS = (
    "yield_latencies", "response_latencies", "backchannel_response_latencies", "dead_air_gaps",
)  # fmt: skip
_KINDS = ("vocal_tic", "non_directed")


def baseline_path(name: str, folder: Path) -> Path:
    """Where baseline ``name`` is kept: ``folder/NAME.json``, or ``name`` itself when it
    is a path to a ``.json`` file."""
    if name.lower().endswith(".json"):
        return Path(name)
    if not NAME.match(name):
        raise LoadError(
            f"{shown_name(name)!r}: a baseline is named with letters, digits, '.', '_' and "
            "'-' (at most 64), or given as a path ending in .json"
        )
    return folder / f"{name}.json"


def baseline_document(side: Side) -> dict[str, Any]:
    """The ``cutin.baseline/1`` document of a loaded run."""
    calls = []
    for unit in side.units:
        a = unit.agent
        call: dict[str, Any] = {
            "name": unit.name,
            "scenario": unit.key[0] if unit.key else None,
            "seed": unit.key[1] if unit.key else None,
        }
        call.update({k: getattr(a, k) for k in (*_INTS, *_FLOATS, *_LISTS)})
        call["selectivity"] = {k: list(v) for k, v in a.selectivity.items() if k in _KINDS}
        calls.append(call)
    return {
        "schema": SCHEMA,
        "run": Path(side.run).name,  # the folder's name, not where it is
        "calls_in_run": side.calls,
        "lagged_left_out": side.lagged,
        "scenarios": sorted(side.scenarios),
        "dials": sorted(side.dials),
        "cutin_versions": sorted(side.versions),
        "calls": calls,
    }


def is_baseline(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA


def _number(value: Any, at: str, *, whole: bool) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        value = -1.0
    if math.isfinite(value) and 0 <= value <= MAX_VALUE and (not whole or value == int(value)):
        return float(value)
    kind = "a whole number" if whole else "a number"
    raise LoadError(f"{at}: expected {kind} from 0 to {MAX_VALUE}")


def _strings(doc: Mapping[str, Any], key: str, where: str) -> frozenset[str]:
    values = doc.get(key, [])
    if not isinstance(values, list) or len(values) > MAX_CALLS:
        raise LoadError(f"{where}: {key}: expected a list of strings")
    if not all(isinstance(v, str) and len(v) <= 500 for v in values):
        raise LoadError(f"{where}: {key}: expected a list of strings")
    return frozenset(shown_name(v) for v in values)


def side_of_baseline(doc: Mapping[str, Any], where: str, label: str) -> Side:
    """A side from a parsed ``cutin.baseline/1`` document (``where`` names the file)."""
    from replay.audit.agent_measures import AgentCall

    calls = doc.get("calls")
    if not isinstance(calls, list) or not calls or len(calls) > MAX_CALLS:
        raise LoadError(f"{where}: calls: expected a list of 1 to {MAX_CALLS} calls")
    units: list[Unit] = []
    events = 0
    for i, call in enumerate(calls):
        at = f"{where}: calls[{i}]"
        if not isinstance(call, dict):
            raise LoadError(f"{at}: expected an object")
        values: dict[str, Any] = {}
        for k in _INTS:
            values[k] = int(_number(call.get(k), f"{at}.{k}", whole=True))
        for k in _FLOATS:
            values[k] = _number(call.get(k), f"{at}.{k}", whole=False)
        for k in _LISTS:
            items = call.get(k)
            if not isinstance(items, list):
                raise LoadError(f"{at}.{k}: expected a list of numbers")
            events += len(items)
            if events > MAX_EVENTS:
                raise LoadError(f"{at}.{k}: more than {MAX_EVENTS} events in the file")
            values[k] = [_number(v, f"{at}.{k}[{j}]", whole=False) for j, v in enumerate(items)]
        if values["yields"] > values["yield_total"]:
            raise LoadError(f"{at}: more yields than barge-ins")
        if values["false_yields"] > values["backchannel_total"]:
            raise LoadError(f"{at}: more false yields than backchannels")
        selectivity: dict[str, list[int]] = {}
        raw = call.get("selectivity", {})
        if not isinstance(raw, dict):
            raise LoadError(f"{at}.selectivity: expected an object")
        for kind in _KINDS:
            pair = raw.get(kind)
            if pair is None:
                continue
            if not isinstance(pair, list) or len(pair) != 2:
                raise LoadError(f"{at}.selectivity.{kind}: expected [events, errors]")
            n, e = (int(_number(v, f"{at}.selectivity.{kind}", whole=True)) for v in pair)
            if e > n:
                raise LoadError(f"{at}.selectivity.{kind}: more errors than events")
            selectivity[kind] = [n, e]
        name, scenario, seed = call.get("name"), call.get("scenario"), call.get("seed")
        name = shown_name(name) if isinstance(name, str) and len(name) <= 500 else f"call {i}"
        key = None
        if isinstance(scenario, str) and isinstance(seed, int) and not isinstance(seed, bool):
            key = (shown_name(scenario), seed)
        agent = AgentCall(id=name, agent_kind=None, selectivity=selectivity, **values)
        units.append(Unit(name, key, agent))
    calls_in_run = doc.get("calls_in_run")
    lagged = doc.get("lagged_left_out")
    side = Side(
        label,
        units,
        int(_number(calls_in_run, f"{where}: calls_in_run", whole=True)),
        int(_number(lagged, f"{where}: lagged_left_out", whole=True)),
        True,
        _strings(doc, "scenarios", where),
        _strings(doc, "dials", where),
        _strings(doc, "cutin_versions", where),
    )
    if side.lagged:
        side.notes.append(f"{label}: {side.lagged} lagged calls were left out when it was saved")
    return side


__all__ = [
    "NAME",
    "SCHEMA",
    "baseline_document",
    "baseline_path",
    "is_baseline",
    "side_of_baseline",
]
