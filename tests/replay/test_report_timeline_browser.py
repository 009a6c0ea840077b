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

import numpy as np
import pytest

from replay.load import load_paths
from replay.model import Trial
from replay.report.call_audio import stretches
from replay.report.trials import render_html
from sessions.log.models import AgentTurnEnd, AgentYield, Backchannel
from sessions.log.reader import read_session
from tests.gallery.png_pixels import read_png
from tests.gallery.test_handout import CHROMIUM_FLAGS, chromium
from tests.measures.harness import dial
from tests.replay.report_page import Page, network_references, read_page
from tests.support.known_agent import running_known_agent

PX_S = 0.01
TOL = 0.020
"""The measures' bound (tests/measures): a time within 20 ms of the truth."""


def _marks_match_the_log(page: Page, logs: list[Path]) -> int:
    """Every cut, stop and backchannel of the logs is on the page at its time; how many."""
    want: dict[str, list[float]] = {"cut": [], "stop": [], "backchannel": []}
    for log in logs:
        session = read_session(log)
        want["cut"] += [e.cut_t for e in session.of(AgentTurnEnd) if e.cut_t is not None]
        want["stop"] += [
            y.stop_t
            for y in session.of(AgentYield)
            if y.after == "interruption" and y.yielded and y.stop_t is not None
        ]
        want["backchannel"] += [e.t for e in session.of(Backchannel)]
    n = 0
    for kind, times in want.items():
        got = sorted(page.of(kind))
        assert len(got) == len(times), kind
        for w, g in zip(sorted(times), got, strict=True):
            assert abs(w - g) < PX_S, (kind, w, g)
        n += len(times)
    return n


def _open_in_chromium(html_path: Path, tmp_path: Path) -> tuple[str, str, np.ndarray]:
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    common = [
        browser,
        *CHROMIUM_FLAGS,
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    dom = subprocess.run(
        [*common, "--dump-dom", html_path.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    shot = tmp_path / "page.png"
    subprocess.run(
        [*common, f"--screenshot={shot}", "--window-size=1300,3200", html_path.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.is_file(), dom.stderr[-2000:]
    return dom.stdout, dom.stderr, read_png(shot)


def _check_in_browser(text: str, tmp_path: Path, n_strips: int, *, unfolded: bool) -> None:
    html_path = tmp_path / "report.html"
    html_path.write_text(text, encoding="utf-8")
    dom, log, pixels = _open_in_chromium(html_path, tmp_path)
    # The browser built the page: every strip, with its marks, is in its DOM.
    assert dom.count('<svg class="strip"') == n_strips
    assert "CONSOLE" not in log, log[-2000:]  # no console message (an error would be one)
    assert "ERR_" not in log and "Failed to load" not in log, log[-2000:]
    rgb = pixels[..., :3].astype(np.float64)
    dark = (rgb.mean(axis=2) < 100).mean()
    assert 0.002 < dark < 0.5, f"text covers a sane share of the page ({dark:.4f})"
    if not unfolded:  # a batch's calls are folded: their timelines are not on screen
        return
    # The lanes were painted: the agent's blue and the caller's green are on screen.
    for colour in ((0x3B, 0x6F, 0xB6), (0x3F, 0xAE, 0x6A)):
        near = (np.abs(rgb - np.array(colour)).sum(axis=2) < 40).sum()
        assert near > 200, colour


@pytest.mark.slow
def test_report_of_a_real_black_box_call(tmp_path: Path) -> None:
    with running_known_agent("--yield-after-ms", "300") as agent:
        call = dial(agent, tmp_path / "call", beta=1.0, seconds=24)
    (trial,) = load_paths([call.log])
    assert isinstance(trial, Trial)
    text = render_html([trial])
    page = read_page(text)
    assert len(page.strips) == 1  # a 24 s call: one strip
    assert _marks_match_the_log(page, [call.log]) >= 2
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
    _check_in_browser(text, tmp_path, len(page.strips), unfolded=True)


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
    assert _marks_match_the_log(page, logs) > 5
    assert page.audios == []  # text calls on the virtual clock have no recording
    assert "no recording beside the log" in text
    assert network_references(text) == []
    _check_in_browser(text, tmp_path, len(page.strips), unfolded=False)
