"""`cutin simulate` end to end: the scripted agent and user on the virtual text clock,
one log per call, and the realized rates those logs show."""

from __future__ import annotations

import itertools
import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cutin_tui.cli import COMMANDS, main
from sessions.log import read_session
from sessions.log.models import AgentWords, Interruption
from sessions.scenarios import shipped_scenario_names

from .helpers import rates_by_condition, simulate, simulate_json

BETAS = (0.0, 0.1, 0.3, 1.0)
GAMMAS = (0.0, 0.5, 1.0)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every shipped scenario × β × γ × 2 runs (72 calls, a couple of seconds)."""
    out = tmp_path_factory.mktemp("sweep")
    argv = ["simulate", "--beta", ",".join(map(str, BETAS)), "--gamma", ",".join(map(str, GAMMAS))]
    code = main([*argv, "--runs", "2", "--seed", "11", "--out", str(out)])
    assert code == 0
    return out


def test_interruptions_per_agent_turn_rise_with_beta(sweep: Path) -> None:
    rates = rates_by_condition(sweep)
    per_turn = [rates[(0.5, b, 0.0)].interruptions_per_turn for b in BETAS]
    assert per_turn[0] == 0.0
    assert all(a <= b for a, b in itertools.pairwise(per_turn)), per_turn
    assert per_turn[-1] > 0.9, per_turn  # at β = 1 nearly every agent turn is cut


def test_backchannels_per_agent_turn_rise_with_gamma(sweep: Path) -> None:
    rates = rates_by_condition(sweep)
    per_turn = [rates[(0.5, 0.0, g)].backchannels_per_turn for g in GAMMAS]
    assert per_turn[0] == 0.0
    assert all(a < b for a, b in itertools.pairwise(per_turn)), per_turn


def test_audit_shows_the_same_rise(sweep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`cutin audit` on the batch: per-agent-turn rates rise with β and γ, and agree
    with the counts taken straight from the logs."""
    if "audit" not in {name for name, _, _ in COMMANDS}:
        pytest.skip("`cutin audit` is not in this tree yet")
    capsys.readouterr()
    assert main(["audit", str(sweep), "--json", "--resamples", "200"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {
        (r["behavior"], r["condition"]["beta"], r["condition"]["gamma"]): r
        for r in report["turn_taking"]
        if r["mode"] == "auto"
    }
    cut = [rows[("interruption", b, 0.0)]["per_turn"] for b in BETAS]
    assert cut[0] == 0.0 and cut[-1] > 0.9
    assert all(a <= b for a, b in itertools.pairwise(cut)), cut
    mm = [rows[("backchannel", 0.0, g)]["per_turn"] for g in GAMMAS]
    assert mm[0] == 0.0 and all(a < b for a, b in itertools.pairwise(mm)), mm
    mine = rates_by_condition(sweep)
    for b in BETAS:
        for g in GAMMAS:
            row, ours = rows[("interruption", b, g)], mine[(0.5, b, g)]
            assert row["conversations"] == ours.calls
            assert row["agent_turns"] == ours.agent_turns
            assert row["actions"] == ours.interruptions
            assert rows[("backchannel", b, g)]["actions"] == ours.backchannels


def test_replay_opens_the_batch_folder(sweep: Path, tmp_path: Path) -> None:
    """What `cutin replay DIR` loads: every finished call, never a temporary or failed one."""
    from replay.load import load_path

    batch = load_path(sweep)
    assert len(batch) == len(list(sweep.glob("*.jsonl"))) and not batch.warnings
    folder = tmp_path / "b"
    folder.mkdir()
    one, two = sorted(sweep.glob("*.jsonl"))[:2]
    shutil.copy(one, folder / one.name)
    half = two.read_bytes()[:5000]
    (folder / (two.name + ".part")).write_bytes(half)
    (folder / (two.name + ".failed")).write_bytes(two.read_bytes())
    assert len(load_path(folder)) == 1


def test_every_log_names_its_condition_and_run(sweep: Path) -> None:
    files = sorted(sweep.iterdir())
    assert len(files) == len(shipped_scenario_names()) * len(BETAS) * len(GAMMAS) * 2
    assert all(f.suffix == ".jsonl" for f in files), "no .part or .failed files left"
    for path in files:
        s = read_session(path)
        h = s.header
        t = h.tendencies
        assert h.batch is not None
        assert h.batch["batch"] == sweep.name
        assert h.batch["condition"] == {"alpha": t.alpha, "beta": t.beta, "gamma": t.gamma}
        assert h.batch["user"] == "scripted"
        assert h.agent.kind == "scripted" and h.policy == "rules"
        expected = f"{h.scenario}__a{t.alpha:g}_b{t.beta:g}_g{t.gamma:g}__run{h.batch['run']:02d}"
        assert path.name == expected + ".jsonl"
        assert s.events[-1].type == "end" and not s.warnings


def test_runs_differ_and_the_same_command_repeats_exactly(
    sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "retail-order-change__a0.5_b0.3_g0.5__run{:02d}.jsonl"
    run1, run2 = (read_session(sweep / name.format(i)) for i in (1, 2))
    assert run1.header.seeds != run2.header.seeds
    assert run1.header.speech.words_per_minute != run2.header.speech.words_per_minute

    def timings(s: object) -> list[float]:
        return [w.end for e in s.of(AgentWords) for w in e.words]  # type: ignore[attr-defined]

    assert timings(run1) != timings(run2)
    # The seed also picks the caller's interruption lines.
    logs = [read_session(p) for p in sweep.glob("retail-order-change__*.jsonl")]
    lines = {e.text for s in logs for e in s.of(Interruption)}
    assert len(lines) >= 2, lines

    again = tmp_path / "again"
    argv = ["--scenario", "retail-order-change", "--beta", "0.3", "--gamma", "0.5"]
    simulate_json(capsys, *argv, "--runs", "1", "--seed", "11", "--out", str(again))
    repeat = read_session(again / name.format(1))
    assert repeat.header.seeds == run1.header.seeds
    assert [e.model_dump() for e in repeat.events] == [e.model_dump() for e in run1.events]


def test_summary_counts_skipped_calls_and_matches_the_logs(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--beta", ",".join(map(str, BETAS)), "--gamma", ",".join(map(str, GAMMAS))]
    summary = simulate_json(capsys, *argv, "--runs", "2", "--seed", "11", "--out", str(sweep))
    total = len(shipped_scenario_names()) * len(BETAS) * len(GAMMAS) * 2
    assert (summary["ran"], summary["skipped"], summary["failed"]) == (0, total, 0)
    rates = rates_by_condition(sweep)
    rows = summary["conditions"]
    assert isinstance(rows, list) and len(rows) == len(BETAS) * len(GAMMAS)
    for row in rows:
        c = row["condition"]
        mine = rates[(c["alpha"], c["beta"], c["gamma"])]
        assert row["calls"] == mine.calls == len(shipped_scenario_names()) * 2
        assert row["agent_turns"] == mine.agent_turns
        assert row["interruptions"] == mine.interruptions
        assert row["backchannels"] == mine.backchannels


def test_table_and_summary_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    code, stdout, stderr = simulate(
        capsys, "--scenario", "clinic-triage", "--beta", "0,1", "--out", str(out)
    )
    assert code == 0
    assert "interruptions/turn" in stdout and "backchannels/turn" in stdout
    assert re.search(r"│\s+0\.5\s+│\s+1\s+│\s+0\.5\s+│\s+1\s+│", stdout), stdout
    # Not a terminal: one plain progress line per finished call, then the summary.
    lines = stderr.strip().splitlines()
    assert lines[-1] == f"cutin simulate: 2 calls run, 0 skipped, 0 failed -> {out}"
    assert [line.split("]")[0] for line in lines[:-1]] == [
        "cutin simulate: [1/2",
        "cutin simulate: [2/2",
    ]


def test_default_folder_is_under_the_sessions_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CUTIN_SESSIONS_DIR", str(tmp_path / "sessions"))
    summary = simulate_json(capsys, "--scenario", "airline-rebooking")
    out = Path(str(summary["out"]))
    assert out.parent == tmp_path / "sessions" / "batches"
    (log,) = out.glob("*.jsonl")
    assert read_session(log).header.batch["batch"] == out.name  # type: ignore[index]
    flagged = simulate_json(
        capsys, "--scenario", "airline-rebooking", "--sessions-dir", str(tmp_path / "other")
    )
    assert Path(str(flagged["out"])).parent == tmp_path / "other" / "batches"


def test_scenario_file_by_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import resources

    from sessions.scenarios.store import _DATA  # the shipped TOML, copied under a new name

    text = (resources.files(_DATA) / "clinic-triage.toml").read_text(encoding="utf-8")
    path = tmp_path / "mine.toml"
    path.write_text(text.replace('name = "clinic-triage"', 'name = "my-clinic"', 1))
    summary = simulate_json(capsys, "--scenario", str(path), "--out", str(tmp_path / "b"))
    assert summary["ran"] == 1
    assert (tmp_path / "b" / "my-clinic__a0.5_b0_g0.5__run01.jsonl").is_file()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "tau-voice"], "no API key: set OPENAI_API_KEY, or give --base-url"),
        (["--shadow", "rules"], "--shadow rules is already the acting --policy"),
        (["--model", "x"], "--model and --base-url need --agent openai, --user llm or a tau"),
        (["--scenario", "no-such"], "unknown scenario 'no-such'"),
        (["--runs", "0"], "--runs must be at least 1"),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--wpm", "20"], "words per minute must be 60..400"),
    ],
)
def test_bad_flags_are_one_line_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = simulate(capsys, *argv, "--out", str(tmp_path / "b"))
    assert code == 2
    assert err.startswith("cutin: ") and message in err and err.count("\n") == 1, err
    assert not list(tmp_path.glob("b/*.jsonl"))


