"""Agent profiles: speaking rate, pauses and turn lengths drawn from quantile tables;
the realistic bench scenarios show a gradient in β where the shipped ones saturate."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from cutin_tui.cli import main
from replay.audit.load import load_conversations
from replay.audit.report import build_report
from sessions.agents.scripted import with_extra
from sessions.log import read_session
from sessions.log.models import AgentTurnEnd
from sessions.scenarios import ScenarioError, load_scenario
from sessions.scenarios.profile import agent_style, load_profile, parse_profile
from sessions.speech.speech_clock import SpeakingStyle, draw_quantile, plan

ROOT = Path(__file__).resolve().parents[2]
BENCH_SCENARIOS = sorted((ROOT / "bench" / "scenarios").glob("*.toml"))


def test_draws_follow_the_quantile_table() -> None:
    rng = random.Random(1)
    draws = sorted(draw_quantile((0.0, 1.0, 3.0), rng) for _ in range(4000))
    assert draws[0] >= 0.0 and draws[-1] <= 3.0
    assert draws[2000] == pytest.approx(1.0, abs=0.08)  # the median is the middle value
    assert draws[1000] == pytest.approx(0.5, abs=0.08)


def test_a_profile_times_the_agent_turn() -> None:
    profile = load_profile("tau2-voice")
    style = agent_style(profile, SpeakingStyle())
    text = "One two three four five. Six seven, eight nine ten. " * 20
    words = plan(text, style, seed=3)
    gaps = [b.start - a.end for a, b in itertools.pairwise(words)]
    sentence = [g for w, g in zip(words, gaps, strict=False) if w.word.endswith(".")]
    assert min(sentence) >= profile.sentence_pause_s[0] - 1e-9
    assert max(sentence) <= profile.sentence_pause_s[-1] + 1e-9
    assert any(g < 0.2 for g in sentence) and any(g >= 0.2 for g in sentence)
    # The same seed gives the same timings; the plain style is untouched.
    assert plan(text, style, seed=3) == words
    assert plan(text, SpeakingStyle(), seed=3) != words


def test_bad_profiles_name_the_field(tmp_path: Path) -> None:
    good = (ROOT / "sessions/scenarios/profiles/tau2-voice.toml").read_text(encoding="utf-8")
    bad = good.replace("comma_pause_s = [", "comma_pause_s = [0.5, ")
    with pytest.raises(ScenarioError, match="comma_pause_s"):
        parse_profile(bad, "p.toml")
    with pytest.raises(ScenarioError, match="tau2-voice"):
        load_profile("no-such-profile")


def test_extra_sentences_fill_the_drawn_length_before_the_last_sentence() -> None:
    text = "Sure. Could you give me your order number?"
    extra = ["It is one two three four.", "Five six seven eight nine ten."]
    assert with_extra(text, extra, 3) == text
    assert with_extra(text, extra, 15) == (
        "Sure. It is one two three four. Could you give me your order number?"
    )
    assert with_extra(text, extra, 100).count(".") == 3


def test_simulate_records_the_profile_and_varies_turn_lengths(tmp_path: Path) -> None:
    out = tmp_path / "b"
    scenario = str(BENCH_SCENARIOS[0])
    argv = ["simulate", "--scenario", scenario, "--beta", "0", "--gamma", "0", "--runs", "4"]
    assert main([*argv, "--out", str(out)]) == 0
    sessions = [read_session(p) for p in sorted(out.glob("*.jsonl"))]
    assert {s.header.batch["agent_profile"] for s in sessions if s.header.batch} == {"tau2-voice"}
    texts = {tuple(e.text for e in s.events if isinstance(e, AgentTurnEnd)) for s in sessions}
    assert len(texts) > 1, "turn lengths are drawn per session"
    assert load_scenario(scenario).agent.profile == "tau2-voice"


def test_realistic_turns_give_a_beta_gradient_below_saturation(tmp_path: Path) -> None:
    out = tmp_path / "b"
    argv = ["simulate", *(a for p in BENCH_SCENARIOS for a in ("--scenario", str(p)))]
    argv += ["--beta", "0,0.3,0.5,0.7", "--gamma", "0", "--runs", "2", "--paired"]
    assert main([*argv, "--out", str(out)]) == 0
    convs, _ = load_conversations([out])
    rows = {
        r["condition"]["beta"]: r["per_turn"]
        for r in build_report(convs, ["beta"], resamples=50).turn_taking
        if r["behavior"] == "interruption"
    }
    assert rows[0.0] == 0.0
    assert 0.0 < rows[0.3] < rows[0.5] < rows[0.7] < 0.9
