"""Dependency direction, checked in fresh interpreters: nothing outside cutin_tui imports
Textual, heavy backends load lazily, and controls needs nothing but the standard library."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_python

HEADLESS_PACKAGES = ("controls", "sessions", "sessions.log", "replay", "prompts")
# Loaded only inside the functions that use them, so `cutin --help` and typed calls start fast.
HEAVY_MODULES = (
    "faster_whisper",
    "onnxruntime",
    "sounddevice",
    "openai",
    "scipy",
    "ctranslate2",
    "ray",  # only sessions.batch.cluster, only inside its functions (the cluster extra)
)

# Imports a package and every module under it, then reports what got loaded.
_PROBE = """
import importlib, json, pkgutil, sys
before = set(sys.modules)
name = sys.argv[1]

def fail(pkg):
    raise ImportError(f"cannot import {pkg}")

package = importlib.import_module(name)
modules = [name]
for info in pkgutil.walk_packages(package.__path__, name + ".", onerror=fail):
    importlib.import_module(info.name)
    modules.append(info.name)
print(json.dumps({
    "modules": modules,
    "loaded": sorted(set(sys.modules) - before),
    "all": sorted(sys.modules),
}))
"""


def probe(package: str, env: dict[str, str]) -> dict[str, Any]:
    proc = run_python("-c", _PROBE, package, env=env)
    assert proc.returncode == 0, f"importing {package} failed:\n{proc.stderr}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def top_level(names: list[str]) -> set[str]:
    return {n.partition(".")[0] for n in names}


@pytest.mark.parametrize("package", HEADLESS_PACKAGES)
def test_headless_package_never_imports_textual(package: str, child_env: dict[str, str]) -> None:
    result = probe(package, child_env)
    assert result["modules"][0] == package
    assert "textual" not in top_level(result["all"]), (
        f"{package} pulled in textual (modules imported: {result['modules']})"
    )


@pytest.mark.parametrize("package", HEADLESS_PACKAGES)
def test_heavy_backends_load_lazily(package: str, child_env: dict[str, str]) -> None:
    loaded = top_level(probe(package, child_env)["loaded"])
    assert not loaded & set(HEAVY_MODULES), (
        f"importing {package} and its modules loaded {sorted(loaded & set(HEAVY_MODULES))}"
    )


def test_controls_imports_only_the_standard_library(child_env: dict[str, str]) -> None:
    result = probe("controls", child_env)
    assert len(result["modules"]) > 1  # the walk found the submodules
    outside = {
        name
        for name in top_level(result["loaded"])
        if name != "controls" and name not in sys.stdlib_module_names
    }
    assert outside == set(), f"controls imported non-stdlib modules: {sorted(outside)}"


def test_controls_imports_none_of_the_other_packages(child_env: dict[str, str]) -> None:
    loaded = top_level(probe("controls", child_env)["loaded"])
    assert not loaded & {"sessions", "replay", "prompts", "cutin_tui"}


def test_building_the_cli_imports_neither_textual_nor_heavy_backends(
    child_env: dict[str, str],
) -> None:
    script = (
        "import json, sys\n"
        "from cutin_tui.cli import build_parser\n"
        "build_parser()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = run_python("-c", script, env=child_env)
    assert proc.returncode == 0, proc.stderr
    loaded = top_level(json.loads(proc.stdout))
    assert not loaded & {"textual", *HEAVY_MODULES}


# ---- the floors: which package may import which ---------------------------------------

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN: dict[str, frozenset[str]] = {
    "controls": frozenset({"sessions", "replay", "prompts", "cutin_tui", "textual"}),
    "sessions": frozenset({"replay", "cutin_tui", "textual"}),
    "replay": frozenset({"cutin_tui", "textual"}),
}
"""Package → the top-level packages it must never import: controls is the floor (the
rules, standard library only), sessions sits on it (calls and their logs), replay on
sessions (reading, auditing, reporting logs), and only cutin_tui may use Textual."""


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_importing_a_package_loads_nothing_above_its_floor(
    package: str, child_env: dict[str, str]
) -> None:
    result = probe(package, child_env)
    assert len(result["modules"]) > 1  # the walk found the submodules
    above = top_level(result["all"]) & FORBIDDEN[package]
    assert not above, f"importing every module of {package} loaded {sorted(above)}"


def imported_names(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement anywhere in ``path`` names (inside functions
    too, where a fresh-interpreter probe cannot see them), and every constant
    ``importlib.import_module(...)`` / ``__import__(...)`` argument."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if name in ("import_module", "__import__") and isinstance(first, ast.Constant):
                out.append((node.lineno, str(first.value)))
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_statement_reaches_above_the_floor(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in files
        for line, name in imported_names(path)
        if name.partition(".")[0] in FORBIDDEN[package]
    ]
    assert bad == []


def test_the_static_scan_sees_lazy_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import importlib\n"
        "def f():\n"
        "    from replay.report.trials import x\n"
        "    import textual.app\n"
        "    importlib.import_module('cutin_tui.screens.app')\n",
        encoding="utf-8",
    )
    assert [name for _, name in imported_names(module)] == [
        "importlib",
        "replay.report.trials",
        "textual.app",
        "cutin_tui.screens.app",
    ]
