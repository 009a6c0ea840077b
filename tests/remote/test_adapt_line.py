"""``--adapt`` on a black-box line: the rhythm is measured from the turns the line
carries (VAD pauses, STT words), the paper's constants apply until three turns have
ended, then each ended turn recalibrates and the decisions use the thresholds.
The simulated far end on the virtual clock (real espeak-ng, VAD and STT)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sessions.log.models import AgentTurnEnd, Opportunity, RuleCalibration, ShortPause
from tests.remote.helpers import run_sim_call
from tests.support.sim_agent import SimAgent, long_answer

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]


def test_line_turns_calibrate_the_rule(tmp_path: Path) -> None:
    agent = SimAgent(turns=[long_answer(n) for n in (3, 4, 5, 4, 6)])
    call = run_sim_call(tmp_path, agent, beta=0.7, gamma=0.0, seconds=90, adapt=True)
    cals = [e for e in call.events if isinstance(e, RuleCalibration)]
    ends = [e for e in call.events if isinstance(e, AgentTurnEnd)]
    assert len(ends) >= 4
    assert cals[0].reason == "start" and not cals[0].calibrated and cals[0].source == "live"
    by_turn = [c for c in cals if c.reason == "turn"]
    assert len(by_turn) == len(ends)
    assert [c.calibrated for c in by_turn[:3]] == [False, False, True]
    third = by_turn[2]
    assert third.turns == [0, 1, 2] and third.params is not None
    # The rhythm was read off the line: its short pauses and its words.
    assert third.rhythm["pauses_per_minute"] > 0 and third.rhythm["words_per_minute"] > 100
    pauses = [e for e in call.events if isinstance(e, ShortPause) and e.turn in (0, 1, 2)]
    assert pauses
    # Decisions before the third turn ended used the paper's patience (β 0.7: 4.05 s),
    # later ones the calibration in force.
    checked = 0
    for opp in (e for e in call.events if isinstance(e, Opportunity)):
        needed = {c["name"]: c["needed"] for c in opp.checks if c.get("rule") == "interrupt"}
        in_force = [c for c in cals if c.t <= opp.t]
        params = in_force[-1].params if in_force else None
        want = 4.05 if params is None else params["interrupt_patience_s"]
        assert needed["speaking_s"] == f"≥ {want:g}"
        checked += params is not None
    assert checked > 0
