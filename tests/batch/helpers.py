"""Running `cutin simulate` in-process and reading what it left, straight from the logs."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from cutin_tui.cli import main
from sessions.log import read_session
from sessions.log.models import AgentTurnStart, Backchannel, EndEvent, Interruption


def simulate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``cutin simulate ARGV``; returns exit code, stdout, stderr."""
    capsys.readouterr()
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def simulate_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, out, err = simulate(capsys, *argv, "--json")
    assert code == 0, err
    summary: dict[str, object] = json.loads(out)
    return summary


@dataclass
class Rates:
    calls: int = 0
    agent_turns: int = 0
    interruptions: int = 0
    backchannels: int = 0

    @property
    def interruptions_per_turn(self) -> float:
        return self.interruptions / self.agent_turns

    @property
    def backchannels_per_turn(self) -> float:
        return self.backchannels / self.agent_turns


def rates_by_condition(out: Path) -> dict[tuple[float, float, float], Rates]:
    """Realized rates per (α, β, γ), computed from the logs' headers and events."""
    rows: dict[tuple[float, float, float], Rates] = defaultdict(Rates)
    for path in sorted(out.glob("*.jsonl")):
        s = read_session(path)
        t = s.header.tendencies
        row = rows[(t.alpha, t.beta, t.gamma)]
        row.calls += 1
        row.agent_turns += len(s.of(AgentTurnStart))
        row.interruptions += len(s.of(Interruption))
        row.backchannels += len(s.of(Backchannel))
    return dict(rows)


def is_complete(path: Path) -> bool:
    return any(e.reason != "crash" for e in read_session(path).of(EndEvent))
