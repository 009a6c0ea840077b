"""replay/ stays readable: modules split by role before they pass ~450 lines, no class
past ~300 (issue 18 split report.py, ticks.py, audit_report.py and audit_sessions.py)."""

from __future__ import annotations

import ast
from pathlib import Path

REPLAY = Path(__file__).resolve().parents[2] / "replay"
MAX_MODULE_LINES = 450
MAX_CLASS_LINES = 300


def test_no_replay_module_or_class_is_too_long() -> None:
    too_long = []
    for path in sorted(REPLAY.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            too_long.append(f"{path.relative_to(REPLAY)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                span = (node.end_lineno or node.lineno) - node.lineno + 1
                if span > MAX_CLASS_LINES:
                    too_long.append(f"{path.relative_to(REPLAY)}: class {node.name} {span} lines")
    assert too_long == []


def test_replay_has_no_loose_modules_beyond_its_core() -> None:
    """Everything but the shared model, its errors and counted words (which every
    sub-package imports, and which import none of them) sits in a sub-package by role;
    loading is one too (replay/load/, issue 31)."""
    loose = sorted(p.name for p in REPLAY.glob("*.py"))
    assert loose == ["__init__.py", "errors.py", "model.py", "plural.py"]


RENDERERS = ("replay.audit.render", "replay.audit.cells", "replay.report.")
"""The audit's renderers (render, render_notes, render_agent), its cells, and the reports."""


def private_imports_of_renderers(source: str) -> list[str]:
    """``module._name`` for each private name ``source`` imports from a renderer."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(RENDERERS):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_no_module_imports_a_renderers_private_helpers() -> None:
    """Issue 31: a renderer's helpers a second module needs are public, in
    replay/audit/cells.py; no module of the program reaches into a renderer's ``_private``
    names (a test may, to test them)."""
    assert private_imports_of_renderers("from replay.audit.render import _table, ok") == [
        "replay.audit.render._table"
    ]
    root = REPLAY.parent
    found = [
        f"{path.relative_to(root)}: {name}"
        for top in ("replay", "cutin_tui", "bench")
        for path in sorted((root / top).rglob("*.py"))
        for name in private_imports_of_renderers(path.read_text(encoding="utf-8"))
    ]
    assert found == []
