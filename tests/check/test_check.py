"""`cutin check` on two recorded runs whose truth is known by construction.

One module-scoped fixture dials the known agent (examples/known_agent.py) twice, one batch
after the other, with `cutin simulate` (real sockets on loopback, real VAD and tiny.en):
once as an agent that stops 300 ms after the caller cuts in, once as one that never stops,
then the yielding agent again (shorter calls, the same seeds): two real runs of the same
agent for `compare`'s "no change". β = 1 and short caller lines cut in on every reply, so
each run holds ten or more barge-ins; every check below reads those three folders (or one
call of them), nothing else is dialled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from cutin_tui.cli import main
from replay.check.evaluate import says, words
from tests.support.known_agent import running_known_agent

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNS = {
    # name: (known agent's flags, calls, seconds each). The agent that never yields
    # talks its whole reply (50 words at 260 wpm, ~13 s) over the caller, so the rule
    # cuts in once per reply, about every 20 s; the yielding one is cut in on every ~8 s.
    "yielding": (("--wpm", "300"), 2, 70),
    "never": (("--wpm", "260", "--never-yield"), 3, 75),
    # The yielding agent once more: 2 calls of 50 s, ~6 barge-ins each.
    "again": (("--wpm", "300"), 2, 50),
}
SCENARIO = """\
name = "check-barge-ins"
title = "Short caller lines that cut in on every reply"

[agent]
name = "the known agent"
turns = [{ text = "Hello." }]

[user]
goal = "Cut in on every reply."
persona = "A caller in a hurry."
turns = [
  "Hi, tell me about my order.", "Go on.", "And then?", "Right.", "Okay.", "Go on.",
  "And then?", "Right.", "Okay.", "Go on.", "And then?", "Right.", "Okay.", "Go on.",
  "And then?", "Right.", "Okay.", "Go on.", "And then?", "Right.",
]
interruptions = ["Wait."]

