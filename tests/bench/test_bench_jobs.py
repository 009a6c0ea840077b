"""bench/bench_jobs.py's pure parts (the bench itself never runs here): the --repeat
summary on hand-made rows (the median and range of CPU per call-second, the worst lag of
any run, how many runs paced), and how much τ-Voice's agents talk, which the ``typical``
far end is set to match."""

from __future__ import annotations

import json
from pathlib import Path

from bench.bench_jobs import Level, medians, tau_voice_talk


def level(cpu_s: float, p99_s: float, jobs: int = 12, agent: str = "talkative") -> Level:
    return Level(agent, "live", jobs, jobs, 30.0, cpu_s, 100.0, [p99_s] * jobs, 0, talk_s=93.0)


def test_repeated_rows_report_their_median_range_worst_lag_and_paced_runs() -> None:
    runs = [level(11.0, 0.005), level(9.0, 0.004), level(14.0, 0.040), level(10.0, 0.006)]
    (line,) = medians([*runs, level(8.0, 0.001, jobs=20)])  # a row run once: no summary
    assert line.startswith("talkative  live          12  median 0.105 CPU-s/call-s")
    assert "(range 0.090-0.140, 4 runs)" in line
    assert "worst p99 40.0 ms" in line and "paced 3/4" in line and "talk 93%" in line


def test_an_odd_number_of_runs_takes_the_middle_one() -> None:
    (line,) = medians([level(12.0, 0.001), level(9.0, 0.001), level(30.0, 0.001)])
    assert "median 0.120" in line and "paced 3/3" in line


def test_tau_voices_agents_talk_about_two_thirds_of_their_calls(tmp_path: Path) -> None:
    # The real fixture (files in name order): the agent talks in 542 of 973 ticks, 1,312
    # of 1,810 and 931 of 1,340.
    assert [round(x, 3) for x in tau_voice_talk()] == [0.557, 0.725, 0.695]
    # A simulation of 4 ticks, the agent talking in 3 (a missing chunk is silence); one
    # with no ticks counts for nothing.
    ticks = [{"agent_chunk": {"contains_speech": True}}] * 3 + [{"agent_chunk": None}]
    (tmp_path / "a.json").write_text(json.dumps({"ticks": ticks}), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps({"ticks": []}), encoding="utf-8")
    assert tau_voice_talk(tmp_path) == [0.75]
