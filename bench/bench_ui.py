"""The live call screen's budget (DESIGN.md): UI event-loop lag during a call ≤ 20 ms p99.

The real app runs headless (``run_test``, 120 × 40) with a real-time call at
β = γ = 1 (an interruption or a backchannel at most pauses, the log written to a
temp dir): the call loop on its thread, the screen draining its events every
30 ms. A 10 ms timer on the app records how late each tick fires; lag = the gap
between ticks minus 10 ms. Side by side: the same screen with the call on hold
(nothing happening), i.e. the lag the event loop has anyway.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import TickLag, percentile

SIZE = (120, 40)
TICK_S = 0.010
CALL_S = 20.0
IDLE_S = 5.0


async def _lags(
    seconds: float, *, beta: float, gamma: float, hold: bool
) -> tuple[list[float], int]:
    """Tick lags (s) over ``seconds`` of a call, and how many events the call emitted."""
    from controls.tendencies import Tendencies
    from cutin_tui.calls.call_setup import open_call
    from cutin_tui.screens.app import CutinApp
    from cutin_tui.screens.call import CallScreen
    from sessions.call.commands import EndCall
    from sessions.plan import CallPlan

    with tempfile.TemporaryDirectory(prefix="cutin-bench-ui-") as tmp:
        driver = open_call(
            CallPlan(tendencies=Tendencies(0.5, beta, gamma), seed=7, sessions_dir=Path(tmp))
        )
        seen: list[int] = []
        driver.loop.listeners.append(lambda _event: seen.append(1))  # count only
        if hold:
            driver.submit(EndCall("hold"))  # the screen runs, the call does nothing
        app = CutinApp(call=driver)
        sampler = TickLag(TICK_S)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.set_interval(TICK_S, sampler.tick)
            await asyncio.sleep(seconds)
            assert isinstance(app.screen, CallScreen)
            await pilot.press("f10")
        app.stop_calls()
    return sampler.lags, len(seen)


def rows() -> list[dict[str, object]]:
    """The rows bench/run.py prints."""
    call, n_events = asyncio.run(_lags(CALL_S, beta=1.0, gamma=1.0, hold=False))
    idle, _ = asyncio.run(_lags(IDLE_S, beta=1.0, gamma=1.0, hold=True))
    return [
        {
            "budget": "UI event-loop lag during a call",
            "target": "≤ 20 ms p99",
            "measured": f"p99 {percentile(call, 0.99) * 1e3:.1f} ms, "
            f"p50 {statistics.median(call) * 1e3:.1f} ms",
            "target_value": 20,
            "measured_value": round(percentile(call, 0.99) * 1e3, 2),
            "unit": "ms",
            "peer": f"screen with no call running: p99 {percentile(idle, 0.99) * 1e3:.1f} ms",
            "note": f"real-time typed-mode call at β = γ = 1 for {CALL_S:.0f} s, log on disk; "
            f"{n_events} events; {len(call)} ticks of a {TICK_S * 1e3:.0f} ms timer; "
            f"max {max(call) * 1e3:.1f} ms; "
            f"headless {SIZE[0]}×{SIZE[1]}",
        }
    ]


if __name__ == "__main__":
    for row in rows():
        print(row)
