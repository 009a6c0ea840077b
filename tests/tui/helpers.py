"""Building a call screen on the virtual clock, and driving it like a tester."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from controls.tendencies import Tendencies
from cutin_tui.calls.call_driver import VirtualDriver
from cutin_tui.calls.call_setup import open_call
from cutin_tui.screens.app import CutinApp
from cutin_tui.screens.call import CallScreen
from sessions.plan import CallPlan

SIZE = (120, 40)


def virtual_call(
    *,
    alpha: float = 0.5,
    beta: float = 0.0,
    gamma: float = 0.5,
    seed: int = 1,
    sessions_dir: Path | None = None,
    scenario: str = "retail-order-change",
    auto_interrupt: bool = True,
    auto_backchannel: bool = True,
) -> tuple[CutinApp, VirtualDriver]:
    """An app showing a call that only moves when the test advances it."""
    driver = open_call(
        CallPlan(
            scenario=scenario,
            tendencies=Tendencies(alpha, beta, gamma),
            seed=seed,
            sessions_dir=sessions_dir,
            auto_interrupt=auto_interrupt,
            auto_backchannel=auto_backchannel,
            virtual=True,
        ),
    )
    assert isinstance(driver, VirtualDriver)
    return CutinApp(call=driver), driver


def call_screen(app: CutinApp) -> CallScreen:
    screen = app.screen
    assert isinstance(screen, CallScreen), type(screen)
    return screen


async def advance(pilot: Pilot[object], driver: VirtualDriver, until: float) -> None:
    """Run the call to ``until`` seconds, then let the screen draw it."""
    driver.advance(until)
    app = pilot.app
    assert isinstance(app, CutinApp)
    call_screen(app).pump()
    await pilot.pause()
    await pilot.pause()  # the transcript scrolls to its end after its refresh


async def type_text(pilot: Pilot[object], text: str) -> None:
    """Type into the focused input key by key."""
    keys = ["space" if ch == " " else ch for ch in text]
    await pilot.press(*keys)


async def advance_until_my_turn(
    pilot: Pilot[object], driver: VirtualDriver, *, limit: float = 300.0, step: float = 0.5
) -> float:
    """Run the call until the floor is the tester's (or it ends); returns the call time."""
    app = pilot.app
    assert isinstance(app, CutinApp)
    screen = call_screen(app)
    t = driver.now()
    while t < limit and screen.view.ended is None:
        t += step
        driver.advance(t)
        screen.pump()
        if screen.view.floor_free(t):
            break
    await pilot.pause()
    return t
