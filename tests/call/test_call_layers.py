"""The call's layers, read from the source: the far ends and the near end are parts the
engine drives through a :class:`~sessions.call.context.CallContext`, so none of them
imports the engine; the near end does not import the far ends; the microphone and the
audio voice do not import each other. Every import counts: module level, inside
``if TYPE_CHECKING:`` and inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CALL = ROOT / "sessions" / "call"


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in the file (``from x import y`` gives
    both ``x`` and ``x.y``: ``y`` may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def offences(folder: Path, forbidden: str, root: Path = ROOT) -> list[str]:
    bad = []
    for path in sorted(folder.rglob("*.py")):
        for name in sorted(imports_of(path)):
            if _under(name, forbidden):
                bad.append(f"{path.relative_to(root)} imports {name}")
    return bad


def test_the_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The checker itself: an import hidden in TYPE_CHECKING or a function is seen."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from sessions.call.engine.engine import CallEngine\n"
        "def f():\n    import sessions.call.engine.pump\n"
        "from . import sibling\n",
        encoding="utf-8",
    )
    names = imports_of(probe)
    assert "sessions.call.engine.engine" in names
    assert "sessions.call.engine.pump" in names
    assert not any(_under(n, "sibling") for n in names)  # relative: not a top-level name
    assert offences(tmp_path, "sessions.call.engine", tmp_path) == [
        "probe.py imports sessions.call.engine.engine",
        "probe.py imports sessions.call.engine.engine.CallEngine",
        "probe.py imports sessions.call.engine.pump",
    ]


def test_far_ends_and_near_end_do_not_import_the_engine() -> None:
    bad = offences(CALL / "far_ends", "sessions.call.engine")
    bad += offences(CALL / "near_end", "sessions.call.engine")
    assert bad == []


def test_the_near_end_does_not_import_the_far_ends() -> None:
    assert offences(CALL / "near_end", "sessions.call.far_ends") == []


def test_mic_and_audio_voice_do_not_import_each_other() -> None:
    mic = CALL / "near_end" / "mic.py"
    voice = CALL / "voice" / "audio_voice.py"
    assert not any(_under(n, "sessions.call.voice.audio_voice") for n in imports_of(mic))
    assert not any(_under(n, "sessions.call.near_end.mic") for n in imports_of(voice))


def test_no_module_uses_relative_imports() -> None:
    """The checks read absolute names only: a relative import would slip past them."""
    for folder in ("far_ends", "near_end", "voice"):
        for path in sorted((CALL / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            assert not any(isinstance(n, ast.ImportFrom) and n.level > 0 for n in ast.walk(tree)), (
                path
            )
