"""`cutin compare BASE NEW` on run folders whose truth is known by construction
(tests/check/crafted_runs.py: every yield's latency is what the test wrote).

The NEW agent of the main case stops 300 ms later after every barge-in (plus a seeded
jitter of at most ±20 ms per yield, so the interval is not a point): compare must call
the yield latencies regressed with an interval that excludes 0 and holds ~+0.3 s, and
exit 1; the same calls twice are "no change" and exit 0; an agent that never stops
regresses yield_rate; too few barge-ins are "not enough data"; runs of another scenario,
other dials or another cutin version are flagged. All in a second or two per test.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from cutin_tui.cli import main
from tests.check.crafted_runs import write_run

SHIFT_S = 0.3
JITTER_S = 0.02
RESAMPLES = "400"
"""Enough for a stable 95% interval here, and fast (the default is 2000)."""


def base_latencies(calls: int = 4, per_call: int = 5, seed: int = 7) -> list[list[float]]:
    rng = random.Random(seed)
    return [[round(rng.uniform(0.18, 0.32), 4) for _ in range(per_call)] for _ in range(calls)]


def later(calls: list[list[float]], shift: float, seed: int = 11) -> list[list[float]]:
    rng = random.Random(seed)
    return [[round(v + shift + rng.uniform(-JITTER_S, JITTER_S), 4) for v in c] for c in calls]


def compare(
    capsys: pytest.CaptureFixture[str], *argv: str | Path
) -> tuple[int, dict[str, Any], str]:
    capsys.readouterr()
    code = main(["compare", *map(str, argv), "--resamples", RESAMPLES, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return code, json.loads(out), err


def rows(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["measure"]: r for r in result["rows"]}


def bad(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> str:
    """A run of compare that must refuse its input: exit 2, one line, no traceback."""
    capsys.readouterr()
    code = main(["compare", *map(str, argv), "--resamples", RESAMPLES])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and "\x1b" not in err
    return err


def with_call(audit: dict[str, Any], **fields: Any) -> str:
    """The audit with its first call's fields replaced."""
    row = audit["agent_under_test"][0]
    call = {**row["per_call"][0], **fields}
    return json.dumps({**audit, "agent_under_test": [{**row, "per_call": [call]}]})


@pytest.fixture
def later_runs(tmp_path: Path) -> tuple[Path, Path]:
    lat = base_latencies()
    return write_run(tmp_path / "base", lat), write_run(tmp_path / "new", later(lat, SHIFT_S))


