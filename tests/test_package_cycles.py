"""No package imports in a cycle (issue 31).

A package is one folder; it depends on another when any module directly in it (its
``__init__`` too) imports any module directly in the other: at run time or under
``TYPE_CHECKING``, absolute or relative. Parent and child are two packages, so a child
importing its parent's modules while the parent imports the child is a cycle too. Layers
only work when they are one-way: this is the test that keeps them so.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP = ("controls", "sessions", "replay", "cutin_tui", "prompts")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in TOP:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _package_of(path: Path) -> str:
    return ".".join(path.parent.relative_to(ROOT).parts)


def _imported(node: ast.AST, here: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        return [module] + [f"{module}.{alias.name}" for alias in node.names]
    return []


def package_edges() -> dict[str, dict[str, set[str]]]:
    """package -> package it imports -> the 'module -> module' lines that make the edge."""
    modules = _modules()
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for name, path in modules.items():
        here = _package_of(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _imported(node, here):
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if not target:
                    continue
                there = _package_of(modules[target])
                if there != here:
                    edges[here][there].add(f"{name} -> {target}")
    return edges


def cycles(edges: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Strongly connected components with more than one package (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    nodes = sorted(set(edges) | {b for targets in edges.values() for b in targets})
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(edges.get(start, {})))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(edges.get(nxt, {}))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _explain(component: list[str], edges: dict[str, dict[str, set[str]]]) -> str:
    lines = [" <-> ".join(component)]
    for a in component:
        for b in component:
            for why in sorted(edges.get(a, {}).get(b, ())):
                lines.append(f"    {why}")
    return "\n".join(lines)


@pytest.mark.parametrize("top", TOP)
def test_no_package_imports_in_a_cycle(top: str) -> None:
    edges = package_edges()
    bad = [c for c in cycles(edges) if c[0].split(".")[0] == top]
    assert not bad, "packages import each other:\n" + "\n".join(_explain(c, edges) for c in bad)


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The finder itself must be able to fail: a two-package loop and a parent-child loop."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    edges["a"]["a.b"].add("a.x -> a.b.y")
    edges["a.b"]["a"].add("a.b.y -> a.x")
    edges["c"]["d"].add("c.m -> d.n")
    assert cycles(edges) == [["a", "a.b"]]
    edges["d"]["c"].add("d.n -> c.m")
    assert sorted(cycles(edges)) == [["a", "a.b"], ["c", "d"]]
