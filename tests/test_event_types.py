"""Events are typed end to end (issue 31, item 3).

* No reader in controls/, sessions/, replay/ or cutin_tui/ matches an event by its type
  as text: not ``e.kind == "agent_yield"``, ``e.type == AGENT_YIELD`` (a module constant
  holding the text), ``turn.events_of("interruption")``, ``x.get("type") in (...)``, nor
  a dispatch table keyed by type names (``{"agent_words": f, "user_turn": g}``). Readers
  match the model class (:data:`sessions.log.models.EVENT_CLASSES`, the τ2 classes of
  :mod:`replay.model`); the text comes from the model, for the log and the JSON only.
* Every event model of the table has a place in the fold and in the import (a new
  model is a choice, never a silent drop).

The scan reads the source with :mod:`ast`. It flags a comparison only when one side is
an event's type or kind (``.type``, ``.kind``, ``["type"]``, ``.get("type")``,
``getattr(x, "type")``) and the other is text naming an event type (a literal, a tuple
or set of them, or a module constant bound to one); ``trial.kind == "cutin"`` or
``dtype.kind == "f"`` name no event and pass.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pytest

from replay.cutin_log import session_import
from replay.gallery import timeline
from replay.model import InlineEvent, Tau2Event
from replay.tau2.control import EVENTS, event_for
from sessions.log import fold as fold_module
from sessions.log.fold import fold
from sessions.log.models import (
    EVENT_CLASSES,
    EVENT_TYPES,
    KNOWN_TYPES,
    Event,
    UnknownEvent,
    parse_event,
    type_name,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("controls", "sessions", "replay", "cutin_tui")

TAU2_TYPES = frozenset(
    {"tool_call", "tool_result", "interruption", "backchannel", "agent_interruption", "effect"}
    | {"hang_up", "transfer", "out_of_scope", "control"}
)
"""The τ2 classes' type texts (those of a fixed class; :func:`test_tau2_types_are_named`)."""
VOCABULARY = KNOWN_TYPES | TAU2_TYPES
"""Every text that names an event type."""

LEFT_ALONE: dict[tuple[str, str], str] = {
    ("replay/timeline/lanes.py", "s.kind"): "a drawn lane span's Literal kind",
    ("replay/report/handout.py", "span.kind"): "the same gallery Span, coloured",
}
"""(file, the compared expression) → why it is not an event's type. Each outside
sessions/call/ must still exist (a stale entry fails), so the list only shrinks."""


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    line: int
    expr: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _texts(node: ast.expr, consts: dict[str, frozenset[str]]) -> frozenset[str]:
    """The strings ``node`` stands for: a literal, a tuple/list/set (or frozenset(...))
    of literals, or a module constant bound to one of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return frozenset({node.value})
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        out: frozenset[str] = frozenset()
        for elt in node.elts:
            out |= _texts(elt, consts)
        return out
    if isinstance(node, ast.Call) and len(node.args) == 1 and _is_collection(node.func):
        return _texts(node.args[0], consts)
    if isinstance(node, ast.Name):
        return consts.get(node.id, frozenset())
    return frozenset()


def _is_collection(func: ast.expr) -> bool:
    return isinstance(func, ast.Name) and func.id in ("frozenset", "set", "tuple")


def _is_type_of(node: ast.expr) -> bool:
    """``node`` reads something's type or kind: ``x.type``, ``x.kind``, ``x["type"]``,
    ``x.get("type")``, ``getattr(x, "type", ...)``."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("type", "kind")
    if isinstance(node, ast.Subscript):
        key = node.slice
        return isinstance(key, ast.Constant) and key.value in ("type", "kind")
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get":
            first = node.args[0]
            return isinstance(first, ast.Constant) and first.value in ("type", "kind")
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
            second = node.args[1]
            return isinstance(second, ast.Constant) and second.value in ("type", "kind")
    return False


def _is_handler(node: ast.expr, defined: set[str]) -> bool:
    """A table's value that is code: a function or class of the module, or a method
    named through its class (``Builder._on_words``)."""
    if isinstance(node, ast.Name):
        return node.id in defined
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id in defined
    return False


