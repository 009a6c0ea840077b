"""``--transcribe live|end|off`` on a line call, on the virtual clock, against an agent
whose speech and yields are known by construction (tests/support/sim_agent.py: real
espeak-ng audio, real Silero VAD, real tiny.en where words are transcribed).

- ``end``: each agent turn transcribed once when it ends; the rule's word counts at its
  pauses are estimates (logged as such), and the barge-ins and the agent's stops land
  where ``live`` puts them;
- ``off``: no model, no agent words in the log, the header says so, and ``cutin audit``
  leaves the word-based measures out with a one-line reason. Its counts stay at the
  conversational default rate (no words ever come back to measure this agent's).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from controls.tendencies import Tendencies
from cutin_tui.cli import main
from sessions.call.config import CallConfig
from sessions.call.recorder import Recorder, make_header
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.callers.users import ScriptedUser
from sessions.log import read_session
from sessions.scenarios import load_scenario
from tests.support.sim_agent import SimAgent, SimAgentLine, long_answer

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]
SECONDS = 16.0
GREETING = (
    "<speak>Hello and thank you for calling the order line, how can I help you today?</speak>"
)
"""Fourteen words without a pause: no opportunity in it, and once it ends the agent's
speaking rate is measured (the estimates of the long turn after it use that rate)."""


def run_line(folder: Path, transcribe: str) -> Path:
    """One virtual-clock line call: a greeting, the caller's line, then the agent's long
    answer, which β 1 barges in on once 12 words are heard (or estimated)."""
    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 1.0, 0.0), seed=3)
    spec = RemoteSpec(
        agent="twilio:ws://127.0.0.1:9/", cache_dir=folder / "cache", transcribe=transcribe
    )
    header = make_header(
        config,
        session_id=f"modes-{transcribe}",
        agent=spec.agent_info(SimAgentLine.name),
        speech=spec.speech_info(),
        policy="rules",
    )
    recorder = Recorder(folder / f"{transcribe}.jsonl", header)
    line = SimAgentLine(SimAgent(turns=[GREETING, long_answer(6)], yields=True))
    line.open()
    loop = build_line_call(spec, config, user=ScriptedUser(scenario), line=line, virtual=True)
    loop.listeners.append(recorder)
    try:
        loop.run_virtual(SECONDS)
    finally:
        loop.voice.close()
        recorder.close()
    return recorder.path


def events(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def of(evs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in evs if e["type"] == kind]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("transcribe")
    return {mode: run_line(folder, mode) for mode in ("live", "end", "off")}


def test_end_cuts_where_live_does_and_counts_estimated_words(logs: dict[str, Path]) -> None:
    live, end = events(logs["live"]), events(logs["end"])
    cuts_live = [e["t"] for e in of(live, "interruption")]
    assert cuts_live, "β = 1 must barge in on the agent's long turn"
    assert [e["t"] for e in of(end, "interruption")] == cuts_live
    stops = [(e["onset_t"], e["stop_t"], e["yielded"]) for e in of(live, "agent_yield")]
    assert [(e["onset_t"], e["stop_t"], e["yielded"]) for e in of(end, "agent_yield")] == stops
    # Live: words heard at the decisions; end: none transcribed yet, every word estimated.
    live_opps = of(live, "opportunity")
    end_opps = of(end, "opportunity")
    assert any(o["situation"]["words_transcribed"] > 0 for o in live_opps)
    assert end_opps and all(o["situation"]["words_transcribed"] == 0 for o in end_opps)
    assert all(o["situation"]["words_estimated"] > 0 for o in end_opps)
    # Each turn is still transcribed, once, when it ends: its words are in the log.
    assert of(end, "agent_words") and of(end, "agent_turn_end")[0]["text"]
    assert read_session(logs["end"]).header.speech.transcribe == "end"
    assert read_session(logs["live"]).header.speech.transcribe is None  # as before


def test_off_logs_no_words_and_says_so(logs: dict[str, Path]) -> None:
    off = events(logs["off"])
    assert read_session(logs["off"]).header.speech.transcribe == "off"
    assert not of(off, "agent_words")
    assert all(e["text"] == "" for e in of(off, "agent_turn_end"))
    opps = of(off, "opportunity")
    assert opps and all(o["situation"]["words_transcribed"] == 0 for o in opps)
    # No words ever come back, so the rate stays the conversational default (2.6 words
    # per second): the counts are estimates, and this fast agent's are low.
    assert all(o["situation"]["words_estimated"] > 0 for o in opps)
    end = of(events(logs["end"]), "opportunity")
    assert [o["t"] for o in opps] == [o["t"] for o in end]  # the same pauses heard


def test_the_audit_leaves_word_based_measures_out_of_an_untranscribed_call(
    logs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", str(logs["off"]), str(logs["live"]), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    notes = [n for n in out["notes"] if "--transcribe off" in n]
    assert len(notes) == 1 and notes[0].startswith("1 call ran with --transcribe off")
    # Only the transcribed call's speech is in the negative control.
    assert main(["audit", str(logs["off"]), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    rows = [r for r in alone["turn_taking"] if "pre_action_speech_s" in r]
    assert rows and all(r["pre_action_speech_s"] is None for r in rows)
    assert main(["audit", str(logs["live"]), "--json"]) == 0
    heard = json.loads(capsys.readouterr().out)
    rows = [r for r in heard["turn_taking"] if "pre_action_speech_s" in r]
    assert rows and all(r["pre_action_speech_s"] for r in rows)


def test_simulate_refuses_transcribe_without_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["simulate", "--transcribe", "off", "--out", str(tmp_path / "b")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--transcribe off needs --agent" in err and "Traceback" not in err
