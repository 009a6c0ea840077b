"""A call on a line is stepped by the one :class:`CallEngine`, so every policy mode a
simulated call has works on a line too: here τ-Voice in shadow beside the rule, against
the loopback LLM server (the simulated far end on the virtual clock: real espeak-ng, VAD
and STT)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sessions.call.engine.engine import CallEngine
from sessions.call.far_ends.line import LineFarEnd
from sessions.llm_client import LLMConfig
from sessions.log.models import Opportunity
from sessions.policies.factory import build_policy
from tests.remote.helpers import run_sim_call
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.sim_agent import SimAgent

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]


def test_shadow_tau_voice_on_a_line_logs_both_decisions(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.default = Reply("NO")
    llm = LLMConfig(model="clf", base_url=openai_server.base_url, api_key="not-needed")
    shadow = build_policy("tau-voice", llm=llm, shadow=True)
    call = run_sim_call(tmp_path, SimAgent(), beta=0.0, gamma=1.0, seconds=30, shadow=shadow)
    assert isinstance(call.loop, CallEngine) and isinstance(call.loop.far, LineFarEnd)
    opps = [e for e in call.events if isinstance(e, Opportunity)]
    rules = {o.index: o for o in opps if o.mode == "auto"}
    shadowed = {o.index: o for o in opps if o.mode == "shadow"}
    assert rules and set(shadowed) == set(rules)
    assert all(o.policy == "rules" for o in rules.values())
    assert all(o.policy == "tau-voice" and not o.executed for o in shadowed.values())
    assert all(o.llm is not None and o.llm["calls"] == 2 for o in shadowed.values())
    assert all(rules[i].pause_index == shadowed[i].pause_index for i in rules)
    # Both saw the line's situation, with how many of its words STT had transcribed.
    assert all("words_transcribed" in o.situation for o in opps)
    # The rule acted (γ = 1: backchannels on the line); the shadow's NOs changed nothing.
    assert any(o.executed for o in rules.values())
    assert all(o.decision == "NOTHING" for o in shadowed.values())
    assert len(openai_server.chat_requests()) == 2 * len(shadowed)


def test_tau_voice_acts_on_a_line(openai_server: OpenAIServer, tmp_path: Path) -> None:
    """τ-Voice as the acting policy on a line: its classifiers are asked while the agent
    speaks, and their YES makes the caller barge in on the line, whose yield is watched."""
    openai_server.default = Reply("YES")
    llm = LLMConfig(model="clf", base_url=openai_server.base_url, api_key="not-needed")
    policy = build_policy("tau-voice", llm=llm)
    call = run_sim_call(tmp_path, SimAgent(), beta=0.0, gamma=0.0, seconds=30, policy=policy)
    assert isinstance(call.loop, CallEngine) and isinstance(call.loop.far, LineFarEnd)
    opps = [e for e in call.events if isinstance(e, Opportunity)]
    assert opps and all(o.policy == "tau-voice" for o in opps)
    assert any(o.executed and o.decision == "INTERRUPT" for o in opps)
    assert all(o.llm is not None and o.llm["calls"] >= 1 for o in opps)
    kinds = {type(e).__name__ for e in call.events}
    assert "Interruption" in kinds and "AgentYield" in kinds, kinds
    assert openai_server.chat_requests()
