"""One plan through each executor that runs here: the same folder comes out.

:func:`sessions.batch.runner.run.run_batch` picks the executor from the plan (one call after
another, worker processes for ``jobs > 1``, the real-time pump for an agent on a line);
each must file the same calls under the same names, resume the same way (a rerun skips
what is finished, leaves its bytes alone and runs only what is missing) and write the
same logs. On the virtual clock a log is the same byte for byte once its wall-clock
header fields are set aside; a line call is real time, so the pump's folder is checked
for the same names, headers and resume against the known agent on loopback (two of
them: each is lent to one call, as a port range is).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from sessions.batch.filing import CallOutcome, CallStatus
from sessions.batch.plan import BatchPlan, CallSpec, Condition, plan_batch
from sessions.batch.runner.run import choose_executor, run_batch
from sessions.batch.tally import tally
from sessions.log import read_session
from sessions.plan import CallPlan
from sessions.scenarios import load_scenario
from tests.support.known_agent import running_known_agent

WALL_CLOCK = ("session_id", "started_at", "t0_unix", "t0_monotonic")
"""Header fields that say when (and as which random id) a call ran, not what it did."""


def _specs(scenario: str, runs: int) -> list[CallSpec]:
    return plan_batch([scenario], [Condition(0.5, 0.7, 0.5)], runs=runs, seed=3, batch="agree")


def _body(path: Path) -> list[object]:
    """A log as parsed lines, its header without the wall-clock fields."""
    lines: list[object] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        if n == 0:
            for name in WALL_CLOCK:
                assert name in record or name.startswith("t0_"), (path.name, name)
                record.pop(name, None)
        lines.append(record)
    return lines


def _run_resume(plan: BatchPlan, delete: Sequence[CallSpec]) -> dict[str, bytes]:
    """Run the plan, delete some calls' files, run it again; returns the folder after the
    first run. Checks the rerun skipped exactly what was left, byte for byte."""
    first = list(run_batch(plan))
    assert [o.status for o in first] == [CallStatus.RAN] * len(plan.specs), _why(first)
    before = {p.name: p.read_bytes() for p in sorted(plan.out_dir.iterdir())}
    for spec in delete:
        for path in plan.out_dir.glob(spec.stem + ".*"):
            path.unlink()
    again = list(run_batch(plan))
    gone = {s.stem for s in delete}
    assert sorted(o.spec.stem for o in again if o.status is CallStatus.SKIPPED) == sorted(
        s.stem for s in plan.specs if s.stem not in gone
    )
    assert sorted(o.spec.stem for o in again if o.status is CallStatus.RAN) == sorted(gone)
    for spec in plan.specs:
        if spec.stem not in gone:  # resumed: not rewritten
            assert (plan.out_dir / spec.file_name).read_bytes() == before[spec.file_name]
    after = {p.name for p in plan.out_dir.iterdir()}
    assert after == set(before), "a rerun files the same names"
    for spec in plan.specs:
        assert tally(read_session(plan.out_dir / spec.file_name).events).complete
    return before


def _why(outcomes: list[CallOutcome]) -> str:
    return "; ".join(f"{o.spec.stem}: {o.message}" for o in outcomes if o.message)


def test_serial_and_process_pool_write_the_same_folder(tmp_path: Path) -> None:
    scenario = load_scenario("clinic-triage")
    specs = _specs(scenario.name, 3)
    folders = {}
    for jobs, name in ((1, "serial"), (2, "pool")):
        plan = BatchPlan(
            specs, {scenario.name: scenario}, CallPlan(user="scripted"), tmp_path / name, jobs=jobs
        )
        assert choose_executor(plan).name == name
        # Two deleted, so the pool's rerun runs in worker processes too.
        _run_resume(plan, specs[1:])
        folders[name] = plan.out_dir
    names = sorted(p.name for p in folders["serial"].iterdir())
    assert names == sorted(s.file_name for s in specs)
    assert names == sorted(p.name for p in folders["pool"].iterdir())
    for name in names:
        serial, pool = _body(folders["serial"] / name), _body(folders["pool"] / name)
        assert len(serial) > 10  # a whole call, not an empty log
        assert serial == pool, name
    # And the logs differ where the plan does: each call has its own seed.
    seeds = {read_session(folders["pool"] / n).header.seeds["seed"] for n in names}
    assert len(seeds) == 3


def test_the_pump_files_and_resumes_a_line_batch_the_same_way(tmp_path: Path) -> None:
    """Two calls on the pump, one per agent; one deleted and run again."""
    scenario = load_scenario("line-check")
    specs = _specs(scenario.name, 2)
    with ExitStack() as stack:
        agents = [stack.enter_context(running_known_agent()) for _ in range(2)]
        options = CallPlan(
            user="scripted", agent=f"twilio:{agents[0].url}", speech="espeak", max_seconds=2.5
        )
        plan = BatchPlan(
            specs,
            {scenario.name: scenario},
            options,
            tmp_path / "pump",
            jobs=2,
            agents=[f"twilio:{a.url}" for a in agents],
        )
        assert choose_executor(plan).name == "pump"
        before = _run_resume(plan, specs[:1])
        # Each agent took one call of the first run (the list is not dropped: with one
        # agent the three calls would all be its), and one of them the rerun's.
        assert sorted(len(a.events("call_start")) for a in agents) == [1, 2]
    assert sorted(before) == sorted([s.file_name for s in specs] + [s.stem + ".wav" for s in specs])
    for spec in specs:
        header = read_session(plan.out_dir / spec.file_name).header
        assert header.scenario == spec.scenario and header.seeds["seed"] == spec.seed
        assert header.batch is not None and header.batch["run"] == spec.run
        assert header.batch["batch"] == "agree"
        assert header.speech.words_per_minute == spec.words_per_minute
