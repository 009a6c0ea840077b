"""Pilot tests of the call screen on a black-box agent: a remote loop on the virtual clock
against the simulated far end (real espeak-ng, Silero VAD and faster-whisper).

The screen only sees what the driver's drained events say: the line's status, the cut at
the caller's onset, the stop where the agent's audio actually stopped, the yield note,
and a line that fails mid-call ending it with an error, never a traceback.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from controls.tendencies import Tendencies
from cutin_tui.calls.call_driver import VirtualDriver
from cutin_tui.screens.app import CutinApp
from cutin_tui.screens.call import LINE_TOASTS
from cutin_tui.views.call_view import AgentEntry
from cutin_tui.widgets import DecisionLine, LineStatus, TranscriptView
from replay.report.confidence import UNSURE_MARK
from sessions.call.config import CallConfig
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.callers.users import ScriptedUser
from sessions.lines.base import LineNotice, NoticeKind
from sessions.scenarios import load_scenario
from tests.support.sim_agent import SimAgent, SimAgentLine
from tests.tui.helpers import SIZE, advance, call_screen

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]


class _TwilioLikeLine(SimAgentLine):
    """The simulated far end under a Twilio line's name, target and stated format."""

    name = "twilio"
    target = "ws://127.0.0.1:8765/"
    audio_format = "audio/x-mulaw;rate=8000"

    def open(self, timeout_s: float = 10.0) -> None:
        super().open(timeout_s)
        self._notices.append(
            LineNotice(
                NoticeKind.FORMAT,
                "audio/x-mulaw 8000 Hz mono",
                {"encoding": "audio/x-mulaw", "rate": 8000, "channels": 1},
            )
        )


class _FailingLine(_TwilioLikeLine):
    """Drops after ``fail_after`` frames taken: a FAILED notice, as a broken socket gives."""

    def __init__(self, agent: SimAgent, fail_after: int) -> None:
        super().__init__(agent)
        self.fail_after = fail_after
        self.frames = 0

    def take(self, n: int) -> np.ndarray:
        self.frames += 1
        return super().take(n)

    def notices(self) -> list[LineNotice]:
        out = super().notices()
        if 10 <= self.frames < 16:  # a chatty agent: six malformed events, then the drop
            out.append(LineNotice(NoticeKind.ERROR, f"malformed event #{self.frames}"))
        if self.frames == self.fail_after:
            out.append(
                LineNotice(NoticeKind.FAILED, "line broke: [bold]connection reset[/bold]\x1b[2J")
            )
        return out


def _remote_app(
    tmp_path: Path, line: SimAgentLine, *, beta: float, gamma: float = 0.0
) -> tuple[CutinApp, VirtualDriver]:
    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, beta, gamma), seed=3)
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:8765/", cache_dir=tmp_path / "cache")
    line.open()
    loop = build_line_call(spec, config, user=ScriptedUser(scenario), line=line, virtual=True)
    driver = VirtualDriver(loop, scenario, recorder=None)
    return CutinApp(call=driver), driver


def _unmarked(words: Sequence[str]) -> list[str]:
    return [w.removesuffix(UNSURE_MARK) for w in words]


def _transcript(app: CutinApp) -> str:
    return "\n".join(call_screen(app).query_one(TranscriptView).plain_lines())


async def test_a_cut_black_box_turn_shows_the_onset_the_stop_and_the_yield(
    tmp_path: Path,
) -> None:
    app, driver = _remote_app(tmp_path, _TwilioLikeLine(SimAgent(yields=True)), beta=1.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 0.2)
        status = screen.query_one(LineStatus)
        assert status.plain == "line ● open · twilio ws://127.0.0.1:8765/ · μ-law 8 kHz"
        await advance(pilot, driver, 7.0)
        agent = next(e for e in screen.view.entries if isinstance(e, AgentEntry))
        assert agent.done and agent.black_box and agent.yielded
        assert agent.cut_word is not None and agent.stop_t is not None
        text = _transcript(app)
        text = text[text.index("AGENT") :]  # from the agent's first turn on
        # The caller's onset, then the words the agent said over them, then where it stopped.
        cut, stop = text.index("▌cut"), text.index("■stop+")
        assert cut < stop
        assert f"■stop+{agent.stop_latency_s:.2f}s" in text
        # Words the ears were unsure of carry the "?" mark (replay.report.confidence).
        before, after = _unmarked(text[:cut].split()), _unmarked(text[cut:stop].split())
        assert before[-1] == _unmarked(agent.words)[agent.cut_word - 1]
        # The sim agent reacts after 0.25 s: it says part of a word more over the caller.
        said = _unmarked(agent.words)
        assert after[1:] == said[agent.cut_word : agent.cut_word + len(after) - 1]
        assert len(after) >= 2
        assert f"agent stopped {agent.stop_latency_s:.2f} s after you began" in text
        # The last decision says what the agent did after the interruption it took.
        decision = screen.query_one(DecisionLine).decision
        assert decision is not None and decision.decision == "INTERRUPT"
        assert decision.outcome == f"it stopped +{agent.stop_latency_s:.2f} s"
        assert "clear" in status.plain  # the agent flushed its audio when it yielded
        await pilot.press("f10")  # hang up: cutin closes the line
        await pilot.pause()
        assert status.plain.startswith("line ○ closed · twilio")


