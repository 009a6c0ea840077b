"""Agent silence onset → backchannel heard, in a whole real-time call
(``cutin call --speech espeak`` at γ = 1) through a real audio device: a userspace
PulseAudio null sink.

The call's own loop, VAD on the synthesized agent audio, the rule, the token from
the in-memory cache, the device: both onsets are read off the sink's monitor
recording. bench_voice.py measures the same budget for the bare player pipeline;
bench_voice_mic.py measures the microphone's barge-in.

Also the UI event-loop lag of the live call screen while a voice call plays (as in
bench_ui.py, which measures a typed call): synthesis, VAD and the device all run
beside the screen.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from bench._timing import TickLag, percentile
from controls import Tendencies

GREETING = "Hello, this is the order line. What can I do for you?"
LONG_TURN = (
    "Thanks, I have your order open here. It is packed at our warehouse and it has not "
    "gone out yet. The address on file is the Elm Street one from last year. We can still "
    "change it today, at no cost to you. The parcel should arrive on Thursday as planned. "
    "I will send you an email with the details once it is done. The courier will leave it "
    "at the door if nobody is home. Your refund for the old order was approved this morning."
)
ROW: dict[str, object] = {
    "budget": "agent silence onset → backchannel heard, in a real call (--speech espeak)",
    "target": "≤ 300 ms p95",
    "target_value": 300,
    "unit": "ms",
}


def backchannel_in_a_call(tmp: Path) -> dict[str, object]:
    from cutin_tui.calls.call_setup import open_call
    from sessions.call.commands import SubmitText
    from sessions.plan import CallPlan
    from sessions.speech.audio import MicRecorder, join_blocks
    from tests.voice_call.helpers import Events, read_two_channels, scenario_file
    from tests.voice_call.measure import describe_ms, token_onsets_on_monitor

    plan = CallPlan(
        scenario=scenario_file(tmp / "scenario.toml", GREETING, LONG_TURN),
        tendencies=Tendencies(0.0, 0.0, 1.0),
        sessions_dir=tmp,
        speech="espeak",
    )
    driver = open_call(plan)
    monitor = MicRecorder(blocksize=256).start()
    monitor.started.wait(10)
    events = Events(driver)
    try:
        driver.start()
        events.wait_for(lambda e: e.type == "agent_turn_end" and e.turn == 0, 20)
        driver.submit(SubmitText("Hi, I would like to change my address."))
        events.wait_for(lambda e: e.type == "agent_turn_end" and e.turn == 1, 60)
    finally:
        driver.stop()
        recorded = join_blocks(monitor.drain())
        monitor.stop()
    assert driver.recording_path is not None
    agent, _caller = read_two_channels(driver.recording_path)
    fired = [e.t for e in events.of("backchannel")]
    timings, skipped = token_onsets_on_monitor(recorded, agent, fired)
    if not timings:
        return {**ROW, "measured": "error", "note": "no backchannel found on the monitor"}
    player = driver.voice.player  # type: ignore[attr-defined]
    clock = driver.voice.clock  # type: ignore[attr-defined]
    return {
        **ROW,
        "measured": describe_ms([t.latency_s for t in timings]),
        "measured_value": round(percentile([t.latency_s for t in timings], 0.95) * 1e3, 1),
        "peer": "τ-Voice's 2 s polling: ≥ 1 s (bare player pipeline: the row above)",
        "note": f"{len(timings)} backchannels at γ = 1 over one {len(LONG_TURN.split())}-word "
        f"agent turn, read off the null-sink monitor ({skipped} skipped); includes the 200 ms "
        f"rule (7 VAD frames) and Silero's own lag; device latency "
        f"{player.latency_s * 1000:.0f} ms, loop lead {clock.lead * 1000:.0f} ms, "
        f"{player.underflows} underflows",
    }


UI_SECONDS = 12.0
UI_TICK_S = 0.010


async def _ui_lags(tmp: Path) -> tuple[list[float], int]:
    from cutin_tui.calls.call_setup import open_call
    from cutin_tui.screens.app import CutinApp
    from cutin_tui.screens.call import CallScreen
    from sessions.plan import CallPlan

    plan = CallPlan(
        scenario=scenario_file_path(tmp, [LONG_TURN, LONG_TURN]),
        tendencies=Tendencies(0.5, 1.0, 1.0),
        sessions_dir=tmp,
        speech="espeak",
    )
    driver = open_call(plan)
    seen: list[int] = []
    driver.loop.listeners.append(lambda _event: seen.append(1))
    app = CutinApp(call=driver)
    sampler = TickLag(UI_TICK_S)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.set_interval(UI_TICK_S, sampler.tick)
        await asyncio.sleep(UI_SECONDS)
        assert isinstance(app.screen, CallScreen)
        await pilot.press("f10")
    app.stop_calls()
    driver.stop()
    return sampler.lags, len(seen)


def scenario_file_path(tmp: Path, turns: list[str]) -> str:
    from tests.voice_call.helpers import scenario_file

    return scenario_file(tmp / "ui-scenario.toml", *turns)


def ui_lag_in_a_voice_call(tmp: Path) -> dict[str, object]:
    lags, events = asyncio.run(_ui_lags(tmp))
    p99 = percentile(lags, 0.99)
    return {
        "budget": "UI event-loop lag during a voice call (--speech espeak)",
        "target": "≤ 20 ms p99",
        "measured": f"p99 {p99 * 1e3:.1f} ms, p50 {statistics.median(lags) * 1e3:.1f} ms",
        "target_value": 20,
        "measured_value": round(p99 * 1e3, 2),
        "unit": "ms",
        "peer": "typed call: bench_ui's row",
        "note": f"real-time call at β = γ = 1 for {UI_SECONDS:.0f} s through PulseAudio, log "
        f"and WAV on disk; {events} events; {len(lags)} ticks of a 10 ms timer; "
        f"max {max(lags) * 1e3:.1f} ms; headless 120×40",
    }


def rows() -> list[dict[str, object]]:
    """The rows bench/run.py prints."""
    if shutil.which("espeak-ng") is None:
        return [{**ROW, "measured": "skipped", "note": "espeak-ng is not installed"}]
    from tests.support.pulse import PulseUnavailable, pulse_session

    try:
        with tempfile.TemporaryDirectory(prefix="cutin-voice-call-") as tmp_name:
            tmp = Path(tmp_name)
            os.environ.setdefault("CUTIN_CACHE_DIR", str(tmp / "cache"))
            with pulse_session(tmp / "pulse"):
                (tmp / "bc").mkdir()
                (tmp / "ui").mkdir()
                return [backchannel_in_a_call(tmp / "bc"), ui_lag_in_a_voice_call(tmp / "ui")]
    except PulseUnavailable as exc:
        return [{**ROW, "measured": "skipped", "note": str(exc)}]
