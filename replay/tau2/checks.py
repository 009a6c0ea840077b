"""Types and ranges of the τ2-bench fields cutin reads, checked before the importer.

τ2 files come from other programs and other people, so the importer
(:mod:`replay.tau2`) only ever sees fields that passed these checks:

* a known field of the simulation with the wrong type or out of range (``"duration":
  1e19``, ``"tool_calls": true``, ``"reward": "high"``) is dropped, and the trial
  carries a warning naming it and its JSON path;
* a bad record in a list (an action check, a review error, a task) is skipped, and
  one warning per list says how many were skipped and why the first one was; a bad
  message or tick is read as an empty one instead (its position is its index and its
  time), with the same warning;
* what is wrong with the whole simulation (no usable ``id`` / ``task_id``) is a
  :class:`~replay.errors.LoadError`.

Only the fields the importer uses are typed; everything else passes untouched
(texts were already cleaned, and numbers bounded, by :mod:`sessions.hostile.safe_files`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from replay.errors import LoadError
from sessions.hostile.safe_files import json_path

MAX_SECONDS = 1e7
"""Longest duration or offset accepted (about 115 days)."""

Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS)]
Index = Annotated[int, Field(ge=0, le=10**9)]
Score = Annotated[float, Field(ge=-1e6, le=1e6)]
Id = str | Annotated[int, Field(ge=-(10**18), le=10**18)]


class _Record(BaseModel):
    """Known fields typed strictly (no "5" for 5, no 1 for true); others kept."""

    model_config = ConfigDict(extra="allow", strict=True)


class ToolCall(_Record):
    id: Id | None = None
    name: str | None = None
    arguments: dict[str, Any] | str | None = None


class Tau2Message(_Record):
    role: str | None = None
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    timestamp: str | None = None
    turn_idx: Index | None = None
    is_audio: bool | None = None
    error: bool | None = None


class TurnTakingAction(_Record):
    action: str | None = None


class Insert(_Record):
    type: str | None = None
    text: str | None = None


class SourceEffects(_Record):
    burst_noise_file: str | None = None
    speech_insert: Insert | None = None


class SpeechEffects(_Record):
    dynamic_muffling_enabled: bool | None = None
    speech_insert: Insert | None = None


class Chunk(_Record):
    contains_speech: bool | None = None
    content: str | None = None
    is_audio: bool | None = None
    turn_taking_action: TurnTakingAction | None = None
    source_effects: SourceEffects | None = None
    speech_effects: SpeechEffects | None = None


class Tick(_Record):
    user_chunk: Chunk | None = None
    agent_chunk: Chunk | None = None


class Tau2Check(_Record):
    met: bool | None = None
    reward: Score | None = None
    justification: str | None = None
    nl_assertion: str | None = None
    info: str | None = None
    env_assertion: dict[str, Any] | None = None


class ActionCheck(_Record):
    action_match: bool | None = None
    action: ToolCall | None = None


class DbCheck(_Record):
    db_match: bool | None = None
    db_reward: Score | None = None


class ReviewError(_Record):
    source: str | None = None
    error_type: str | None = None
    error_tags: list[str] | None = None
    reasoning: str | None = None
    correct_behavior: str | None = None
    turn_idx: Index | None = None
    tick_start: Index | None = None


class TaskDescription(_Record):
    purpose: str | None = None


class Criteria(_Record):
    nl_assertions: list[str] | None = None


class Task(_Record):
    id: Id | None = None
    description: TaskDescription | None = None
    evaluation_criteria: Criteria | None = None


_SIM_FIELDS: dict[str, Any] = {
    "duration": Seconds | None,
    "start_time": str | None,
    "mode": str | None,
    "termination_reason": str | None,
    "trial": Id | None,
    "seed": Id | None,
}
_REWARD_FIELDS: dict[str, Any] = {
    "reward": Score | None,
    "reward_basis": list[str] | None,
    "reward_breakdown": dict[str, Score] | None,
    "db_check": DbCheck | None,
}
_REWARD_LISTS: dict[str, type[_Record]] = {
    "action_checks": ActionCheck,
    "env_assertions": Tau2Check,
    "nl_assertions": Tau2Check,
    "communicate_checks": Tau2Check,
}
_REVIEW_FIELDS: dict[str, Any] = {
    "summary": str | None,
    "agent_error": bool | None,
    "user_error": bool | None,
    "has_errors": bool | None,
}


def _why(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ()) if not str(p).startswith("function"))
    msg = str(first.get("msg", "invalid"))
    return f"{loc}: {msg}" if loc else msg


class _Notes:
    def __init__(self, where: str) -> None:
        self.where = where
        self.warnings: list[str] = []

    def dropped(self, path: tuple[str | int, ...], why: str) -> None:
        self.warnings.append(f"{self.where}: {json_path(path)}: ignored ({why})")

    def skipped(
        self, path: tuple[str | int, ...], n: int, total: int, first: str, *, emptied: bool
    ) -> None:
        what = "read as empty" if emptied else "skipped"
        self.warnings.append(
            f"{self.where}: {json_path(path)}: {what} {n} of {total} bad record(s) (first: {first})"
        )


def _field(
    data: dict[str, Any], key: str, kind: Any, path: tuple[str | int, ...], notes: _Notes
) -> None:
    if key not in data or data[key] is None:
        return
    try:
        value = _adapter(kind).validate_python(data[key], strict=True)
    except ValidationError as exc:
        notes.dropped((*path, key), _why(exc))
        del data[key]
        return
    data[key] = value.model_dump(exclude_unset=True) if isinstance(value, BaseModel) else value


_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


def _adapter(kind: Any) -> TypeAdapter[Any]:
    key = repr(kind)
    if key not in _ADAPTERS:
        _ADAPTERS[key] = TypeAdapter(kind)
    return _ADAPTERS[key]


def _records(
    data: dict[str, Any],
    key: str,
    model: type[_Record],
    path: tuple[str | int, ...],
    notes: _Notes,
    *,
    placeholder: bool = False,
) -> None:
    """Keep the items of ``data[key]`` that validate as ``model`` (as plain dicts).
    With ``placeholder`` a bad item becomes ``{}`` instead of going: a message's or a
    tick's position is its time and its index, which the rest must keep."""
    if key not in data or data[key] is None:
        return
    items = data[key]
    if not isinstance(items, list):
        notes.dropped((*path, key), f"expected a list, got {type(items).__name__}")
        del data[key]
        return
    kept: list[Any] = []
    bad = 0
    first = ""
    for i, item in enumerate(items):
        try:
            kept.append(model.model_validate(item).model_dump(exclude_unset=True))
        except ValidationError as exc:
            bad += 1
            if not first:
                first = f"[{i}] {_why(exc)}"
            if placeholder:
                kept.append({})
    if bad:
        notes.skipped((*path, key), bad, len(items), first, emptied=placeholder)
    data[key] = kept


