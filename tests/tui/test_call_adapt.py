"""F12 switches ``--adapt`` during a call: logged, shown in the controls panel, and the
why panel (the decision line) shows the calibrated thresholds the rule then uses."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from cutin_tui.screens.call import CallScreen
from cutin_tui.widgets import DecisionLine, DialsPanel
from cutin_tui.widgets.dials import dial_lines
from sessions.log import Opportunity, read_session
from sessions.log.models import DialsChanged, RuleCalibration
from tests.tui.helpers import (
    SIZE,
    advance,
    call_screen,
    type_text,
    virtual_call,
)


def _dials_text(screen: CallScreen) -> str:
    return "\n".join(line for line, _ in dial_lines(screen.query_one(DialsPanel).state))


async def test_adapt_key_switches_calibration_on_and_off(tmp_path: Path) -> None:
    app, driver = virtual_call(beta=0.7, gamma=0.5, sessions_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        assert "adapt             off" in _dials_text(screen)
        assert "patience 4.05 s (10 − 8.5β)" in _dials_text(screen)
        # Three agent turns heard with adapt off (they end by 30 s on this seed):
        # nothing calibrated, nothing logged.
        await advance(pilot, driver, 31.0)
        assert screen.view.calibration is None
        await type_text(pilot, "ok")
        await pilot.press("f12")  # a call key: works while the box has focus
        assert screen.adapt is True
        assert screen.query_one(Input).value == "ok"
        await advance(pilot, driver, 31.1)
        text = _dials_text(screen)
        assert "adapt             on" in text and "adapted" in text
        adapted = screen.view.adapted
        assert adapted is not None
        assert f"patience {adapted['interrupt_patience_s']:.2f} s" in text
        await advance(pilot, driver, 50.0)
        # The why panel: the last decision, and under it the calibration it used.
        decision = screen.query_one(DecisionLine).decision
        assert decision is not None and decision.adapt == screen.view.calibration
        assert decision.adapt is not None and "adapt: " in decision.adapt
        assert "patience" in decision.adapt and "replayed" in decision.adapt
        await pilot.press("f12")
        await advance(pilot, driver, 50.1)
        assert screen.adapt is False and screen.view.adapted is None
        assert "patience 4.05 s (10 − 8.5β)" in _dials_text(screen)
        assert screen.query_one(DecisionLine).decision is decision  # no decision since
        await pilot.press("f10")
        await pilot.pause()
    log = read_session(driver.log_path or "")
    assert [d.autos.get("adapt") for d in log.of(DialsChanged)] == [True, False]
    cals = log.of(RuleCalibration)
    on = cals[0]
    assert on.reason == "on" and on.source == "live" and on.calibrated
    assert 31.0 <= on.t < 31.1 and on.turns == [0, 1, 2]  # the turns heard before
    assert on.params == adapted
    assert {c.reason for c in cals[1:]} <= {"turn"} and all(c.t < 50.0 for c in cals)
    # Each decision while on used the calibration in force; none before or after.
    checked = 0
    for opp in log.of(Opportunity):
        needed = {c["name"]: c["needed"] for c in opp.checks if c.get("rule") == "interrupt"}
        in_force = [c for c in cals if c.t <= opp.t]
        if 31.0 < opp.t < 50.0 and in_force and in_force[-1].params is not None:
            patience = in_force[-1].params["interrupt_patience_s"]
            assert needed["speaking_s"] == f"≥ {patience:g}"
            checked += 1
        elif needed:
            assert needed["speaking_s"] == "≥ 4.05"
    assert checked > 0
