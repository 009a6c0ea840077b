"""A whole call against an LLM agent over HTTP (loopback server, real openai client):
streamed replies are spoken as they arrive, and after a cut the next request carries
only what the caller heard."""

from __future__ import annotations

from pathlib import Path

import pytest

from controls import Tendencies
from cutin_tui.calls.call_driver import VirtualDriver
from cutin_tui.calls.call_setup import open_call
from sessions.agents.openai_agent import OpenAIAgent
from sessions.call.config import CallConfig
from sessions.call.setup.simulated_call import simulated_call
from sessions.callers.users import ScriptedUser
from sessions.llm_client import LLMClient, LLMConfig
from sessions.log import read_session
from sessions.log.models import AgentTurnEnd, Event, Interruption
from sessions.plan import CallPlan
from sessions.scenarios import load_scenario
from tests.support.openai_server import OpenAIServer, Reply

LONG = (
    "Thanks for calling. I have your order open on my screen right now. "
    "It is packed at the warehouse and has not left yet. "
    "That means we can still change the delivery address today. "
    "The courier collects parcels every afternoon at four. "
    "What is the new address?"
)


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "CUTIN_OPENAI_BASE_URL", "CUTIN_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_scripted_user_against_llm_agent_truncation_reaches_the_server(
    openai_server: OpenAIServer,
) -> None:
    openai_server.default = Reply(LONG, chunk_delay_s=0.002)
    scenario = load_scenario("retail-order-change")
    agent = OpenAIAgent(
        scenario.agent.system_prompt,
        LLMClient(LLMConfig(model="agent-model", base_url=openai_server.base_url)),
    )
    events: list[Event] = []
    loop = simulated_call(
        CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 1.0, 0.0), seed=3),
        agent,
        user=ScriptedUser(scenario),
        listeners=[events.append],
    )
    loop.run_virtual(max_seconds=300)
    cuts = [e for e in events if isinstance(e, AgentTurnEnd) and e.interrupted]
    assert cuts and len(cuts) == len([e for e in events if isinstance(e, Interruption)])
    first = cuts[0]
    assert first.spoken and first.unspoken
    assert (first.spoken + " " + first.unspoken).split() == LONG.split()
    bodies = openai_server.chat_bodies()
    assert all(b.get("stream") for b in bodies), "replies are streamed"
    second = bodies[1]["messages"]
    assert second[0] == {"role": "system", "content": scenario.agent.system_prompt}
    assistant = [m for m in second if m["role"] == "assistant"]
    assert assistant == [{"role": "assistant", "content": first.spoken}]
    assert first.unspoken not in str(second)
    # The caller's interruption line follows the cut message.
    assert second[-1]["role"] == "user"
    assert second[-1]["content"] == next(e for e in events if isinstance(e, Interruption)).text


async def test_f9_fills_the_box_with_the_simulators_suggestion(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    from textual.widgets import Input

    from cutin_tui.screens.app import CutinApp

    openai_server.default = Reply("Hi, I need to change my delivery address, please.")
    driver = open_call(
        CallPlan(
            tendencies=Tendencies(0.5, 0.0, 0.0),
            sessions_dir=tmp_path,
            base_url=openai_server.base_url,
            model="sim-model",
            suggest=True,
            virtual=True,
        ),
    )
    assert isinstance(driver, VirtualDriver) and driver.simulator is not None
    app = CutinApp(call=driver)
    async with app.run_test(size=(120, 40)) as pilot:
        driver.advance(20.0)
        await pilot.press("f9")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.query_one(Input).value == (
            "Hi, I need to change my delivery address, please."
        )
    (request,) = openai_server.chat_requests()
    system = request.messages[0]["content"]
    assert load_scenario("retail-order-change").user.goal in system
    assert read_session(driver.log_path or "").header.agent.kind == "scripted"


def test_a_call_plan_needs_an_endpoint_for_llm_parts(tmp_path: Path) -> None:
    from sessions.llm_client import LLMError

    with pytest.raises(LLMError, match="no API key"):
        open_call(CallPlan(agent="openai", sessions_dir=tmp_path, virtual=True))
    assert not list(tmp_path.glob("*.jsonl")), "nothing is recorded for a call that never ran"


async def test_shadow_tau_voice_shows_both_decisions_and_its_cost(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    from cutin_tui.screens.app import CutinApp
    from cutin_tui.widgets import DecisionLine

    openai_server.default = Reply("NO")
    driver = open_call(
        CallPlan(
            tendencies=Tendencies(0.0, 0.0, 1.0),
            sessions_dir=tmp_path,
            base_url=openai_server.base_url,
            model="clf",
            shadow="tau-voice",
            virtual=True,
        ),
    )
    assert isinstance(driver, VirtualDriver)
    app = CutinApp(call=driver)
    async with app.run_test(size=(120, 40)) as pilot:
        driver.advance(8.0)
        screen = app.screen
        screen.pump()  # type: ignore[attr-defined]
        await pilot.pause()
        text = screen.query_one(DecisionLine).render().plain
        assert "shadow tau-voice" in text and "→ NOTHING" in text
        assert "2 LLM calls" in text and "tokens" in text
    log = read_session(driver.log_path or "")
    assert log.header.shadow == "tau-voice"