def _mapping(
    data: dict[str, Any], key: str, path: tuple[str | int, ...], notes: _Notes
) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        notes.dropped((*path, key), f"expected an object, got {type(value).__name__}")
        del data[key]
        return None
    copy = dict(value)
    data[key] = copy
    return copy


def check_simulation(
    sim: Mapping[str, Any], where: str, path: tuple[str | int, ...] = ()
) -> tuple[dict[str, Any], list[str]]:
    """A checked copy of one τ2 simulation and the warnings about what was dropped.
    ``where`` is the file and ``path`` the simulation's JSON path in it."""
    notes = _Notes(where)
    out = dict(sim)
    for key in ("id", "task_id"):
        value = out.get(key)
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise LoadError(
                f"{where}: {json_path((*path, key))}: expected a string or integer id, "
                f"got {type(value).__name__}"
            )
        if isinstance(value, int) and abs(value) > 10**18:
            raise LoadError(f"{where}: {json_path((*path, key))}: id out of range")
    for key, kind in _SIM_FIELDS.items():
        _field(out, key, kind, path, notes)
    _records(out, "messages", Tau2Message, path, notes, placeholder=True)
    _records(out, "ticks", Tick, path, notes, placeholder=True)
    reward_info = _mapping(out, "reward_info", path, notes)
    if reward_info is not None:
        rpath = (*path, "reward_info")
        for key, kind in _REWARD_FIELDS.items():
            _field(reward_info, key, kind, rpath, notes)
        for key, model in _REWARD_LISTS.items():
            _records(reward_info, key, model, rpath, notes)
    for key in ("review", "user_only_review"):
        review = _mapping(out, key, path, notes)
        if review is not None:
            for field_key, kind in _REVIEW_FIELDS.items():
                _field(review, field_key, kind, (*path, key), notes)
            _records(review, "errors", ReviewError, (*path, key), notes)
    return out, notes.warnings


def check_results(meta: Mapping[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    """A checked copy of a results object's ``info`` and ``tasks`` (``simulations``
    are checked one by one with :func:`check_simulation`)."""
    notes = _Notes(where)
    out = dict(meta)
    info = _mapping(out, "info", (), notes)
    if info is not None:
        config = _mapping(info, "audio_native_config", ("info",), notes)
        if config is not None:
            _field(
                config,
                "tick_duration_seconds",
                Annotated[float, Field(ge=0.001, le=60)] | None,
                ("info", "audio_native_config"),
                notes,
            )
        for key in ("environment_info", "agent_info", "user_info"):
            _mapping(info, key, ("info",), notes)
    _records(out, "tasks", Task, (), notes)
    return out, notes.warnings


__all__ = ["MAX_SECONDS", "check_results", "check_simulation"]
