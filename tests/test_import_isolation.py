"""Dependency direction, checked in fresh interpreters: nothing outside cutin_tui imports
Textual, heavy backends load lazily, and controls needs nothing but the standard library."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.support.cli import run_python

HEADLESS_PACKAGES = ("controls", "sessions", "sessions.log", "replay", "prompts")
# Loaded only inside the functions that use them, so `cutin --help` and typed calls start fast.
HEAVY_MODULES = ("faster_whisper", "onnxruntime", "sounddevice", "openai", "scipy", "ctranslate2")

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