def test_bad_dial_list_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--beta", "0,1.5"])
    assert exc.value.code == 2
    assert "beta" in capsys.readouterr().err


def test_progress_bar_on_a_terminal(tmp_path: Path, child_env: dict[str, str]) -> None:
    """stderr on a pseudo-terminal gets a rich progress bar; stdout stays the table."""
    master, slave = pty.openpty()
    argv = [sys.executable, "-m", "cutin_tui", "simulate", "--scenario", "clinic-triage"]
    proc = subprocess.Popen(
        [*argv, "--runs", "3", "--out", str(tmp_path / "b"), "--json"],
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**child_env, "COLUMNS": "120", "TERM": "xterm"},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    stdout, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert "simulate" in shown and "3/3" in shown, shown
    assert "3 calls run, 0 skipped" in shown
    assert json.loads(stdout)["ran"] == 3


def test_parallel_jobs_write_the_same_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--scenario", "clinic-triage", "--beta", "0,1", "--gamma", "0,1", "--runs", "2"]
    serial = simulate_json(capsys, *argv, "--out", str(tmp_path / "serial"))
    parallel = simulate_json(capsys, *argv, "--jobs", "2", "--out", str(tmp_path / "parallel"))
    assert serial["ran"] == parallel["ran"] == 8
    assert serial["conditions"] == parallel["conditions"]
    for path in sorted((tmp_path / "serial").glob("*.jsonl")):
        twin = read_session(tmp_path / "parallel" / path.name)
        assert [e.model_dump() for e in twin.events] == [
            e.model_dump() for e in read_session(path).events
        ]
