"""The remote call loop against a simulated far-end agent on the virtual clock.

Real espeak-ng audio, real Silero VAD and real faster-whisper; the measurements in the
log (caller onset, where the agent's audio stopped, yield latency) are checked against
the 2-channel recording the call leaves, sample by sample.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.remote.helpers import first_sound, run_sim_call, stop_after
from tests.support.sim_agent import SimAgent

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]
FRAME = 0.02


def test_barge_in_on_a_yielding_agent_measures_its_stop(tmp_path: Path) -> None:
    call = run_sim_call(tmp_path, SimAgent(yields=True), beta=1.0, gamma=0.0, seconds=25)
    cuts = call.of("interruption")
    assert cuts, "β = 1 must barge in during the agent's long first turn"
    yields = [e for e in call.of("agent_yield") if e.after == "interruption"]
    assert yields and yields[0].yielded
    y = yields[0]
    # The log's numbers against the recording: the caller's first sound and the agent's
    # last sound before it fell silent.
    onset = first_sound(call.caller, cuts[0].t - 0.05)
    assert abs(onset - y.onset_t) <= FRAME
    stop = stop_after(call.agent, y.onset_t)
    assert abs(stop - y.stop_t) <= FRAME
    assert abs(max(0.0, stop - onset) - y.latency_s) <= FRAME
    # The simulated agent reacts after 0.25 s of caller sound.
    assert 0.1 <= y.latency_s <= 0.6
    ends = [e for e in call.of("agent_turn_end") if e.turn == y.turn]
    assert ends and ends[0].interrupted and ends[0].stop_t == y.stop_t
    # Decisions counted words the STT heard, not a script.
    opps = call.of("opportunity")
    assert any(o.situation["words_transcribed"] > 0 for o in opps)


def test_an_agent_that_talks_on_is_logged_as_not_yielding(tmp_path: Path) -> None:
    call = run_sim_call(tmp_path, SimAgent(yields=False), beta=1.0, gamma=0.0, seconds=25)
    yields = [e for e in call.of("agent_yield") if e.after == "interruption"]
    assert yields and not yields[0].yielded
    assert yields[0].stop_t is None and yields[0].latency_s is None
    assert yields[0].talk_over_s > 0.5
    assert not call.line.stops


@pytest.mark.parametrize(("react_s", "false_yield"), [(0.2, True), (0.9, False)])
def test_backchannels_find_false_yields(tmp_path: Path, react_s: float, false_yield: bool) -> None:
    agent = SimAgent(yields=True, react_s=react_s)
    call = run_sim_call(tmp_path, agent, beta=0.0, gamma=1.0, seconds=30)
    bcs = call.of("backchannel")
    assert bcs, "γ = 1 must backchannel in the agent's second turn"
    after_bc = [e for e in call.of("agent_yield") if e.after == "backchannel"]
    assert after_bc
    assert after_bc[0].yielded is false_yield


def test_the_llm_user_simulator_speaks_on_the_line(tmp_path: Path, openai_server) -> None:  # type: ignore[no-untyped-def]
    from controls.tendencies import Tendencies
    from sessions.call.config import CallConfig
    from sessions.call.setup.line_call import RemoteSpec, build_line_call
    from sessions.callers.simulator import UserSimulator
    from sessions.llm_client import LLMClient, LLMConfig
    from sessions.scenarios import load_scenario
    from tests.support.openai_server import Reply
    from tests.support.sim_agent import SimAgentLine

    openai_server.enqueue(Reply("My order number is 48213."), Reply("Thanks, bye. [END CALL]"))
    scenario = load_scenario("retail-order-change")
    llm = LLMConfig(model="sim-model", base_url=openai_server.base_url, api_key="sk-test")
    user = UserSimulator.from_scenario(LLMClient(llm), scenario.user)
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 0.0, 0.0), seed=1)
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:9/", cache_dir=tmp_path / "cache")
    line = SimAgentLine(SimAgent())
    line.open()
    loop = build_line_call(
        spec, config, user=user, line=line, virtual=True, user_source="simulator"
    )
    events: list = []  # type: ignore[type-arg]
    loop.listeners.append(events.append)
    loop.run_virtual(60)
    loop.voice.close()
    said = [e for e in events if e.type == "user_turn"]
    assert [e.original for e in said] == ["My order number is 48213.", "Thanks, bye."]
    assert said[0].source == "simulator"
    # The simulator heard the agent's transcribed turn, not a script.
    history = openai_server.chat_requests()[0].messages
    assert any("order" in m["content"].lower() for m in history if m["role"] == "user")
    # The far end has nothing to say to "bye": the caller waits, says so, and hangs up.
    assert [e.kind for e in events if e.type == "line"][-1] == "no_response"
    assert loop.end_reason == "user_hangup"
