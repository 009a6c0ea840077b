"""Finding and loading scenario files."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from sessions.hostile.safe_files import (
    FileError,
    clean_text,
    exists,
    parse_toml,
    read_text,
    shown_name,
)
from sessions.scenarios.model import MAX_FILE_BYTES, STEP_TAGS, Scenario, ScenarioError

_DATA = "sessions.scenarios.data"
_LINES = "sessions.scenarios.lines"
"""Caller-only scenarios for a black-box agent on a line (not in the shipped set that
``cutin simulate`` runs by default against cutin's own agents)."""


def _names(package: str) -> list[str]:
    return sorted(
        p.name.removesuffix(".toml")
        for p in resources.files(package).iterdir()
        if p.name.endswith(".toml")
    )


def shipped_scenario_names() -> list[str]:
    return _names(_DATA)


def line_scenario_names() -> list[str]:
    """Scenarios written for an agent on a line (``line-check``)."""
    return _names(_LINES)


def _format_error(where: str, exc: ValidationError) -> str:
    """One line (the command line prints errors as one line): the first problem, and
    how many more there are."""
    errors = exc.errors()
    err = errors[0]
    loc = ".".join(str(p) for p in _without_tags(err["loc"])) or "(top level)"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return f"{where}: field '{clean_text(loc)}': {clean_text(err['msg'])}{more}"


def _without_tags(loc: tuple[int | str, ...]) -> list[int | str]:
    """``user.turns.2.keypad.dtmf`` as ``user.turns.2.dtmf``: the kind of caller step that
    pydantic puts in the location is no field of the file."""
    return [
        p
        for i, p in enumerate(loc)
        if not (p in STEP_TAGS and i >= 2 and isinstance(loc[i - 1], int) and loc[i - 2] == "turns")
    ]


def parse_scenario(text: str, where: str) -> Scenario:
    try:
        data = parse_toml(text, where)
    except FileError as exc:
        raise ScenarioError(str(exc)) from None
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(_format_error(where, exc)) from None
    scenario.source = where
    return scenario


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A shipped scenario by name, or a TOML file by path."""
    text_name = str(name_or_path)
    path = Path(text_name)
    if path.suffix == ".toml" or exists(path):
        if not exists(path):
            raise ScenarioError(f"{shown_name(path)}: no such scenario file")
        try:
            text = read_text(path, max_bytes=MAX_FILE_BYTES)
        except FileError as exc:
            raise ScenarioError(str(exc)) from None
        return parse_scenario(text, shown_name(path))
    for package, names in ((_DATA, shipped_scenario_names()), (_LINES, line_scenario_names())):
        if text_name in names:
            res = resources.files(package) / f"{text_name}.toml"
            return parse_scenario(res.read_text(encoding="utf-8"), f"{text_name} (shipped)")
    known = ", ".join(shipped_scenario_names() + line_scenario_names())
    raise ScenarioError(f"unknown scenario {text_name!r}; shipped scenarios: {known}")


def list_scenarios() -> list[Scenario]:
    return [load_scenario(n) for n in shipped_scenario_names()]
