"""`cutin call` options that answer without opening the screen, run as a real program."""

from __future__ import annotations

from pathlib import Path

from sessions.scenarios import list_scenarios
from tests.support.cli import run_cutin


def test_list_scenarios_prints_name_tab_title(child_env: dict[str, str]) -> None:
    proc = run_cutin("call", "--list-scenarios", env=child_env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [f"{s.name}\t{s.title}" for s in list_scenarios()]
    assert "retail-order-change" in [line.split("\t")[0] for line in lines]


def test_an_unknown_scenario_is_a_one_line_error(child_env: dict[str, str], tmp_path: Path) -> None:
    proc = run_cutin(
        "call", "--scenario", "no-such", "--sessions-dir", str(tmp_path), env=child_env
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("cutin: unknown scenario 'no-such'")
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # no log for a call that never started


def test_a_bad_dial_or_rate_is_a_usage_error(child_env: dict[str, str]) -> None:
    for args in (("--beta", "1.5"), ("--wpm", "20"), ("--gamma", "x")):
        proc = run_cutin("call", *args, env=child_env)
        assert proc.returncode == 2, args
        assert "see 'cutin call --help'" in proc.stderr


def test_help_documents_the_defaults_and_keys(child_env: dict[str, str]) -> None:
    proc = run_cutin("call", "--help", env=child_env)
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for needle in ("α 0.5, β 0, γ 0.5", "F2 interrupt", "F10 hang up", "--list-scenarios"):
        assert needle in text, needle
