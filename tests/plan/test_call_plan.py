"""One place turns a plan into a call (sessions.plan): the agent kind is read there and in
the lines registry only; `cutin call` and `cutin simulate` make the same plan for the same
options; a plan that cannot work is one clear error before any log file exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutin_tui.cli import build_parser, main
from cutin_tui.cli.call_cmd import call_plan
from cutin_tui.cli.simulate_cmd import _options
from sessions.batch.call import run_call
from sessions.batch.filing import CallStatus
from sessions.batch.filing import call_plan as batch_call_plan
from sessions.batch.plan import conditions, plan_batch
from sessions.plan import CallPlan, PlanError
from sessions.plan.build import build_call, call_config
from sessions.plan.model import check_plan
from sessions.scenarios import load_scenario
from sessions.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
# Written in two halves, so this file is not one of the places it looks for.
AGENT_KIND_READ = re.compile("is_line" + "_agent|LINE" + "_KINDS")
READERS = {"sessions/plan/model.py"}
REGISTRY = ("sessions/lines/", "tests/lines/", "tests/sip/")
"""The lines registry (and its own tests, the SIP line's among them) defines the kinds;
everyone else asks the plan."""


def _sources() -> list[Path]:
    return [
        p
        for p in ROOT.rglob("*.py")
        if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
    ]


def test_the_agent_kind_is_read_in_one_place_besides_the_registry() -> None:
    found = set()
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(REGISTRY):
            continue
        if AGENT_KIND_READ.search(path.read_text(encoding="utf-8")):
            found.add(rel)
    assert found == READERS


def _settings(tmp_path: Path) -> Settings:
    # Given explicitly: a CUTIN_* variable of the machine running the tests must not count.
    return Settings(
        sessions_dir=tmp_path / "sessions",
        cache_dir=tmp_path / "cache",
        words_per_minute=165.0,
        stt_model=None,
        openai_base_url=None,
    )


def test_call_and_simulate_plan_the_same_call_for_the_same_options(tmp_path: Path) -> None:
    (spec,) = plan_batch(
        ["retail-order-change"],
        conditions([0.3], [0.7], [0.2]),
        runs=1,
        words_per_minute=150.0,
        rate_jitter=0.0,
    )
    dials = ["--alpha", "0.3", "--beta", "0.7", "--gamma", "0.2", "--style", "human"]
    same = ["--scenario", "retail-order-change", *dials, "--adapt", "--wpm", "150"]
    settings = _settings(tmp_path)
    call_args = build_parser().parse_args(["call", *same, "--seed", str(spec.seed)])
    from_call = call_plan(call_args, settings)
    sim_args = build_parser().parse_args(["simulate", *same])
    scenario = load_scenario("retail-order-change")
    from_simulate = batch_call_plan(spec, scenario, _options(sim_args), tmp_path / "batch")

    # What only a batch has (a simulated caller, the fastest clock, the seeded endpoint,
    # its own file names and header block, the scenario's agent profile) and only a
    # tester's call has (a sessions folder) differ; everything else is the same plan.
    as_a_tester = from_simulate.model_copy(
        update={
            "user": "tester",
            "virtual": False,
            "llm_seed": None,
            "log_path": None,
            "audio_path": None,
            "batch": None,
            "agent_profile": None,
            "sessions_dir": settings.sessions_dir,
        }
    )
    assert as_a_tester == from_call
    assert from_simulate.user == "scripted" and from_simulate.clock_virtual
    assert call_config(from_call, scenario) == call_config(from_simulate, scenario)


BAD_PLANS = [
    (CallPlan(input="mic"), "--input mic needs audio out"),
    (CallPlan(agent="twilio:ws://127.0.0.1:9/"), "spoken by espeak-ng on a line"),
    (CallPlan(push_to_talk=True, speech="espeak"), "--push-to-talk needs --input mic"),
    (CallPlan(shadow="rules"), "already the acting --policy"),
    (CallPlan(user="scripted", speech="espeak", input="mic"), "a simulated caller"),
]


@pytest.mark.parametrize(("plan", "says"), BAD_PLANS)
def test_a_bad_plan_is_one_error_before_any_log_file(
    plan: CallPlan, says: str, tmp_path: Path
) -> None:
    logs = tmp_path / "sessions"
    with pytest.raises(PlanError, match=re.escape(says)) as caught:
        build_call(plan.model_copy(update={"sessions_dir": logs}), _settings(tmp_path))
    assert "\n" not in str(caught.value)
    assert not logs.exists() or not any(logs.iterdir())


def test_cutin_call_refuses_a_bad_plan_before_any_log_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "sessions"
    assert main(["call", "--input", "mic", "--sessions-dir", str(logs)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--input mic needs audio out" in err[0]
    assert not logs.exists() or not any(logs.iterdir())


def test_a_batch_call_with_a_bad_plan_fails_without_a_log(tmp_path: Path) -> None:
    (spec,) = plan_batch(["retail-order-change"], conditions([0.5], [0.0], [0.5]), runs=1)
    scenario = load_scenario("retail-order-change")
    options = CallPlan(user="scripted", agent="twilio:ws://127.0.0.1:9/", speech="text")
    outcome = run_call(spec, scenario, options, tmp_path / "batch", _settings(tmp_path))
    assert outcome.status is CallStatus.FAILED
    assert outcome.message.startswith("PlanError: ") and "espeak-ng on a line" in outcome.message
    assert list((tmp_path / "batch").iterdir()) == []


def _undocumented_fields(path: Path, class_name: str) -> list[str]:
    """Annotated fields of ``class_name`` not followed by a docstring."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    body = cls.body
    missing = []
    for i, node in enumerate(body):
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        after = body[i + 1] if i + 1 < len(body) else None
        documented = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
        if not documented:
            missing.append(node.target.id)
    return missing


@pytest.mark.parametrize(
    ("path", "class_name"),
    [("sessions/settings.py", "Settings"), ("sessions/plan/model.py", "CallPlan")],
)
def test_every_setting_and_plan_field_says_what_it_is(path: str, class_name: str) -> None:
    assert _undocumented_fields(ROOT / path, class_name) == []


def test_tau_voice_may_act_on_a_line() -> None:
    # One engine steps line calls too, so τ-Voice's per-frame classifiers can act there
    # (tests/remote/test_one_engine_line.py runs it against a line).
    plan = CallPlan(agent="realtime", speech="espeak", policy="tau-voice", shadow="rules")
    check_plan(plan)
