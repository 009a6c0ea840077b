"""`cutin simulate --jobs N` on a line: N real-time calls at once in one process.

Against the known agent (examples/known_agent.py: one pipeline per connection, its
truth file counting every call it took), over real sockets on loopback, with the real
VAD and Whisper. What is asserted comes from the logs, the WAVs and the agents' truth,
never from wall-clock tightness: calls that overlapped in time, each agent taking one
call, every log ended and every WAV as long as its call.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import subprocess
import sys
import time
import wave
from contextlib import ExitStack
from pathlib import Path

import pytest

from sessions.log import read_session
from sessions.log.models import EndEvent
from tests.batch.helpers import simulate
from tests.support.known_agent import KnownAgent, running_known_agent

CALL_S = 10.0
STOP_S = 3.0
"""SIGINT to exit of a batch with two calls under way: about 0.2 s on a loaded 2-core
machine (before: ~15 s, the hang-up waited for the calls' STT backlog and the exit for
the transcription under way)."""


def _span(path: Path) -> tuple[float, float, EndEvent]:
    """A finished call's (start, end) in epoch seconds, and its end event."""
    session = read_session(path)
    start = dt.datetime.fromisoformat(session.header.started_at).timestamp()
    end = session.of(EndEvent)[-1]
    return start, start + end.t, end


def _wav_seconds(path: Path) -> float:
    with wave.open(str(path)) as w:
        return float(w.getnframes() / w.getframerate())


def test_three_calls_at_once_each_take_a_free_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    with ExitStack() as stack:
        agents: list[KnownAgent] = [stack.enter_context(running_known_agent()) for _ in range(3)]
        argv = [a for agent in agents for a in ("--agent", f"twilio:{agent.url}")]
        code, _, err = simulate(
            capsys, *argv, "--runs", "3", "--jobs", "3",
            "--max-seconds", str(CALL_S), "--out", str(out),
        )  # fmt: skip
        assert code == 0, err
        for agent in agents:
            agent.wait_for("call_end", timeout=60)
        # Each agent takes one call at a time: each took exactly one of the three.
        assert [len(agent.events("call_start")) for agent in agents] == [1, 1, 1]
    logs = sorted(out.glob("*.jsonl"))
    assert len(logs) == 3
    assert not list(out.glob("*.part")) and not list(out.glob("*.failed"))
    spans = [_span(p) for p in logs]
    dialled = {read_session(p).header.agent.base_url for p in logs}
    assert dialled == {agent.url for agent in agents}
    for path, (_, _, end) in zip(logs, spans, strict=True):
        assert end.reason == "hangup" and end.t >= CALL_S - 0.5
        assert end.frame_lag is not None and end.frame_lag.frames >= int(CALL_S / 0.032) - 5
        # The recording holds the whole call, frame for frame.
        assert abs(_wav_seconds(path.with_suffix(".wav")) - end.t) < 0.1
    # The three ran at once: some moment lies inside all of them, and the batch spans
    # well under three calls' time.
    assert max(s for s, _, _ in spans) < min(e for _, e, _ in spans)
    longest = max(e - s for s, e, _ in spans)
    assert max(e for _, e, _ in spans) - min(s for s, _, _ in spans) < 2 * longest


