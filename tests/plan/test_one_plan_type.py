"""One plan type (issue 31 item 4): `cutin call`'s arguments, the home screen and `cutin
simulate`'s batch all make a :class:`CallPlan`, once, at the edge; nothing copies options
field by field into it. Each flag is checked against a plan written out by hand."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from pydantic import ValidationError

from controls.tendencies import Tendencies
from cutin_tui.cli import build_parser
from cutin_tui.cli.call_cmd import call_plan
from cutin_tui.cli.plan_args import SAME_NAMES
from cutin_tui.cli.simulate_cmd import _options
from sessions.batch.plan import BatchPlan, BatchPlanError
from sessions.plan import CallPlan
from sessions.scenarios import load_scenario
from sessions.settings import Settings


def _dests(command: str) -> set[str]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {a.dest for a in sub.choices[command]._actions}


def _argv(*parts: str) -> list[str]:
    return " ".join(parts).split()


def test_every_shared_flag_is_a_plan_field_and_a_flag() -> None:
    fields = set(CallPlan.model_fields)
    assert set(SAME_NAMES) <= fields
    flags = _dests("call") | _dests("simulate")
    assert set(SAME_NAMES) <= flags, set(SAME_NAMES) - flags


def test_every_flag_of_cutin_call_reaches_its_plan(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    own = ["--sessions-dir", str(tmp_path / "logs"), "--agent-prompt", str(prompt)]
    args = build_parser().parse_args(
        _argv(
            "call --scenario address-change --alpha 0.2 --beta 0.4 --gamma 0.6",
            "--style human --seed 9 --wpm 180 --agent openai --model m1",
            "--base-url http://127.0.0.1:9/v1 --policy tau-voice --shadow rules",
            "--adapt --suggest --no-auto-interrupt --no-auto-backchannel",
            "--speech espeak --input mic --push-to-talk --stt small.en",
            "--vad silero-torch",
            *own,
        )
    )
    settings = Settings(sessions_dir=tmp_path / "other", cache_dir=tmp_path / "cache")
    assert call_plan(args, settings) == CallPlan(
        scenario="address-change",
        tendencies=Tendencies(0.2, 0.4, 0.6),
        seed=9,
        disfluency_style="human",
        words_per_minute=180.0,
        auto_interrupt=False,
        auto_backchannel=False,
        adapt=True,
        agent="openai",
        base_url="http://127.0.0.1:9/v1",
        model="m1",
        agent_prompt=prompt,
        policy="tau-voice",
        shadow="rules",
        user="tester",
        suggest=True,
        speech="espeak",
        input="mic",
        push_to_talk=True,
        stt="small.en",
        vad="silero-torch",
        virtual=False,
        sessions_dir=tmp_path / "logs",
    )


def test_cutin_call_fills_in_from_the_settings(tmp_path: Path) -> None:
    args = build_parser().parse_args(["call"])
    settings = Settings(
        sessions_dir=tmp_path / "s", cache_dir=tmp_path / "c", words_per_minute=200.0
    )
    plan = call_plan(args, settings)
    assert (plan.sessions_dir, plan.words_per_minute) == (tmp_path / "s", 200.0)
    assert plan == CallPlan(
        sessions_dir=tmp_path / "s", words_per_minute=200.0, stt=settings.stt_model
    )


def test_every_flag_of_cutin_simulate_reaches_the_batch_plan() -> None:
    args = build_parser().parse_args(
        _argv(
            "simulate --agent openai --base-url http://127.0.0.1:9/v1 --model m2",
            "--user llm --policy tau-voice --shadow rules --speech espeak",
            "--max-seconds 30 --agent-profile tau2-voice --adapt --style human",
            "--seed 5 --wpm 150",
        )
    )
    # The seed, rate, dials and scenarios are each call's own (filing.call_plan).
    assert _options(args) == CallPlan(
        agent="openai",
        base_url="http://127.0.0.1:9/v1",
        model="m2",
        user="llm",
        policy="tau-voice",
        shadow="rules",
        speech="espeak",
        max_seconds=30.0,
        agent_profile="tau2-voice",
        adapt=True,
        disfluency_style="human",
    )


def test_a_batch_is_not_typed_by_a_tester(tmp_path: Path) -> None:
    scenario = load_scenario("retail-order-change")
    with pytest.raises(BatchPlanError, match="scripted or llm"):
        BatchPlan([], {scenario.name: scenario}, CallPlan(), tmp_path)
    BatchPlan([], {scenario.name: scenario}, CallPlan(user="scripted"), tmp_path)


def test_the_plan_is_checked_as_it_is_made(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="agnet"):
        CallPlan(agnet="openai")  # type: ignore[call-arg]
    plan = CallPlan(sessions_dir=str(tmp_path))
    assert plan.sessions_dir == tmp_path and isinstance(plan.sessions_dir, Path)
    with pytest.raises(ValidationError):
        plan.seed = 3  # type: ignore[misc]  # frozen


def test_the_loaded_scenario_is_not_part_of_what_a_plan_is() -> None:
    scenario = load_scenario("retail-order-change")
    assert CallPlan(scenario_model=scenario) == CallPlan()
    assert CallPlan(seed=1) != CallPlan(seed=2)
