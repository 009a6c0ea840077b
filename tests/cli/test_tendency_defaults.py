"""One tendency default (controls.tendencies.DEFAULT_TENDENCIES): the call config, the
TUI's home screen, `cutin call`, `cutin simulate` and the README all start from it.
It was written three times once, and CallConfig's γ disagreed with the others."""

from __future__ import annotations

import ast
from pathlib import Path

from controls.tendencies import DEFAULT_TENDENCIES, Tendencies
from cutin_tui.cli import build_parser
from sessions.call.config import CallConfig
from sessions.scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[2]
DIALS = ("alpha", "beta", "gamma")


def test_the_default_is_the_one_the_readme_documents() -> None:
    assert Tendencies(alpha=0.5, beta=0.0, gamma=0.5) == DEFAULT_TENDENCIES
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    d = DEFAULT_TENDENCIES
    assert f"Defaults α {d.alpha:g}, β {d.beta:g}, γ {d.gamma:g}" in readme


def test_call_config_starts_from_the_default() -> None:
    config = CallConfig(load_scenario("airline-rebooking"))
    assert config.tendencies is DEFAULT_TENDENCIES


def test_the_home_screen_starts_from_the_default() -> None:
    from cutin_tui.screens.app import default_call_plan

    assert default_call_plan().tendencies == DEFAULT_TENDENCIES


def test_cutin_call_defaults_to_it() -> None:
    args = build_parser().parse_args(["call"])
    assert {d: getattr(args, d) for d in DIALS} == DEFAULT_TENDENCIES.as_dict()


def test_cutin_simulate_grid_defaults_to_it() -> None:
    args = build_parser().parse_args(["simulate"])
    assert {d: getattr(args, d) for d in DIALS} == {
        d: [v] for d, v in DEFAULT_TENDENCIES.as_dict().items()
    }


def _literal_dial_defaults(path: Path) -> list[str]:
    """``add_argument("--alpha", ..., default=<number or list of numbers>)`` calls: a
    default written out instead of read from DEFAULT_TENDENCIES (None, "no default",
    is fine)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        flags = {a.value for a in node.args if isinstance(a, ast.Constant)}
        if not flags & {f"--{d}" for d in DIALS}:
            continue
        for kw in node.keywords:
            values = kw.value.elts if isinstance(kw.value, ast.List) else [kw.value]
            literal = bool(values) and all(
                isinstance(x, ast.Constant) and isinstance(x.value, int | float) for x in values
            )
            if kw.arg == "default" and literal:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_command_line_reads_its_dial_defaults_from_the_constant() -> None:
    found = [
        hit
        for path in sorted((ROOT / "cutin_tui").rglob("*.py"))
        for hit in _literal_dial_defaults(path)
    ]
    assert found == []


def test_a_call_plan_starts_from_the_default() -> None:
    from sessions.plan import CallPlan

    assert CallPlan.model_fields["tendencies"].default is DEFAULT_TENDENCIES