def test_a_blocked_pump_flags_the_call_as_lagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A far end that holds the pump 80 ms per 32 ms frame: every frame is processed
    at least 48 ms late, so the call's p99 lag is over a frame by construction."""
    from sessions.call.far_ends.line import LineFarEnd

    frame = LineFarEnd.frame

    def slow_frame(self: LineFarEnd, t: float, t1: float) -> float:
        time.sleep(0.08)
        return frame(self, t, t1)

    monkeypatch.setattr(LineFarEnd, "frame", slow_frame)
    out = tmp_path / "b"
    with running_known_agent() as agent:
        code, stdout, err = simulate(
            capsys, "--agent", f"twilio:{agent.url}", "--max-seconds", "4",
            "--out", str(out), "--json",
        )  # fmt: skip
    assert code == 0, err
    [log] = out.glob("*.jsonl")
    end = read_session(log).of(EndEvent)[-1]
    assert end.frame_lag is not None and end.frame_lag.p99_s > 0.032
    assert end.frame_lag.late_frames > 0
    assert '"lagged": ["' + log.stem + '"]' in stdout
    assert "lagged" in err and "not trusted" in err
    # The audit notes it and leaves it out of the latency figures unless asked.
    capsys.readouterr()
    from cutin_tui.cli import main

    assert main(["audit", str(out)]) == 0
    audited = capsys.readouterr().out
    audited = " ".join(audited.split())
    assert "1 call lagged" in audited and "--keep-lagged" in audited
    assert "latencies, no_responses, talk-over, pauses and dead air are left out" in audited
    assert main(["audit", "--keep-lagged", str(out)]) == 0
    kept = " ".join(capsys.readouterr().out.split())
    # Kept: its no_responses count against the agent, and the note says they may not be its.
    assert "kept in the latency figures" in kept and "may be this machine falling behind" in kept


def test_ctrl_c_mid_batch_then_a_rerun_gives_exactly_the_planned_calls(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    out = tmp_path / "b"
    env = {**child_env, "CUTIN_CACHE_DIR": str(tmp_path / "cache")}
    with running_known_agent() as agent:
        argv = [
            sys.executable, "-m", "cutin_tui", "simulate", "--agent", f"twilio:{agent.url}",
            "--runs", "4", "--jobs", "2", "--max-seconds", "8", "--out", str(out),
        ]  # fmt: skip
        child = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            # Two calls are running (their logs open) and have taken a few frames.
            deadline = time.monotonic() + 120
            while len(list(out.glob("*.jsonl.part"))) < 2:
                assert child.poll() is None, child.communicate()
                assert time.monotonic() < deadline, "no two calls started"
                time.sleep(0.1)
            time.sleep(2.0)
            child.send_signal(signal.SIGINT)
            sent = time.monotonic()
            _, err = child.communicate(timeout=60)
            stopped_s = time.monotonic() - sent
        finally:
            if child.poll() is None:
                child.kill()
        assert child.returncode == 130, err
        assert "Traceback" not in err
        # The running calls hang up at once: their untranscribed audio is dropped, not
        # waited for (it was ~15 s of STT backlog), and no worker thread holds the exit.
        assert stopped_s < STOP_S, f"{stopped_s:.1f} s from SIGINT to exit\n{err}"
        assert not list(out.glob("*.part")), "no half log is left behind"
        failed = sorted(out.glob("*.jsonl.failed"))
        assert len(failed) >= 1
        for path in failed:
            ends = read_session(path, skip_bad=True).of(EndEvent)
            assert ends and ends[-1].reason == "interrupted"
        # The summary counts the calls hung up mid-call (filed .failed) apart from those
        # never started: together with the finished ones they are the four planned.
        finished = len(list(out.glob("*.jsonl")))
        last = err.strip().splitlines()[-1]
        counts = re.search(
            r"(\d+) calls? run, 0 skipped, 0 failed, (\d+) hung up mid-call "
            r"\(kept as \.failed\), (\d+) not run \(interrupted; rerun the same command to "
            r"resume\)",
            last,
        )
        assert counts is not None, err
        ran, hung_up, not_run = (int(g) for g in counts.groups())
        assert (ran, hung_up) == (finished, len(failed)) and ran + hung_up + not_run == 4, last
        assert err.count("interrupted") == 1, err  # said once, not once per call
        rerun = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stderr
    planned = {f"line-check__a0.5_b0_g0.5__run{k:02d}" for k in range(1, 5)}
    assert {p.name.removesuffix(".jsonl") for p in out.glob("*.jsonl")} == planned
    assert {p.stem for p in out.glob("*.wav")} == planned
    assert not [p for p in os.listdir(out) if p.endswith((".part", ".failed"))]
