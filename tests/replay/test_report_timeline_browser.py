"""The HTML report of a real black-box call and of a simulated batch, opened in headless
Chromium (issue 30, "How it is checked").

The real call: ``cutin call --agent twilio:...`` to the known-by-construction agent
(tests/support/known_agent.py; it stops 300 ms after the caller comes in and
records where) on a real
loopback line, in real time, its two-channel recording beside the log. The batch: two
calls of ``cutin simulate`` on the virtual clock. For each page: a timeline per call
whose cut, stop and backchannel marks, read back from the SVG's x coordinates, sit at
the times the log holds; audio elements whose WAV (decoded from the data URI) is as long
as its stretch and is the recording's own frames; no reference to the network; and
Chromium loads it with no console error and paints a screenshot with the lanes' colours.
"""

from __future__ import annotations

import io
import subprocess
import sys
import wave
from pathlib import Path

import pytest

from replay.load import load_paths
from replay.model import Trial
from replay.report.call_audio import stretches
from replay.report.trials import render_html
from tests.measures.harness import dial
from tests.replay.report_page import (
    PX_S,
    check_in_browser,
    marks_match_the_log,
    network_references,
    read_page,
)
from tests.support.known_agent import running_known_agent

TOL = 0.020
"""The measures' bound (tests/measures): a time within 20 ms of the truth."""


@pytest.mark.slow
def test_report_of_a_real_black_box_call(tmp_path: Path) -> None:
    with running_known_agent("--yield-after-ms", "300") as agent:
        call = dial(agent, tmp_path / "call", beta=1.0, seconds=24)
    (trial,) = load_paths([call.log])
    assert isinstance(trial, Trial)
    text = render_html([trial])
    page = read_page(text)
    assert len(page.strips) == 1  # a 24 s call: one strip
    assert marks_match_the_log(page, [call.log]) >= 2
    assert network_references(text) == []
    # Where the page puts the stop is where the agent's own record says its sound
    # stopped on the line (the truth, not cutin's view), within 20 ms.
    stops = call.truth("stop")
    yields = [y for y in call.of("agent_yield") if y.after == "interruption" and y.yielded]
    assert yields and stops
    for y in yields:
        truth = min(stops, key=lambda r: abs(r["onset_t"] - y.onset_t))
        on_line = call.on_line(truth["t"])
        drawn = min(page.of("stop"), key=lambda t: abs(t - on_line))
        assert abs(drawn - on_line) <= TOL + PX_S, (y, truth, on_line, drawn)
    # Each stretch with a cut, a backchannel or a yield is there to hear, both channels,
    # the recording's own frames, as long as the stretch says.
    want = stretches(trial)
    assert want and len(page.audios) == len(want)
    with wave.open(str(call.log.with_suffix(".wav")), "rb") as w:
        rate, frames = w.getframerate(), w.readframes(w.getnframes())
    for s, audio in zip(want, page.audios, strict=True):
        assert (audio.start, audio.end) == (s.start, s.end) and audio.channels == 2
        assert abs(audio.seconds - (s.end - s.start)) <= 1 / rate + 1e-9
        first = int(s.start * rate) * 4
        with wave.open(io.BytesIO(audio.wav), "rb") as w:
            got = w.readframes(w.getnframes())
        assert got == frames[first : first + len(got)]
    check_in_browser(text, tmp_path, len(page.strips), unfolded=True)


@pytest.mark.slow
def test_report_of_a_simulated_batch(tmp_path: Path) -> None:
    out = tmp_path / "batch"
    subprocess.run(
        [sys.executable, "-m", "cutin_tui", "simulate", "--scenario", "retail-order-change",
         "--beta", "0,1", "--gamma", "1", "--seed", "3", "--out", str(out)],
        check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    logs = sorted(out.glob("*.jsonl"))
    assert len(logs) == 2
    trials = load_paths(logs)
    text = render_html(trials)
    page = read_page(text)
    # One timeline per call, a strip a minute, covering the call.
    assert [s.t0 for s in page.strips].count(0.0) == 2
    assert max(s.t1 for s in page.strips) >= max(t.duration or 0.0 for t in trials)
    assert marks_match_the_log(page, logs) > 5
    assert page.audios == []  # text calls on the virtual clock have no recording
    assert "no recording beside the log" in text
    assert network_references(text) == []
    check_in_browser(text, tmp_path, len(page.strips), unfolded=False)
