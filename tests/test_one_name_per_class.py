"""One name per thing: no public class name is defined twice in cutin's packages (two
``Recorder``s or ``TimedWord``s meant an import could silently pick the wrong one)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("controls", "sessions", "replay", "cutin_tui", "prompts")


def public_classes(source: str) -> list[str]:
    """The module-level public classes a module defines (not the ones it imports)."""
    return [
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
    ]


def test_the_scan_finds_a_class_defined_at_module_level_only() -> None:
    source = "class A: pass\nclass _B: pass\ndef f():\n    class C: pass\nfrom x import D\n"
    assert public_classes(source) == ["A"]


def test_no_public_class_name_is_defined_twice() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for name in public_classes(path.read_text(encoding="utf-8")):
                where[name].append(str(path.relative_to(ROOT)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, "class names defined more than once: " + "; ".join(
        f"{name} in {', '.join(paths)}" for name, paths in sorted(twice.items())
    )
