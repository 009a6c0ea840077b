"""`cutin audit` tables fit the terminal's width (COLUMNS when piped): no line wider,
no word cut in two (a table too wide is wrapped at spaces or split in two, each part
led by the condition column; below 60 columns it is stacked, a block per row);
`--json` does not depend on the width."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.audit.cells import CONTINUED
from tests.audit.test_audit_cli import cutin, long_corpus
from tests.audit.test_audit_sessions import crafted_events, header
from tests.support.logs import write_log


def _tokens(text: str) -> set[str]:
    return {t.strip("│─╭╮╰╯ ").removesuffix(":") for t in text.split()} - {""}


@pytest.fixture
def inputs(tmp_path: Path) -> list[list[str]]:
    corpus = long_corpus(tmp_path / "turns.txt", conversations=20)
    folder = tmp_path / "logs"
    write_log(folder / "one.jsonl", crafted_events(), header("one"))
    write_log(folder / "two.jsonl", crafted_events(), header("two", beta=0.0))
    return [
        ["--texts", str(corpus), "--resamples", "100"],
        [str(folder), "--by", "beta,policy", "--resamples", "100"],
    ]


@pytest.mark.parametrize("width", [80, 200])
def test_tables_fit_the_width_and_keep_words_whole(
    width: int, inputs: list[list[str]], child_env: dict[str, str]
) -> None:
    for args in inputs:
        wide = cutin(*args, env={**child_env, "COLUMNS": "1000"})
        proc = cutin(*args, env={**child_env, "COLUMNS": str(width)})
        assert proc.returncode == 0 == wide.returncode, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines and max(len(line) for line in lines) <= width, proc.stdout
        # "(cont.)" titles the second part of a table split to fit (issue 30).
        split = _tokens(proc.stdout) - _tokens(wide.stdout) - {"…", CONTINUED}
        assert not split, f"words cut at {width} columns: {sorted(split)[:10]}"
        assert "…" not in proc.stdout


def test_json_does_not_depend_on_the_width(
    inputs: list[list[str]], child_env: dict[str, str]
) -> None:
    for args in inputs:
        narrow = cutin(*args, "--json", env={**child_env, "COLUMNS": "40"})
        wide = cutin(*args, "--json", env={**child_env, "COLUMNS": "300"})
        assert narrow.returncode == 0 and narrow.stdout == wide.stdout
