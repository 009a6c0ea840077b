"""Every command's --help, at the widths people's terminals have: flags are never split
across lines, and a description written in paragraphs keeps them."""

from __future__ import annotations

import argparse
import re

import pytest

from cutin_tui.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"cutin": parser, **sub.choices}


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    return [s for a in parser._actions for s in a.option_strings if s.startswith("--")]


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_no_flag_is_split_across_lines(monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    for name, parser in _commands().items():
        text = parser.format_help()
        split = [ln for ln in text.splitlines() if re.search(r"(^|\s)--?[A-Za-z][\w-]*-$", ln)]
        assert not split, f"cutin {name} --help at {columns} columns splits a flag: {split}"
        joined = " ".join(text.split())
        for flag in _flags(parser):
            assert flag in joined, f"cutin {name} --help at {columns} columns: {flag} not whole"


@pytest.mark.parametrize("columns", [60, 100])
def test_the_call_help_keeps_its_paragraphs_at_the_terminals_width(
    monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    text = _commands()["call"].format_help()
    description = text.split("\n\n", 1)[1].split("\noptions:")[0]
    paragraphs = [p for p in description.split("\n\n") if p.strip()]
    assert len(paragraphs) >= 3, paragraphs
    assert paragraphs[1].startswith("Defaults:") and paragraphs[2].startswith("Your own")
    assert all(len(line) <= columns for p in paragraphs for line in p.splitlines())
