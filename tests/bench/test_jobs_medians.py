"""bench/bench_jobs.py's --repeat summary on hand-made rows (the bench itself never
runs here): the median and range of CPU per call-second, the worst lag of any run, and
how many runs paced."""

from __future__ import annotations

from bench.bench_jobs import Level, medians


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