async def test_an_agent_that_talks_on_is_marked(tmp_path: Path) -> None:
    app, driver = _remote_app(tmp_path, _TwilioLikeLine(SimAgent(yields=False)), beta=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await advance(pilot, driver, 12.0)
        live = _transcript(app)
        assert "agent did not yield within 2.0 s (talk-over" in live
        await advance(pilot, driver, 30.0)  # the end of its (long) turn
        text = _transcript(app)
        text = text[text.index("AGENT") :]
        assert "▌cut" in text and "▶talked-on" in text and "■stop" not in text
        agent = next(e for e in call_screen(app).view.entries if isinstance(e, AgentEntry))
        assert agent.done and agent.yielded is False and agent.cut_word is not None
        # Every word after the onset was said over the caller; the mark is after the last.
        assert text.index("▶talked-on") > text.rindex(agent.words[-1])


async def test_a_backchannel_that_stops_the_agent_is_a_false_yield(tmp_path: Path) -> None:
    agent = SimAgent(yields=True, react_s=0.2)  # stops for any 0.2 s of caller sound
    app, driver = _remote_app(tmp_path, _TwilioLikeLine(agent), beta=0.0, gamma=1.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 30.0)
        entry = next(e for e in screen.view.entries if isinstance(e, AgentEntry) and e.false_yields)
        stop_t, latency = entry.false_yields[0]
        assert latency is not None and stop_t > 0
        text = _transcript(app)
        text = text[text.index("AGENT") :]
        assert "⟨" in text  # the backchannel token, inline
        assert f"■false-yield+{latency:.2f}s" in text
        assert f"false yield: agent stopped {latency:.2f} s after your backchannel" in text


async def test_a_line_that_fails_mid_call_ends_it_with_a_visible_error(tmp_path: Path) -> None:
    line = _FailingLine(SimAgent(yields=True), fail_after=60)  # about 1.9 s in
    app, driver = _remote_app(tmp_path, line, beta=1.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 4.0)
        assert driver.loop.ended and screen.view.ended == "line_failed"
        status = screen.query_one(LineStatus).plain
        # Markup and a terminal escape from the far end are shown as text, not acted on.
        assert status.startswith("line ✕ failed: line broke: [bold]connection reset[/bold]␛[2J")
        text = _transcript(app)
        # The markup in the message is shown as text, not rendered.
        assert "error in line: line broke: [bold]connection reset[/bold]" in text
        assert "the line to the agent failed" in text
        assert "Traceback" not in text
        toasts = [n.message for n in app._notifications]
        assert any("connection reset" in m for m in toasts)  # the drop always pops up
        # Only the first few errors pop up; all of them are in the transcript and counted.
        assert sum(m.startswith("malformed event") for m in toasts) == LINE_TOASTS
        assert "more errors from the line: see the transcript" in toasts
        assert text.count("error in line: malformed event") == 6
        assert " · 6 errors" in status
        assert app.return_code is None  # the app is still up, showing the call


async def test_a_recorded_black_box_call_replays_with_its_stop_and_its_audio(
    tmp_path: Path,
) -> None:
    """The log and the 2-channel WAV a remote call leaves: replay draws the stop the log
    measured, and space's clip of the cut turn is both channels of that stretch."""
    from cutin_tui.screens.replay_audio import clip_audio, turn_clip
    from cutin_tui.views.turn_layout import Columns, TurnTable
    from replay.load import load_log
    from replay.model import Trial
    from sessions.call.recorder import Recorder
    from sessions.call.voice.recording import CallRecording, recording_path
    from sessions.speech import SAMPLE_RATE
    from tests.remote.helpers import read_two_channels

    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 1.0, 0.0), seed=3)
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:8765/", cache_dir=tmp_path / "cache")
    line = _TwilioLikeLine(SimAgent(yields=True))
    line.open()
    loop = build_line_call(spec, config, user=ScriptedUser(scenario), line=line, virtual=True)
    recorder = Recorder.create(
        tmp_path / "logs", config, spec.agent_info("sim"), speech=spec.speech_info()
    )
    loop.far.recording = CallRecording(recording_path(recorder.path))
    driver = VirtualDriver(loop, scenario, recorder)
    driver.advance(7.0)
    driver.stop()
    trial = load_log(recorder.path)
    assert isinstance(trial, Trial) and trial.header["agent"]["kind"] == "twilio"
    cut = next(t for t in trial.agent_turns() if t.interrupted)
    row = TurnTable(trial).cells(cut.index + 1, Columns(120, ()))
    text = " ".join("".join(p for p, _ in line) for line in row.text)
    assert "▌cut" in text and "■stop+" in text and "agent stopped" in text
    clip = turn_clip(trial, cut)
    assert not isinstance(clip, str), clip
    audio = clip_audio(clip)
    agent_ch, caller_ch = read_two_channels(recording_path(recorder.path))
    assert cut.start is not None and cut.end is not None
    first, last = int(cut.start * SAMPLE_RATE), int(cut.end * SAMPLE_RATE)
    assert len(audio) == last - first
    expected = np.clip(agent_ch[first:last] + caller_ch[first:last], -1.0, 1.0)
    assert np.abs(audio - expected).max() < 2e-4  # both sides, each at its own level
    assert np.abs(caller_ch[first:last]).max() > 0.05  # the tester's barge-in is in it