def test_an_agent_that_yields_300_ms_later_regressed(
    later_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from junitparser import Failure, JUnitXml, Skipped

    base, new = later_runs
    junit, md = tmp_path / "compare.xml", tmp_path / "summary.md"
    code, result, _ = compare(capsys, base, new, "--junit", junit, "--markdown", md)
    assert code == 1
    assert result["paired"] is True and result["flags"] == []
    by = rows(result)
    truth_base = [v for c in base_latencies() for v in c]
    truth_new = [v for c in later(base_latencies(), SHIFT_S) for v in c]
    mean = by["yield_latency_mean"]
    assert mean["base"] == pytest.approx(sum(truth_base) / 20, abs=1e-9)
    assert mean["new"] == pytest.approx(sum(truth_new) / 20, abs=1e-9)
    assert mean["difference"] == pytest.approx(SHIFT_S, abs=JITTER_S)
    lo, hi = mean["interval"]
    assert 0 < lo <= mean["difference"] <= hi and hi - lo < 4 * JITTER_S
    for name in ("yield_latency_mean", "yield_latency_median", "yield_latency_p95"):
        assert by[name]["verdict"] == "regressed", by[name]
        assert (by[name]["n_base"], by[name]["n_new"]) == (20, 20)
    assert by["yield_rate"]["verdict"] == "no change"
    assert by["response_latency_mean"]["verdict"] == "no change"
    assert by["false_yield_rate"]["verdict"] == "not enough data"
    assert result["counts"]["regressed"] == 3
    # JUnit, read by a real consumer: one case per measure, the regressions its failures.
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert suite.tests == len(by) and suite.failures == 3
    failed = {c.name for c in suite if any(isinstance(r, Failure) for r in c.result)}
    assert failed == {"yield_latency_mean", "yield_latency_median", "yield_latency_p95"}
    skipped = {c.name for c in suite if any(isinstance(r, Skipped) for r in c.result)}
    assert "false_yield_rate" in skipped
    summary = md.read_text(encoding="utf-8")
    assert summary.startswith("## cutin compare: regressed")
    assert "| yield_latency_p95 |" in summary and "❌ regressed" in summary


def test_the_table_names_the_regression_and_the_seeded_interval_is_reproducible(
    later_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = later_runs
    capsys.readouterr()
    assert main(["compare", str(base), str(new), "--resamples", RESAMPLES]) == 1
    table = capsys.readouterr().out
    line = next(s for s in table.splitlines() if s.startswith("yield_latency_mean "))
    assert "REGRESSED" in line and "+0.3" in line
    assert table.rstrip().splitlines()[-1].startswith("cutin compare: REGRESSED: 3 regressed")
    _, first, _ = compare(capsys, base, new)
    _, again, _ = compare(capsys, base, new)
    _, other, _ = compare(capsys, base, new, "--seed", "5")
    assert first == again
    assert other["rows"] != first["rows"]  # another seed resamples other calls


def test_the_same_calls_twice_are_no_change_and_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lat = base_latencies()
    base = write_run(tmp_path / "base", lat)
    same = write_run(tmp_path / "same", lat)
    code, result, _ = compare(capsys, base, same)
    assert code == 0 and result["verdict"] == "no regression"
    compared = [r for r in result["rows"] if r["verdict"] != "not enough data"]
    assert len(compared) >= 8
    for row in compared:
        assert row["verdict"] == "no change" and row["difference"] == 0, row
        assert row["interval"] == [0.0, 0.0]  # paired: the same calls cancel exactly


def test_unpaired_runs_still_see_the_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lat = base_latencies(calls=5)
    base = write_run(tmp_path / "base", lat)
    new = write_run(tmp_path / "new", later(base_latencies(calls=5, seed=8), SHIFT_S),
                    first_seed=101)  # fmt: skip
    code, result, _ = compare(capsys, base, new)
    assert code == 1 and result["paired"] is False
    assert result["pairs"] == 0 and any("no call pairs" in n for n in result["notes"])
    mean = rows(result)["yield_latency_mean"]
    assert mean["verdict"] == "regressed" and mean["interval"][0] > 0
    # Calls 3-5 in both runs: those three pair, the rest of each is resampled on its own.
    part = write_run(tmp_path / "part", later(lat, SHIFT_S)[2:] + later(lat, SHIFT_S)[:2],
                     first_seed=3)  # fmt: skip
    code, result, _ = compare(capsys, base, part)
    assert code == 1 and result["paired"] is False and result["pairs"] == 3
    assert any("3 calls paired" in n for n in result["notes"])
    assert rows(result)["yield_latency_mean"]["verdict"] == "regressed"


def test_a_faster_agent_improved_and_any_change_fails(
    later_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = later_runs
    code, result, _ = compare(capsys, new, base)
    assert code == 0
    assert rows(result)["yield_latency_mean"]["verdict"] == "improved"
    code, result, _ = compare(capsys, new, base, "--fail-on", "any-change")
    assert code == 1 and result["verdict"] == "changed"


def test_an_agent_that_never_yields_regressed_on_yield_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lat = base_latencies()
    base = write_run(tmp_path / "base", lat)
    never = write_run(tmp_path / "never", [[None] * len(c) for c in lat])
    code, result, _ = compare(capsys, base, never, "--only", "yield_rate")
    assert code == 1
    (row,) = result["rows"]
    assert (row["base"], row["new"], row["difference"]) == (1.0, 0.0, -1.0)
    assert row["verdict"] == "regressed" and row["interval"] == [-1.0, -1.0]


def test_too_few_barge_ins_are_not_enough_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lat = base_latencies(calls=1, per_call=4)  # 4 barge-ins: fewer than 10
    base = write_run(tmp_path / "base", lat)
    new = write_run(tmp_path / "new", later(lat, SHIFT_S))
    code, result, _ = compare(capsys, base, new, "--only", "yield_rate,yield_latency_mean")
    assert code == 1 and result["verdict"] == "not enough data"
    for row in result["rows"]:
        assert row["verdict"] == "not enough data" and "fewer than 10" in row["note"], row
    # Not named: shown as not enough data, never as "no change"; one call a side cannot
    # vary when resampled, so even its dead air has no interval: nothing compared, exit 1.
    code, result, _ = compare(capsys, base, new)
    by = rows(result)
    assert code == 1 and result["verdict"] == "nothing compared"
    assert by["dead_air_fraction"]["verdict"] == "not enough data"
    assert "cannot vary" in by["dead_air_fraction"]["note"]


def test_runs_of_another_scenario_dials_or_version_are_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from junitparser import JUnitXml

    lat = base_latencies()
    base = write_run(tmp_path / "base", lat)
    other = write_run(tmp_path / "other", lat, scenario="clinic-triage", beta=0.5,
                      version="0.10.0")  # fmt: skip
    junit, md = tmp_path / "c.xml", tmp_path / "c.md"
    code, result, _ = compare(capsys, base, other, "--junit", junit, "--markdown", md)
    flags = result["flags"]
    assert [f.split(":")[0] for f in flags] == [
        "different scenarios", "different dials", "different cutin versions",
    ]  # fmt: skip
    assert "retail-order-change" in flags[0] and "clinic-triage" in flags[0]
    assert "β 1" in flags[1] and "β 0.5" in flags[1]
    assert result["paired"] is False  # other scenarios: no call pairs
    assert code == 0  # flagged, still compared: the latencies are the same
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert sum(c.name.startswith("flagged: ") for c in suite) == 3
    assert "**Flagged:** different scenarios" in md.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["compare", str(base), str(other)]) == 0
    assert "FLAGGED: different scenarios" in capsys.readouterr().out
    err = bad(capsys, base, other, "--strict")
    assert "different scenarios" in err
    # A scenario name with escape sequences is flagged inert in every rendering.
    evil = write_run(tmp_path / "evil", lat, scenario="\x1b]0;owned\x07\x1b[2Jx\u2028y")
    capsys.readouterr()
    assert (
        main(["compare", str(base), str(evil), "--junit", str(junit), "--markdown", str(md)]) == 0
    )
    out = (
        capsys.readouterr().out + junit.read_text(encoding="utf-8") + md.read_text(encoding="utf-8")
    )
    assert "FLAGGED: different scenarios" in out
    assert not any(c in out for c in ("\x1b", "\x07", "\u2028"))


def test_lagged_calls_are_left_out_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lat = base_latencies()
    base = write_run(tmp_path / "base", lat)
    new = write_run(tmp_path / "new", later(lat, SHIFT_S), lagged=[0, 1, 2])
    _, result, _ = compare(capsys, base, new)
    assert result["new"]["lagged_left_out"] == 3 and result["new"]["agent_calls"] == 1
    assert rows(result)["yield_latency_mean"]["n_new"] == 5
    _, kept, _ = compare(capsys, base, new, "--keep-lagged")
    assert kept["new"]["lagged_left_out"] == 0
    assert rows(kept)["yield_latency_mean"]["verdict"] == "regressed"


def test_audit_json_files_compare_as_their_run_folders(
    later_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jsons = []
    for folder in later_runs:
        capsys.readouterr()
        assert main(["audit", str(folder), "--json"]) == 0
        path = tmp_path / f"{folder.name}.json"
        path.write_text(capsys.readouterr().out, encoding="utf-8")
        jsons.append(path)
    code, from_json, _ = compare(capsys, *jsons)
    _, from_runs, _ = compare(capsys, *later_runs)
    assert code == 1
    j, r = rows(from_json), rows(from_runs)
    for name in ("yield_rate", "yield_latency_mean", "response_rate", "dead_air_fraction"):
        assert j[name]["base"] == pytest.approx(r[name]["base"])
        assert j[name]["new"] == pytest.approx(r[name]["new"])
    assert j["yield_latency_mean"]["verdict"] == "regressed"
    assert j["yield_latency_p95"]["base"] == pytest.approx(r["yield_latency_p95"]["base"])
    assert j["yield_latency_p95"]["verdict"] == "not enough data"  # no events in a json
    assert from_json["paired"] is False
    # A run folder against an audit of it: the same numbers.
    _, mixed, _ = compare(capsys, jsons[0], later_runs[0])
    assert all(row["verdict"] in ("no change", "not enough data") for row in mixed["rows"])


def test_bad_input_is_one_line_and_exit_2(
    later_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = later_runs
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "not a run folder" in bad(capsys, base, empty)
    assert "no such file" in bad(capsys, tmp_path / "missing", base)
    # A run folder with a log cut inside its header, and one with garbage for a log.
    cut = tmp_path / "cut"
    shutil.copytree(base, cut)
    logs = sorted(cut.glob("*.jsonl"))
    logs[0].write_bytes(logs[0].read_bytes()[:50])
    bad(capsys, base, cut)
    logs[0].write_bytes(b"\x1b[31m\x00\xff garbage\n" * 3)
    assert "\x1b" not in bad(capsys, cut, base)
    # Hostile audit --json files.
    capsys.readouterr()
    assert main(["audit", str(base), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    cases: dict[str, str | bytes] = {
        "garbage.json": b"\x00\x1b[31m not json \xff",
        "truncated.json": json.dumps(audit)[:500],
        "nan.json": json.dumps(audit).replace('"yields": 20', '"yields": NaN', 1),
        "list.json": "[1, 2, 3]",
        "no-agent.json": json.dumps({k: v for k, v in audit.items() if k != "agent_under_test"}),
        "negative.json": with_call(audit, yield_total=-3),
        "huge.json": with_call(audit, responses=10**12),
        "string.json": with_call(audit, yields="\x1b]0;x\x07"),
        "more-yields.json": with_call(audit, yields=25),
        "\x1b[2Jevil.json": "{",
    }
    for name, content in cases.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        err = bad(capsys, path, base)
        assert err.startswith("cutin: base: ") or err.startswith("cutin compare: "), err
    assert "unknown measure" in bad(capsys, base, base, "--only", "yield_rat")
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(base), str(base), "--fail-on", "sometimes"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--fail-on" in err and len(err.strip().splitlines()) == 1


def test_a_saved_baseline_compares_as_its_run_folder(
    later_runs: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, new = later_runs
    monkeypatch.setenv("CUTIN_BASELINES_DIR", str(tmp_path / "baselines"))
    capsys.readouterr()
    assert main(["compare", "--save-baseline", "v1.4", str(base)]) == 0
    assert "4 calls" in capsys.readouterr().out
    saved = tmp_path / "baselines" / "v1.4.json"
    assert json.loads(saved.read_text(encoding="utf-8"))["schema"] == "cutin.baseline/1"
    assert str(tmp_path) not in saved.read_text(encoding="utf-8")  # no path of the machine
    _, by_name, _ = compare(capsys, "v1.4", new)
    _, by_file, _ = compare(capsys, saved, new)
    _, by_folder, _ = compare(capsys, base, new)
    assert by_name["paired"] and by_name["rows"] == by_folder["rows"] == by_file["rows"]
    assert rows(by_name)["yield_latency_p95"]["verdict"] == "regressed"  # events kept
    # A baseline at a path of its own, and the same run against it: no change.
    own = tmp_path / "kept" / "base.json"
    capsys.readouterr()
    assert main(["compare", "--save-baseline", str(own), str(base)]) == 0
    code, same, _ = compare(capsys, own, base)
    assert code == 0 and same["counts"]["regressed"] == 0
    # Bad names, bad uses, and saved files that are not what they say.
    assert "baseline is named" in bad(capsys, "--save-baseline", "../up", base)
    assert "takes one run" in bad(capsys, "--save-baseline", "x", base, new)
    assert "nor a saved baseline" in bad(capsys, "v9", new)
    doc = json.loads(saved.read_text(encoding="utf-8"))
    call = doc["calls"][0]
    for broken in (
        {**doc, "calls": []},
        {**doc, "calls": [{**call, "yields": 99}]},
        {**doc, "calls": [{**call, "yield_latencies": [0.2, -1]}]},
        {**doc, "calls": [{**call, "speech_s": "\x1b[2J"}]},
        {**doc, "calls": [{**call, "selectivity": {"vocal_tic": [1, 5]}}]},
        {**doc, "dials": [3]},
    ):
        path = tmp_path / "broken.json"
        path.write_text(json.dumps(broken), encoding="utf-8")
        err = bad(capsys, path, new)
        assert err.startswith("cutin: base: ") and "broken.json: " in err, err


def test_the_resamples_are_the_audits_measures(tmp_path: Path) -> None:
    """The bootstrap's vectorised measures, at one pick of every call, are the audit's
    pooled values (its own computation) for every measure a run defines; and a resample
    that picks a call twice counts its events twice."""
    import numpy as np

    from replay.check.compare_load import load_side
    from replay.check.compare_resample import pooled as _pooled
    from replay.check.compare_resample import resampled as _resampled
    from replay.check.measures import SPECS
    from tests.support.black_box_log import write_black_box_log

    folder = write_run(tmp_path / "run", [*later(base_latencies(), 0.0), [None, 0.4]])
    write_black_box_log(folder)  # a backchannel, a false yield, talk-over, pauses
    side = load_side(folder, "base")
    calls = [u.agent for u in side.units]
    names = list(SPECS)
    pooled = _pooled(calls)
    once = _resampled(side.units, np.ones((1, len(calls)), dtype=np.int64), names)[0]
    defined = [n for n in names if isinstance(pooled.get(n), int | float)]
    assert len(defined) >= 14, defined
    for j, name in enumerate(names):
        if name in defined:
            assert once[j] == pytest.approx(pooled[name], rel=1e-12, abs=1e-12), name
        else:
            assert np.isnan(once[j]), name
    twice = np.ones((1, len(calls)), dtype=np.int64)
    twice[0, 0] = 2
    again = _resampled(side.units, twice, names)[0]
    doubled = _pooled([calls[0], *calls])
    for j, name in enumerate(names):
        if name in defined:
            assert again[j] == pytest.approx(doubled[name], rel=1e-12, abs=1e-12), name