def _module_constants(tree: ast.Module) -> dict[str, frozenset[str]]:
    consts: dict[str, frozenset[str]] = {}
    for stmt in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        if value is None:
            continue
        texts = _texts(value, consts)
        for target in targets:
            if isinstance(target, ast.Name) and texts:
                consts[target.id] = texts
    return consts


def scan(source: str, path: str) -> Iterator[Finding]:
    """Every place in one module that matches an event by its type as text."""
    tree = ast.parse(source)
    consts = _module_constants(tree)
    defined = {
        stmt.name
        for stmt in tree.body
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            typed = [o for o in operands if _is_type_of(o)]
            named = set().union(*(_texts(o, consts) for o in operands if not _is_type_of(o)))
            hits = sorted(named & VOCABULARY)
            if typed and hits:
                expr = ast.unparse(typed[0])
                yield Finding(path, node.lineno, expr, f"{expr} compared with {hits}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else None
            args: set[str] = set().union(*(_texts(a, consts) for a in node.args))
            if name == "events_of" and args & VOCABULARY:
                yield Finding(path, node.lineno, "events_of", f"events_of{sorted(args)}")
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
            typed_keys = [
                t for t in (_texts(k, consts) for k in keys) if len(t) == 1 and t <= KNOWN_TYPES
            ]
            handlers = [v for v in node.values if _is_handler(v, defined)]
            if len(typed_keys) >= 2 and len(handlers) == len(node.values):
                words = sorted(set().union(*typed_keys))
                yield Finding(path, node.lineno, "{...}", f"a table keyed by type names {words}")


def scan_tree(root: Path) -> list[Finding]:
    found: list[Finding] = []
    for package in PACKAGES:
        for file in sorted((root / package).rglob("*.py")):
            rel = file.relative_to(root).as_posix()
            found.extend(scan(file.read_text(encoding="utf-8"), rel))
    return found


# ---- the scan itself can fail ---------------------------------------------------------

BAD = {
    'e.kind == "agent_yield"': "agent_yield",
    'e.type != "user_turn"': "user_turn",
    'event.kind in ("short_pause", "turn_end")': "short_pause",
    'data["type"] == "end"': "end",
    'data.get("type") == "verdict"': "verdict",
    'getattr(e, "type", "") == "opportunity"': "opportunity",
    "e.kind in CALL_EVENTS": "hang_up",
    "e.type == AGENT_YIELD": "agent_yield",
    'turn.events_of("interruption")': "interruption",
    '_FEED = {"agent_words": on_words, "user_turn": Builder.on_user}': "agent_words",
}
PREAMBLE = (
    'AGENT_YIELD = "agent_yield"\n'
    'CALL_EVENTS = frozenset({"hang_up", "transfer", "control"})\n'
    "def on_words(e): ...\n"
    "class Builder: ...\n"
)


@pytest.mark.parametrize("code", sorted(BAD))
def test_the_scan_flags_a_match_by_text(code: str) -> None:
    (finding,) = scan(PREAMBLE + code + "\n", "x.py")
    assert BAD[code] in finding.what


@pytest.mark.parametrize(
    "code",
    [
        'trial.kind == "cutin"',  # a trial's kind, not an event's
        'arr.dtype.kind == "f"',
        'kind == "error"',  # a bare name: a websocket message's type, say
        'e.after == "interruption"',  # a field's value, not the event's type
        "isinstance(e.source, AgentYield)",
        'x.kind in ("filler", "repetition")',
        '{"interruption": 2.0, "backchannel": 1.0}',  # a table of numbers, not handlers
        '{"interruption": w.no_yield_s, "backchannel": WINDOW_S}',  # windows, not code
    ],
)
def test_the_scan_passes_what_names_no_event(code: str) -> None:
    assert list(scan(PREAMBLE + code + "\n", "x.py")) == []


# ---- the packages ---------------------------------------------------------------------


def test_no_reader_matches_an_event_by_its_type_as_text() -> None:
    found = scan_tree(ROOT)
    bad = [f for f in found if (f.path, f.expr) not in LEFT_ALONE]
    assert not bad, "match the event's class instead:\n" + "\n".join(map(str, bad))
    seen = {(f.path, f.expr) for f in found}
    # The engine's entries may go as its refactor lands (files move, acts get types).
    stale = sorted(k for k in set(LEFT_ALONE) - seen if not k[0].startswith("sessions/call/"))
    assert not stale, f"no longer found, drop from LEFT_ALONE: {stale}"


# ---- the one table --------------------------------------------------------------------


ALL_MODELS: list[type] = [*EVENT_CLASSES, UnknownEvent]
"""The known models, and the one an unknown type loads as."""


def test_the_table_is_the_log_format() -> None:
    assert set(EVENT_TYPES.values()) == set(EVENT_CLASSES)
    assert {type_name(cls) for cls in EVENT_CLASSES} == KNOWN_TYPES
    assert len(KNOWN_TYPES) == len(EVENT_CLASSES)  # one class per type, none shared


def test_every_event_model_has_a_place_in_the_fold() -> None:
    for cls in ALL_MODELS:
        folded = cls in fold_module._FOLD
        inline = cls in fold_module.INLINE
        assert folded != inline, f"{cls.__name__}: in the fold's table or INLINE, once"


def test_every_event_model_has_a_place_in_the_import() -> None:
    places = {
        "inline": set(session_import._INLINE),
        "turns": set(session_import.TURN_EVENTS),
        "left out": set(session_import.NOT_INLINE),
    }
    for cls in ALL_MODELS:
        where = [name for name, classes in places.items() if cls in classes]
        assert len(where) == 1, f"{cls.__name__}: placed {where or 'nowhere'}"


REQUIRED: dict[str, dict[str, object]] = {
    "agent_turn_start": {"turn": 0},
    "agent_words": {"turn": 0, "words": [{"word": "hi", "start": 0.0, "end": 0.1}]},
    "agent_turn_end": {"turn": 0, "text": "hi", "spoken": "hi"},
    "user_turn": {"turn": 0, "original": "ok", "rendered": "ok"},
    "speech_start": {},
    "short_pause": {"index": 0, "silence_start": 0.0},
    "turn_end": {"silence_start": 0.0},
    "opportunity": {"index": 0, "turn": 0, "decision": "NOTHING"},
    "interruption": {"turn": 0},
    "backchannel": {"turn": 0},
    "verdict": {"judge": "rules", "label": "pass"},
    "dials": {"tendencies": {}},
    "calibration": {"source": "live", "reason": "turn", "tendencies": {}, "calibrated": False},
    "error": {"message": "boom"},
    "end": {},
    "agent_yield": {"turn": 0, "after": "interruption", "onset_t": 0.0, "window_s": 2.0}
    | {"yielded": True},
    "line": {"kind": "open"},
    "caller_sound": {"kind": "vocal_tic", "end_t": 0.1},
}
"""One valid event of each type (a new model needs its row: the test says so)."""


def _one_of_each() -> list[Event]:
    assert set(REQUIRED) == KNOWN_TYPES, "add the new event type to REQUIRED"
    return [
        parse_event({"type": name, "t": float(i), **fields})
        for i, (name, fields) in enumerate(REQUIRED.items())
    ]


def test_the_fold_keeps_every_event() -> None:
    events = _one_of_each()
    log = fold(events)
    kept = [
        *(e for turn in log.agent.values() for e in (*turn.starts, *turn.words)),
        *(turn.end for turn in log.agent.values() if turn.end is not None),
        *log.user,
        *log.inline,
        *log.verdicts,
        *([log.end] if log.end is not None else []),
    ]
    assert {type(e) for e in kept} == set(EVENT_CLASSES)


def test_the_readers_tables_name_only_models() -> None:
    from cutin_tui.views import call_view

    for table in (timeline._FEED, call_view._ON_EVENT, session_import._INLINE):
        assert set(table) <= set(EVENT_CLASSES)


def test_tau2_types_are_named() -> None:
    fixed = {cls.type for cls in get_args(Tau2Event) if isinstance(cls.__dict__.get("type"), str)}
    controls = {kind for kind, _ in EVENTS.values()} | {event_for("ANY")[0]}
    assert fixed | controls <= TAU2_TYPES
    # The inline event's kind is its source's type, as the log (or τ2) writes it.
    for source in _one_of_each():
        assert InlineEvent(0.0, source).kind == type_name(type(source))