[expect]
yield_rate = ">= 0.9"
agent_says = ["order open here"]
"""


@dataclass(frozen=True)
class Runs:
    yielding: Path
    never: Path
    again: Path
    scenario: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("check-runs")
    scenario = root / "check-barge-ins.toml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    # One batch after the other, two calls at a time: the suite's other workers' real-time
    # calls keep their CPU (five at once starved them).
    for name, (flags, calls, seconds) in RUNS.items():
        with ExitStack() as stack:
            agents = [stack.enter_context(running_known_agent(*flags)) for _ in range(calls)]
            argv = [
                sys.executable, "-m", "cutin_tui", "simulate", "--scenario", str(scenario),
                "--beta", "1", "--gamma", "0", "--runs", str(calls), "--jobs", "2",
                "--max-seconds", str(seconds), "--out", str(root / name), "--force",
            ]  # fmt: skip
            argv += [a for agent in agents for a in ("--agent", f"twilio:{agent.url}")]
            batch = subprocess.run(argv, env=env, capture_output=True, timeout=600)
            assert batch.returncode == 0, batch.stderr.decode(errors="replace")[-2000:]
    return Runs(root / "yielding", root / "never", root / "again", scenario)


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def check_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code, out, err = check(capsys, *argv, "--json")
    assert code in (0, 1), err
    result: dict[str, object] = json.loads(out)
    return code, result


def rows(result: dict[str, object]) -> dict[str, dict[str, object]]:
    assert isinstance(result["rows"], list)
    return {str(r["measure"]): r for r in result["rows"]}


def expect_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expect.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_yielding_agent_passes_and_one_that_never_yields_fails(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expect = expect_file(tmp_path, 'yield_rate = ">= 0.9"\n')
    code, good = check_json(capsys, str(runs.yielding), "--expect", str(expect), "--keep-lagged")
    yield_row = rows(good)["yield_rate"]
    assert isinstance(yield_row["n"], int) and yield_row["n"] >= 10, yield_row
    assert yield_row["verdict"] == "PASS" and code == 0, yield_row
    code, bad = check_json(capsys, str(runs.never), "--expect", str(expect), "--keep-lagged")
    yield_row = rows(bad)["yield_rate"]
    assert isinstance(yield_row["n"], int) and yield_row["n"] >= 10, yield_row
    assert yield_row["measured"] == 0.0 and yield_row["verdict"] == "FAIL" and code == 1
    # The same numbers the audit prints for these calls.
    capsys.readouterr()
    assert main(["audit", "--json", "--keep-lagged", "--by", "agent_kind", str(runs.never)]) == 0
    [audited] = json.loads(capsys.readouterr().out)["agent_under_test"]
    assert audited["yield_total"] == yield_row["n"] and audited["yield_rate"] == 0.0


def test_the_table_and_exit_codes(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expect = expect_file(tmp_path, 'yield_rate = ">= 0.9"\nresponse_rate = ">= 0.5"\n')
    code, out, _ = check(capsys, str(runs.never), "--expect", str(expect), "--keep-lagged")
    assert code == 1
    head, *lines = out.splitlines()
    assert head.split()[:5] == ["measure", "expected", "measured", "95%", "interval"]
    assert any(line.startswith("yield_rate") and "FAIL" in line for line in lines)
    assert lines[-1].startswith("cutin check: FAIL")
    assert "\x1b" not in out


def test_fewer_than_ten_events_is_not_enough_data_never_a_pass(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The first minutes of one call: its log cut after its fifth barge-in, as a call
    # that ended there leaves it (a real log, fewer events).
    one = tmp_path / "one"
    one.mkdir()
    first = sorted(runs.yielding.glob("*.jsonl"))[0]
    lines = first.read_text(encoding="utf-8").splitlines(keepends=True)
    barge_ins = [i for i, line in enumerate(lines) if '"after":"interruption"' in line]
    assert len(barge_ins) >= 5
    (one / first.name).write_text("".join(lines[: barge_ins[4] + 1]), encoding="utf-8")
    expect = expect_file(tmp_path, 'yield_rate = ">= 0.9"\n')
    code, result = check_json(capsys, str(one), "--expect", str(expect), "--keep-lagged")
    row = rows(result)["yield_rate"]
    assert isinstance(row["n"], int) and 0 < row["n"] < 10
    assert row["verdict"] == "NOT ENOUGH DATA" and code == 1 and result["passed"] is False


def test_lagged_calls_are_left_out_and_counted(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sessions.log import read_session
    from sessions.log.models import LAG_LIMIT_S, EndEvent

    lagged = 0
    for log in runs.never.glob("*.jsonl"):
        lag = read_session(log).of(EndEvent)[-1].frame_lag
        lagged += lag is not None and lag.p99_s > LAG_LIMIT_S
    expect = expect_file(tmp_path, 'yield_rate = ">= 0.9"\n')
    _, result = check_json(capsys, str(runs.never), "--expect", str(expect))
    assert result["lagged"] == lagged and result["calls"] == RUNS["never"][1]
    _, kept = check_json(capsys, str(runs.never), "--expect", str(expect), "--keep-lagged")
    n, n_kept = rows(result)["yield_rate"]["n"], rows(kept)["yield_rate"]["n"]
    assert isinstance(n, int) and isinstance(n_kept, int)
    assert (n < n_kept) == (lagged > 0) and n <= n_kept


def test_junit_parses_with_a_real_consumer_and_counts_the_failures(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from junitparser import Failure, JUnitXml

    expect = expect_file(
        tmp_path,
        '[expect]\nyield_rate = ">= 0.9"\ndead_air_max_gap_s = "<= 60"\n'
        'yield_latency_p95 = "<= 1.2"\n',
    )
    junit, md = tmp_path / "report.xml", tmp_path / "summary.md"
    code, _, _ = check(
        capsys, str(runs.never), "--expect", str(expect), "--keep-lagged",
        "--junit", str(junit), "--markdown", str(md),
    )  # fmt: skip
    assert code == 1
    xml = JUnitXml.fromfile(str(junit))
    [suite] = list(xml)
    cases = {case.name: case for case in suite}
    assert set(cases) == {
        "yield_rate >= 0.9",
        "dead_air_max_gap_s <= 60",
        "yield_latency_p95 <= 1.2",
    }
    failures = {
        name: r.type for name, case in cases.items() for r in case.result if isinstance(r, Failure)
    }
    # It never yields: the rate fails, and there is no yield latency to measure (not
    # enough data, a failure too); the longest silence passes.
    assert failures == {
        "yield_rate >= 0.9": "threshold",
        "yield_latency_p95 <= 1.2": "not-enough-data",
    }
    assert suite.tests == 3 and suite.failures == 2
    summary = md.read_text(encoding="utf-8")
    assert summary.startswith("## cutin check: FAILED") and "| yield_rate |" in summary


def test_a_scenarios_expect_table_and_agent_says(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, result = check_json(capsys, str(runs.yielding), "--expect", str(runs.scenario),
                              "--keep-lagged")  # fmt: skip
    assert set(rows(result)) == {"yield_rate", "agent_says"}
    assert rows(result)["agent_says"]["verdict"] == "PASS" and code == 0
    expect = expect_file(tmp_path, 'agent_says = ["your refund is approved"]\n')
    code, result = check_json(capsys, str(runs.yielding), "--expect", str(expect))
    assert rows(result)["agent_says"]["verdict"] == "FAIL" and code == 1


@pytest.mark.parametrize(
    ("text", "says_in_error"),
    [
        ('yield_rate = ">= 0.9"\nyeild_rate = ">= 0.9"\n', "unknown expect key 'yeild_rate'"),
        ('"yield\\u001b[2J" = ">= 0.9"\n', "unknown expect key 'yield"),
        ('yield_rate = "=> 0.9"\n', "expect key 'yield_rate'"),
        ("yield_rate = 0.9\n", "expect key 'yield_rate'"),
        ('yield_rate = ">= nan"\n', "expect key 'yield_rate'"),
        ('yield_rate = ">= 1e999"\n', "expect key 'yield_rate'"),
        ("yield_rate = nan\n", "expect.toml"),
        ('yield_rate = ">= 0.9\n', "not valid TOML"),
        ('judge = "gpt"\n', "expect key 'judge'"),
        ("agent_says = [1]\n", "expect key 'agent_says'"),
        ("", "no expectations"),
    ],
)
def test_bad_expectations_are_one_line_exit_2(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says_in_error: str
) -> None:
    expect = expect_file(tmp_path, text)
    code, out, err = check(capsys, str(runs.yielding), "--expect", str(expect))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and says_in_error in err, err
    assert "\x1b" not in err and "Traceback" not in err


def test_a_scenario_with_a_bad_expect_table_does_not_load(tmp_path: Path) -> None:
    from sessions.scenarios import ScenarioError, load_scenario

    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace('yield_rate = ">= 0.9"', 'yield_rat = ">= 0.9"'), "utf-8")
    with pytest.raises(ScenarioError, match=r"field 'expect'.*unknown expect key 'yield_rat'"):
        load_scenario(path)


def test_an_empty_run_folder_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    code, out, err = check(capsys, str(tmp_path / "empty"), "--expect", "x.toml")
    assert code == 2 and out == "" and err.count("\n") == 1 and "no session logs" in err
    code, _, err = check(capsys, str(tmp_path / "missing"))
    assert code == 2 and "no such file" in err


def test_says_tolerates_what_tiny_en_does_to_words() -> None:
    heard = words("I have your order, open here. And the order-number is 4 5 6!")
    assert says(heard, "order open here")
    assert says(heard, "Order Number")  # case, hyphen
    assert says(words("I have you ordered open here."), "order open here")  # as heard
    assert says(heard, "orders numbers")  # endings
    assert says(heard, "your order here")  # one word inserted inside the phrase
    assert not says(heard, "here open order")  # order matters
    assert not says(heard, "have number")  # too far apart
    assert not says(words("I have your"), "your order")


def test_without_expect_a_scenario_from_a_file_is_not_looked_up(
    runs: Runs, capsys: pytest.CaptureFixture[str]
) -> None:
    # The logs name check-barge-ins, a scenario from a file: cutin never opens a file a
    # log names, so its [expect] comes with --expect FILE.
    code, out, err = check(capsys, str(runs.yielding))
    assert code == 2 and out == "" and "no expectations" in err and "--expect FILE" in err


def test_compare_says_the_agent_that_never_yields_regressed(
    runs: Runs, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cutin compare` on the same two recorded runs (tests/check/test_compare.py has the
    rest, on runs crafted to the millisecond)."""
    capsys.readouterr()
    argv = ["--keep-lagged", "--json", "--resamples", "500"]
    code = main(["compare", str(runs.yielding), str(runs.never), "--only", "yield_rate", *argv])
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert code == 1 and row["verdict"] == "regressed", row
    assert row["base"] >= 0.9 and row["new"] == 0.0 and row["interval"][1] < 0, row
    assert row["n_base"] >= 10 and row["n_new"] >= 10
    # The yielding run against itself: the same calls pair and nothing changed.
    code = main(["compare", str(runs.yielding), str(runs.yielding), *argv])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["paired"] and result["counts"]["regressed"] == 0
    assert rows(result)["yield_rate"]["verdict"] == "no change"


def test_two_real_runs_of_the_same_yielding_agent_are_no_change(
    runs: Runs, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two batches dialled one after the other, the same agent and seeds: the rates its
    behaviour fixes (does it yield, answer, talk over the caller) are no change, exit 0.

    Not every measure: latencies move with the machine's load between two batches (here
    the second ran 0.12 s faster at the median: "improved"), and an interval from a
    bootstrap over two calls a side cannot hold that run-to-run spread."""
    capsys.readouterr()
    only = "yield_rate,response_rate,agent_interruption_rate"
    argv = ["--keep-lagged", "--json", "--resamples", "500", "--only", only]
    code = main(["compare", str(runs.yielding), str(runs.again), *argv])
    result = json.loads(capsys.readouterr().out)
    assert result["paired"] and result["flags"] == [], result
    [row] = [r for r in result["rows"] if r["measure"] == "yield_rate"]
    assert row["n_base"] >= 10 and row["n_new"] >= 10, row
    assert row["base"] >= 0.9 and row["new"] >= 0.9, row
    assert {r["measure"]: r["verdict"] for r in result["rows"]} == dict.fromkeys(
        only.split(","), "no change"
    ), result["rows"]
    assert code == 0 and result["verdict"] == "no regression", result
