"""`cutin simulate` against the real Pipecat bot with τ-Voice beside or instead of the
rule: one engine steps the line call, so every decision mode logs its verdicts there
too, with the loopback LLM as τ-Voice's classifiers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sessions.log.models import Opportunity
from sessions.log.reader import read_session
from tests.support.cli import run_cutin
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.pipecat_bot import Bot

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]


def _simulate(bot_url: str, server: OpenAIServer, out: Path, *extra: str) -> list[Opportunity]:
    env = {**os.environ, "CUTIN_CACHE_DIR": str(out.parent / "cache")}
    env.pop("OPENAI_API_KEY", None)
    args = ["simulate", "--scenario", "retail-order-change", "--beta", "1", "--gamma", "0",
            "--runs", "1", "--max-seconds", "25", "--out", str(out),
            "--agent", f"twilio:{bot_url}", "--base-url", server.base_url, "--model", "clf",
            *extra]  # fmt: skip
    result = run_cutin(*args, env=env, timeout=180)
    assert result.returncode == 0, result.stderr
    (log,) = out.glob("*.jsonl")
    return [e for e in read_session(log).events if isinstance(e, Opportunity)]


def test_both_policies_log_their_verdicts_on_a_line_to_the_bot(
    openai_server: OpenAIServer, tmp_path: Path, pipecat_bot: Bot
) -> None:
    openai_server.default = Reply("NO")
    bot = pipecat_bot
    shadowed = _simulate(bot.url, openai_server, tmp_path / "shadow", "--shadow", "tau-voice")
    bot.wait_idle()
    acting = _simulate(
        bot.url, openai_server, tmp_path / "acting", "--policy", "tau-voice",
        "--shadow", "rules",
    )  # fmt: skip
    bot.wait_idle()
    # The rule acts, τ-Voice is asked at the same pauses and only logged.
    assert {(o.policy, o.mode) for o in shadowed} == {("rules", "auto"), ("tau-voice", "shadow")}
    assert all(o.llm is not None for o in shadowed if o.policy == "tau-voice")
    # τ-Voice acts (its NOs: nothing done), the rule is asked beside it and only logged.
    assert {o.policy for o in acting} == {"tau-voice", "rules"}
    assert all(not o.executed for o in acting if o.policy == "rules")
    assert any(o.llm is not None and o.llm["calls"] >= 1 for o in acting if o.policy == "tau-voice")
    assert openai_server.chat_requests()
