"""τ-Voice's LLM classifiers in batch runs, against the loopback server with the real
openai client: acting on their own 2.0 s schedule, or in shadow at the rule's
opportunities, with their call counts and tokens in the log."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions.log import read_session
from sessions.log.models import AgentTurnStart, Backchannel, Interruption, Opportunity
from tests.support.openai_server import OpenAIServer, RecordedRequest, Reply

from .helpers import simulate_json


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "CUTIN_OPENAI_BASE_URL", "CUTIN_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)


def _classifier(request: RecordedRequest) -> Reply:
    """Say YES to backchannel questions only, so acting τ-Voice backchannels."""
    prompt = request.text.lower()
    return Reply("YES" if "backchannel" in prompt or "continuer" in prompt else "NO")


def test_acting_tau_voice_consults_every_two_seconds_of_agent_speech(
    openai_server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.responder = _classifier
    out = tmp_path / "tv"
    summary = simulate_json(
        capsys,
        *("--policy", "tau-voice", "--base-url", openai_server.base_url, "--model", "clf"),
        *("--scenario", "clinic-triage", "--gamma", "0", "--beta", "0", "--runs", "1"),
        "--out",
        str(out),
    )
    assert summary["failed"] == 0
    (path,) = sorted(out.glob("*.jsonl"))
    session = read_session(path)
    assert session.header.policy == "tau-voice"
    consults = [o for o in session.of(Opportunity) if o.policy == "tau-voice"]
    assert consults and all(o.pause_index is None and o.mode == "auto" for o in consults)
    assert all(o.llm is not None and o.llm["calls"] == 2 for o in consults)
    assert all(o.llm is not None and o.llm["tokens"] > 0 for o in consults)
    # Two classifier requests per consultation reached the server.
    assert len(openai_server.chat_requests()) == 2 * len(consults)
    # Each consultation sits on the turn's 2.0 s grid.
    onsets = {e.turn: e.t for e in session.of(AgentTurnStart)}
    for o in consults:
        offset = o.t - onsets[o.turn]
        assert offset >= 2.0 - 0.04
        assert abs(offset / 2.0 - round(offset / 2.0)) * 2.0 < 0.05, offset
    # Its YES became backchannels with τ-Voice's tokens, and no interruption.
    bcs = session.of(Backchannel)
    assert bcs and {b.token for b in bcs} <= {"uh-huh", "mm-hmm"}
    assert not session.of(Interruption)


def test_shadow_tau_voice_logs_both_decisions_at_every_opportunity(
    openai_server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.default = Reply("NO")
    out = tmp_path / "sh"
    simulate_json(
        capsys,
        *("--shadow", "tau-voice", "--base-url", openai_server.base_url, "--model", "clf"),
        *("--scenario", "retail-order-change", "--gamma", "1", "--beta", "0", "--runs", "1"),
        "--out",
        str(out),
    )
    (path,) = sorted(out.glob("*.jsonl"))
    session = read_session(path)
    assert session.header.shadow == "tau-voice"
    opps = session.of(Opportunity)
    rules = {o.index: o for o in opps if o.mode == "auto"}
    shadow = {o.index: o for o in opps if o.mode == "shadow"}
    assert rules and set(shadow) == set(rules)
    assert all(o.policy == "rules" for o in rules.values())
    assert all(o.policy == "tau-voice" and not o.executed for o in shadow.values())
    assert all(o.llm is not None and o.llm["calls"] == 2 for o in shadow.values())
    assert all(rules[i].pause_index == shadow[i].pause_index for i in rules)
    # Rules acted (γ = 1); the shadow's NOs changed nothing.
    assert any(o.executed for o in rules.values())
    assert all(o.decision == "NOTHING" for o in shadow.values())
