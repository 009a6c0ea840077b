"""How sure cutin's ears were of a black-box agent's words, from the log to every view.

A line call on the virtual clock against the simulated far end (real espeak-ng, Silero
VAD and faster-whisper): its second answer goes down an 8 kHz μ-law line with noise on
it, so the ears are sure of some words and unsure of others by what the model says,
not by anything this test sets. Then every view must mark exactly the words whose
logged probability is under the mark: the replay table, md/html/JSON reports and the
live call screen's fold.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from cutin_tui.views.call_view import AgentEntry, CallView
from cutin_tui.views.turn_layout import Columns, TurnTable
from replay.load import load_log
from replay.plural import plural
from replay.report.confidence import UNSURE_BELOW, UNSURE_MARK
from replay.report.data import build_report
from replay.report.html_page import render_html
from replay.report.markdown import render_markdown
from sessions.lines.codec import decode_ulaw, encode_ulaw, resampler
from sessions.log.models import AgentWords
from tests.remote.helpers import run_sim_call
from tests.support.black_box_log import black_box_header
from tests.support.logs import write_log
from tests.support.sim_agent import SimAgent, SimAgentLine, long_answer

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]


def _phone_with_noise(audio: np.ndarray, snr_db: float) -> np.ndarray:
    """16 kHz → 8 kHz μ-law → 16 kHz with white noise at ``snr_db`` under the speech."""
    rng = np.random.default_rng(7)
    speech = audio[np.abs(audio) > 1e-3]
    level = float(np.sqrt(np.mean(speech**2))) if speech.size else 0.01
    noisy = audio + rng.normal(0.0, level * 10 ** (-snr_db / 20), audio.size)
    down = resampler(16_000, 8_000).process(noisy.astype(np.float32))
    return resampler(8_000, 16_000).process(decode_ulaw(encode_ulaw(down)))


class _NoisyLine(SimAgentLine):
    """The simulated agent whose answers reach cutin over a noisy telephone line."""

    def __init__(self, agent: SimAgent) -> None:
        super().__init__(agent)
        self._audio = [self._audio[0], _phone_with_noise(self._audio[1], snr_db=3.0)]


@pytest.fixture(scope="module")
def heard_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("confidence")
    agent = SimAgent(turns=[long_answer(3), long_answer(6)], yields=False)
    call = run_sim_call(tmp, agent, beta=0.0, gamma=0.0, seconds=40.0)
    return write_log(tmp / "heard.jsonl", call.events, black_box_header())


def _words(log: Path) -> list[tuple[str, float | None]]:
    trial = load_log(log)
    return [(w.word, w.p) for t in trial.turns if t.speaker == "agent" for w in t.words]


def test_every_heard_word_is_logged_with_the_models_confidence(heard_log: Path) -> None:
    trial = load_log(heard_log)
    words = _words(heard_log)
    assert len(words) > 20
    assert all(p is not None and 0.0 <= p <= 1.0 for _, p in words), words
    clean, noisy = (t for t in trial.turns if t.speaker == "agent" and t.words)
    mean = lambda t: sum(w.p or 0.0 for w in t.words) / len(t.words)  # noqa: E731
    # The noisy phone line is heard with less confidence than the clean answer.
    assert mean(noisy) < mean(clean), (mean(clean), mean(noisy))
    ps = [p for _, p in words if p is not None]
    assert min(ps) < UNSURE_BELOW <= max(ps), "the call should hold sure and unsure words"


def test_the_reports_mark_exactly_the_unsure_words(heard_log: Path) -> None:
    trial = load_log(heard_log)
    agent_turns = [t for t in trial.turns if t.speaker == "agent" and t.words]
    expected = [
        sorted(i for i, w in enumerate(t.words) if w.p is not None and w.p < UNSURE_BELOW)
        for t in agent_turns
    ]
    report = build_report([trial])
    spoken = {t.index for t in agent_turns}
    got = [t["unsure_words"] for t in report["trials"][0]["turns"] if t["index"] in spoken]
    assert got == expected
    n_unsure = sum(len(e) for e in expected)
    assert n_unsure > 0
    html = render_html([trial])
    assert html.count('class="unsure"') == n_unsure
    md = render_markdown([trial])
    for turn, indices in zip(agent_turns, expected, strict=True):
        for i in indices:
            assert f"{turn.words[i].word}{UNSURE_MARK}" in md
    # A sure word is never marked: count the marks on the agent rows only.
    agent_rows = [line for line in md.splitlines() if "| agent |" in line]
    marks = sum(len(re.findall(r"\S\?(?=\s|$|\|)", row)) for row in agent_rows)
    assert marks >= n_unsure


def test_the_replay_table_dims_the_unsure_words_and_says_how_sure(heard_log: Path) -> None:
    trial = load_log(heard_log)
    table = TurnTable(trial)
    columns = Columns(width=200, judges=())
    for row, turn in enumerate(trial.turns, start=1):
        if turn.speaker != "agent" or not turn.words:
            continue
        pieces = [p for line in table.cells(row, columns).text for p in line]
        unsure = [text for text, role in pieces if role == "unsure"]
        want = [w.word + UNSURE_MARK for w in turn.words if w.p is not None and w.p < UNSURE_BELOW]
        assert unsure == want
        if want:
            note = " ".join(text for text, role in pieces if role == "dim")
            said = f"{len(want)} of {plural(len(turn.words), 'word')} unsure"
            assert "confidence" in note and said in note


def test_the_call_screen_keeps_each_words_confidence(heard_log: Path) -> None:
    from sessions.log.reader import read_session

    session = read_session(heard_log)
    view = CallView()
    view.apply(session.events)
    entries = [e for e in view.entries if isinstance(e, AgentEntry) and e.words]
    logged = [e for e in session.events if isinstance(e, AgentWords)]
    by_turn: dict[int, list[float | None]] = {}
    for e in logged:
        by_turn.setdefault(e.turn, [])[e.first_index :] = [w.p for w in e.words]
    assert [e.probs for e in entries] == [by_turn[e.turn] for e in entries]


async def test_the_live_call_screen_marks_the_unsure_words(tmp_path: Path) -> None:
    """The call screen on the same noisy line: each unsure word is drawn with its mark."""
    from controls.tendencies import Tendencies
    from cutin_tui.calls.call_driver import VirtualDriver
    from cutin_tui.screens.app import CutinApp
    from cutin_tui.widgets import TranscriptView
    from sessions.call.config import CallConfig
    from sessions.call.setup.line_call import RemoteSpec, build_line_call
    from sessions.callers.users import ScriptedUser
    from sessions.scenarios import load_scenario
    from tests.tui.helpers import SIZE, advance, call_screen

    scenario = load_scenario("line-check")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 0.0, 0.0), seed=3)
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:8765/", cache_dir=tmp_path / "cache")
    line = _NoisyLine(SimAgent(turns=[long_answer(3), long_answer(6)], yields=False))
    line.open()
    loop = build_line_call(spec, config, user=ScriptedUser(scenario), line=line, virtual=True)
    driver = VirtualDriver(loop, scenario, recorder=None)
    app = CutinApp(call=driver)
    async with app.run_test(size=SIZE) as pilot:
        await advance(pilot, driver, 40.0)
        screen = call_screen(app)
        entries = [e for e in screen.view.entries if isinstance(e, AgentEntry) and e.words]
        unsure = [
            w + UNSURE_MARK
            for e in entries
            for w, p in zip(e.words, e.probs, strict=False)
            if p is not None and p < UNSURE_BELOW
        ]
        assert unsure, "the noisy answer should hold words the ears were unsure of"
        view = screen.query_one(TranscriptView)
        dimmed = view._style("unsure")
        drawn = []
        for entry in entries:
            body = view._agent_body(entry)  # the entry exactly as the transcript draws it
            drawn += [body.plain[s.start : s.end] for s in body.spans if s.style == dimmed]
        assert drawn == unsure
