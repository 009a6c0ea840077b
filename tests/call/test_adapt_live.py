"""``--adapt`` measured live: the paper's constants until 3 agent turns have ended, then a
calibration after every turn, and the decisions use the calibrated thresholds."""

from __future__ import annotations

from controls.tendencies import Tendencies
from cutin_tui.views.call_view import CallView
from sessions.agents.scripted import ScriptedAgent
from sessions.call.adapt import RuleAdapter
from sessions.call.config import CallConfig
from sessions.call.setup.simulated_call import simulated_call
from sessions.callers.users import ScriptedUser
from sessions.log.models import AgentTurnEnd, Event, Opportunity, RuleCalibration
from sessions.scenarios import load_scenario


def _run(adapter: RuleAdapter | None) -> list[Event]:
    sc = load_scenario("retail-order-change")
    events: list[Event] = []
    config = CallConfig(scenario=sc, tendencies=Tendencies(0.0, 0.7, 0.5), seed=3)
    loop = simulated_call(
        config,
        ScriptedAgent(sc),
        user=ScriptedUser(sc),
        listeners=[events.append],
        adapter=adapter,
    )
    loop.run_virtual(max_seconds=600.0)
    return events


def test_live_calibration_follows_the_turns() -> None:
    events = _run(RuleAdapter())
    cals = [e for e in events if isinstance(e, RuleCalibration)]
    ends = [e for e in events if isinstance(e, AgentTurnEnd)]
    assert cals[0].reason == "start" and not cals[0].calibrated
    # One calibration per ended agent turn; calibrated from the third on.
    by_turn = [c for c in cals if c.reason == "turn"]
    assert len(by_turn) == len(ends)
    assert [c.calibrated for c in by_turn[:3]] == [False, False, True]
    assert by_turn[2].turns == [0, 1, 2] and by_turn[2].source == "live"
    # Cut turns count whole: the agent's sentence-end pauses are seen.
    assert by_turn[-1].rhythm["pauses_per_minute"] > 0 and by_turn[-1].reached
    # Every decision after a calibration shows its thresholds.
    last = by_turn[-2]
    assert last.params is not None
    after = [e for e in events if isinstance(e, Opportunity) and e.t > last.t]
    before_next = [e for e in after if e.t < by_turn[-1].t]
    for opp in before_next:
        needed = {c["name"]: c["needed"] for c in opp.checks if c["rule"] == "interrupt"}
        assert needed["words"] == f"≥ {int(last.params['interrupt_min_words'])}"


def test_without_adapt_nothing_is_calibrated() -> None:
    events = _run(None)
    assert not any(isinstance(e, RuleCalibration) for e in events)


def test_call_view_shows_the_calibration_in_the_decision() -> None:
    view = CallView()
    view.apply(_run(RuleAdapter()))
    assert view.calibration is not None and view.calibration.startswith("adapt: ")
    assert view.decision is not None and view.decision.adapt is not None
    assert view.decision.adapt.startswith("adapt: ")
