"""The log's header is the instant of t = 0: a far end can align the log with its own logs.

A far end on loopback (tests/support/wall_clock_agent.py, a Twilio Media Streams agent)
times every message it receives on its own wall clock, ``time.time()``, and works out
from the audio alone when the caller's line time 0 was and when the caller's first
sound began. The log's ``started_at`` / ``t0_unix`` plus a logged time must land on the
far end's wall time within 5 ms (docs/log-format.md, "Aligning with your agent's logs").

Two commands, each through its own start-up: ``cutin simulate`` on a line (the batch
runner, in-process), and ``cutin call`` (its plan, its driver and the call screen, which
starts the call when it is mounted, as the app does).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import shutil
import time
from pathlib import Path

import pytest

from sessions.log import read_session
from sessions.log.models import LineEvent, UserTurn
from tests.batch.helpers import simulate
from tests.support.wall_clock_agent import RATE, WallClockAgent

pytestmark = [
    pytest.mark.audio,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]
TOL = 0.005
"""The issue's bound: the log and the far end's own clock agree within 5 ms."""


def _aligned(log: Path, agent: WallClockAgent) -> dict[str, float]:
    """Assert the log's t = 0 and the caller's first onset on the far end's clock; returns
    the differences (seconds, log minus far end)."""
    session = read_session(log)
    (opened,) = [e for e in session.of(LineEvent) if e.kind == "open"]
    heard = agent.heard(str(opened.data["stream_sid"]))
    header = session.header
    assert header.clock == "real", header
    assert header.t0_unix is not None and header.t0_monotonic is not None
    started = dt.datetime.fromisoformat(header.started_at).timestamp()
    assert abs(started - header.t0_unix) <= 0.0005 + 1e-6  # the same instant, in ms
    zero = heard.zero
    diffs = {"t0_unix": header.t0_unix - zero, "started_at": started - zero}
    assert abs(diffs["t0_unix"]) <= TOL, diffs
    assert abs(diffs["started_at"]) <= TOL, diffs
    # The caller's first sound: the log's time of it against the far end's.
    turns = session.of(UserTurn)
    assert turns, "the caller never spoke"
    first = heard.first_sound()
    assert first is not None, "the far end heard no sound"
    far_onset = zero + first / RATE
    logged_onset = header.t0_unix + turns[0].t
    diffs["onset"] = logged_onset - far_onset
    assert abs(diffs["onset"]) <= TOL, diffs
    # And the audio never reached the far end before the log says it began.
    diffs["onset_received_after"] = heard.received_at(first) - logged_onset
    assert diffs["onset_received_after"] >= -TOL, diffs
    print(f"{log.name}: " + ", ".join(f"{k} {v * 1000:+.2f} ms" for k, v in diffs.items()))
    return diffs


@pytest.mark.parametrize("jobs", [1, 2])
def test_cutin_simulate_on_a_line_logs_t0_on_the_far_ends_clock(
    jobs: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One call (the batch runner's), or two at once on one pump (``--jobs``). The two
    calls also run with ``CUTIN_PLAYOUT_MS`` set: the line's jitter depth their logs state
    is the setting's, the one call's the default (60 ms)."""
    depth_ms = {1: None, 2: 150.0}[jobs]
    if depth_ms is not None:
        monkeypatch.setenv("CUTIN_PLAYOUT_MS", str(depth_ms))
    out = tmp_path / "batch"
    with WallClockAgent() as agent:
        # The agent says nothing: the scripted caller speaks first, at 4 s.
        code, _, err = simulate(
            capsys, "--agent", f"twilio:{agent.url}", "--runs", str(jobs),
            "--jobs", str(jobs), "--max-seconds", "5.5", "--out", str(out),
        )  # fmt: skip
        assert code == 0, err
        logs = sorted(out.glob("*.jsonl"))
        assert len(logs) == jobs
        for log in logs:
            _aligned(log, agent)
            stated = [
                e.data["depth_s"]
                for e in read_session(log).events
                if e.type == "line" and e.kind == "playout"
            ]
            assert stated == [(depth_ms or 60.0) / 1000], stated


async def test_cutin_call_on_a_line_logs_t0_on_the_far_ends_clock(tmp_path: Path) -> None:
    from cutin_tui.calls.call_driver import RealtimeDriver
    from cutin_tui.calls.call_setup import open_call
    from cutin_tui.cli import build_parser
    from cutin_tui.cli.call_cmd import call_plan
    from cutin_tui.screens.app import CutinApp
    from sessions.settings import Settings
    from tests.tui.helpers import SIZE

    settings = Settings(sessions_dir=tmp_path / "sessions", cache_dir=tmp_path / "cache")
    with WallClockAgent() as agent:
        args = build_parser().parse_args(["call", "--agent", f"twilio:{agent.url}"])
        driver = open_call(call_plan(args, settings), settings)  # as `cutin call` does
        assert isinstance(driver, RealtimeDriver)
        await asyncio.sleep(0.3)  # the log exists; the app takes a while to show the call
        app = CutinApp(call=driver)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.click("Input")
            await pilot.press(*"hello", "enter")  # the tester types a line: it is spoken
            deadline = time.monotonic() + 6.0
            while time.monotonic() < deadline and driver.now() < 2.5:
                await asyncio.sleep(0.1)
            assert driver.now() >= 2.5
        driver.stop()
        assert driver.log_path is not None
        _aligned(driver.log_path, agent)
