"""Agent-side measures of black-box calls from hand-made logs with known numbers:
yields and their latency, false yields after backchannels, response latency,
talk-over and the pause profile — per call, per condition with bootstrap intervals,
in `cutin audit` (text and --json) and in `cutin report`. No audio."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from replay.audit.agent_measures import call_of_session, call_row, condition_row, measures_of_trial
from replay.audit.load import load_conversations
from replay.audit.report import build_report
from replay.load import load_log
from sessions.log import read_session
from sessions.log.models import (
    AgentInfo,
    AgentTurnEnd,
    AgentTurnStart,
    AgentYield,
    Backchannel,
    EndEvent,
    Event,
    Header,
    Interruption,
    LineEvent,
    ShortPause,
    TurnEnd,
    UserTurn,
)
from tests.support.cli import run_cutin
from tests.support.logs import header, tendencies, write_log


def head(session_id: str, *, kind: str = "twilio", beta: float = 0.5) -> Header:
    return header(
        session_id,
        scenario="retail",
        agent=AgentInfo(kind=kind, name="my-bot"),
        tendencies=tendencies(0.0, beta, 0.5),
        seeds={"seed": 1},
    )


def yielded(
    turn: int, after: str, onset: float, latency: float | None, *, talk: float = 0.0
) -> AgentYield:
    window = 2.0 if after == "interruption" else 1.0
    stop = None if latency is None else round(onset + latency, 6)
    return AgentYield(
        t=onset + window,
        turn=turn,
        after=after,
        onset_t=onset,
        window_s=window,
        yielded=latency is not None,
        stop_t=stop,
        latency_s=latency,
        resumed=talk > 0,
        heard="some words",
        talk_over_s=talk,
    )


def pause(t: float, index: int, turn: int | None) -> ShortPause:
    return ShortPause(t=t, index=index, silence_start=round(t - 0.2, 6), turn=turn)


def known_call() -> list[Event]:
    """3 interruptions (yields at 0.25 and 0.35 s, one not), 4 backchannels (1 false
    yield), response latencies 0.8 and 1.2 s, 12 s of speech with 5 mid-turn pauses,
    talk-over 0.25 + 0.35 + 2.0 s over 3 agent turns."""
    return [
        AgentTurnStart(t=0.5, turn=0),
        pause(2.0, 0, 0),
        pause(4.0, 1, 0),
        Interruption(t=5.0, turn=0, cut_t=5.0, cut_word=9, text="wait", reaction_s=0.1),
        UserTurn(t=5.0, turn=0, original="wait", rendered="wait", end_t=7.0),
        pause(5.45, 2, 0),
        TurnEnd(t=5.75, silence_start=5.25, turn=0, short_pause_index=2),
        yielded(0, "interruption", 5.0, 0.25, talk=0.25),
        AgentTurnEnd(
            t=5.8,
            turn=0,
            text="a",
            spoken="a",
            interrupted=True,
            cut_t=5.0,
            stop_t=5.25,
            talk_over_s=0.25,
            speech_s=4.5,
        ),
        AgentTurnStart(t=7.8, turn=1, response_latency_s=0.8),
        pause(8.5, 3, 1),
        Backchannel(t=9.0, turn=1, token="mm-hmm"),
        yielded(1, "backchannel", 9.0, None),
        Backchannel(t=10.0, turn=1, token="mm-hmm"),
        yielded(1, "backchannel", 10.0, 0.4),
        LineEvent(t=10.5, kind="clear", detail="agent flushed its audio"),
        Interruption(t=12.0, turn=1, cut_t=12.0, cut_word=20, text="hold on"),
        UserTurn(t=12.0, turn=1, original="hold on", rendered="hold on", end_t=13.0),
        yielded(1, "interruption", 12.0, 0.35, talk=0.35),
        AgentTurnEnd(
            t=12.9,
            turn=1,
            text="b",
            spoken="b",
            interrupted=True,
            cut_t=12.0,
            stop_t=12.35,
            talk_over_s=0.35,
            speech_s=4.0,
        ),
        AgentTurnStart(t=14.2, turn=2, response_latency_s=1.2),
        pause(15.0, 4, 2),
        Backchannel(t=15.5, turn=2, token="mm-hmm"),
        yielded(2, "backchannel", 15.5, None),
        pause(16.0, 5, 2),
        Backchannel(t=16.5, turn=2, token="yeah"),
        yielded(2, "backchannel", 16.5, None),
        Interruption(t=17.0, turn=2, cut_t=17.0, cut_word=30, text="excuse me"),
        UserTurn(t=17.0, turn=2, original="excuse me", rendered="excuse me", end_t=19.0),
        yielded(2, "interruption", 17.0, None, talk=2.0),
        pause(19.6, 6, None),  # outside any agent turn: not the agent's pause
        AgentTurnEnd(
            t=20.0,
            turn=2,
            text="c",
            spoken="c",
            interrupted=True,
            cut_t=17.0,
            talk_over_s=2.0,
            speech_s=3.5,
        ),
        EndEvent(t=21.0, reason="user_hangup"),
    ]


def plain_call() -> list[Event]:
    """A simulated call (cutin's own agent): no black-box events."""
    return [
        AgentTurnStart(t=0.0, turn=0, text="hello there"),
        pause(1.0, 0, 0),
        AgentTurnEnd(t=2.0, turn=0, text="hello there", spoken="hello there", talk_over_s=0.0),
        UserTurn(t=2.5, turn=0, original="hi", rendered="hi", end_t=3.0),
        EndEvent(t=4.0, reason="hangup"),
    ]


EXPECTED = {
    "agent_turns": 3,
    "yield_total": 3,
    "yields": 2,
    "yield_rate": 2 / 3,
    "yield_latency_mean": 0.3,
    "yield_latency_median": 0.3,
    "yield_latency_p95": 0.345,
    "backchannel_total": 4,
    "false_yields": 1,
    "false_yield_rate": 0.25,
    "selectivity_backchannel": 0.75,
    "response_total": 2,
    "response_latency_mean": 1.0,
    "response_latency_median": 1.0,
    "talk_over_turns": 3,
    "talk_over_s": 2.6,
    "talk_over_per_turn_s": 2.6 / 3,
    "short_pauses": 5,
    "speech_s": 12.0,
    "pauses_per_min": 25.0,
}


def _close(row: dict[str, Any], expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        got = row[key]
        if isinstance(value, float):
            assert got == pytest.approx(value, abs=1e-12), key
        else:
            assert got == value, key


def test_the_new_events_survive_loading_with_unknown_fields(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a.jsonl", known_call(), head("a"))
    session = read_session(log)
    ys = [e for e in session.events if isinstance(e, AgentYield)]
    assert len(ys) == 7
    cut = next(e for e in session.events if isinstance(e, Interruption))
    assert cut.model_extra == {"reaction_s": 0.1}
    trial = load_log(log)
    agent = list(trial.agent_turns())
    assert agent[1].meta["response_latency_s"] == 0.8
    assert agent[0].meta["speech_s"] == 4.5 and agent[0].meta["stop_t"] == 5.25
    inline = [e for t in agent for e in t.events if e.kind == "agent_yield"]
    assert len(inline) == 7
    first = inline[0]
    assert first.t == 5.0 and first.data["latency_s"] == 0.25 and first.data["decided_t"] == 7.0
    assert first.label == "stopped 0.25 s after the interruption"
    false = next(e for e in inline if e.data["after"] == "backchannel" and e.data["yielded"])
    assert false.label.startswith("false yield")
    interruption = next(e for e in agent[0].events if e.kind == "interruption")
    assert interruption.data["reaction_s"] == 0.1  # an unknown field, kept
    # The cut's reaction is the measured one, not the turn's talk-over.
    assert (interruption.data["yielded"], interruption.data["yield_latency_s"]) == (True, 0.25)
    ignored = next(e for e in agent[2].events if e.kind == "interruption")
    assert (ignored.data["yielded"], ignored.data["yield_latency_s"]) == (False, None)
    assert ignored.data["talk_over_s"] == 2.0


def test_one_call_has_exact_known_measures(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a.jsonl", known_call(), head("a"))
    row = measures_of_trial(load_log(log))
    assert row is not None
    _close(row, EXPECTED)
    assert row["agent_kind"] == "twilio" and row["id"] == "a"
    # The audit reaches the same numbers from the raw session.
    call = call_of_session(read_session(log))
    assert call is not None
    assert call_row(call) == row


def test_a_call_without_black_box_events_has_no_measures(tmp_path: Path) -> None:
    log = write_log(tmp_path / "p.jsonl", plain_call(), head("p", kind="openai"))
    assert measures_of_trial(load_log(log)) is None
    assert call_of_session(read_session(log)) is None
    convs, _ = load_conversations([log])
    report = build_report(convs, ["beta"], resamples=200)
    assert report.agent_under_test == []
    assert "agent_under_test" not in report.as_json()


def test_a_yield_event_makes_any_call_measured(tmp_path: Path) -> None:
    events = [*plain_call()[:2], yielded(0, "backchannel", 1.5, 0.2), *plain_call()[2:]]
    log = write_log(tmp_path / "y.jsonl", events, head("y", kind="openai"))
    row = measures_of_trial(load_log(log))
    assert row is not None
    assert (row["false_yields"], row["backchannel_total"], row["yield_total"]) == (1, 1, 0)
    # Zero denominators are None, never NaN.
    assert row["yield_rate"] is None and row["yield_latency_mean"] is None
    assert row["yield_latency_p95"] is None and row["response_latency_mean"] is None
    assert row["pauses_per_min"] is None  # no turn logged its speech seconds


def test_condition_pools_calls_with_bootstrap_intervals(tmp_path: Path) -> None:
    # Call b: one interruption the agent ignored, no backchannels, 6 s of speech, 1 pause.
    other: list[Event] = [
        AgentTurnStart(t=0.5, turn=0),
        pause(2.0, 0, 0),
        Interruption(t=3.0, turn=0, cut_t=3.0, cut_word=5, text="wait"),
        UserTurn(t=3.0, turn=0, original="wait", rendered="wait", end_t=4.0),
        yielded(0, "interruption", 3.0, None, talk=1.0),
        AgentTurnEnd(
            t=6.8,
            turn=0,
            text="x",
            spoken="x",
            interrupted=True,
            cut_t=3.0,
            talk_over_s=1.0,
            speech_s=6.0,
        ),
        AgentTurnStart(t=7.5, turn=1, response_latency_s=0.5),
        AgentTurnEnd(t=9.0, turn=1, text="y", spoken="y", talk_over_s=0.0, speech_s=0.0),
        EndEvent(t=10.0, reason="user_hangup"),
    ]
    a = write_log(tmp_path / "a.jsonl", known_call(), head("a"))
    b = write_log(tmp_path / "b.jsonl", other, head("b"))
    c = write_log(tmp_path / "c.jsonl", known_call(), head("c", beta=0.0))
    convs, _ = load_conversations([a, b, c])
    report = build_report(convs, ["beta"], resamples=500, seed=3)
    rows = {r["condition"]["beta"]: r for r in report.agent_under_test}
    assert list(rows) == [0.0, 0.5]
    pooled = rows[0.5]
    _close(
        pooled,
        {
            "calls": 2,
            "agent_turns": 5,
            "yield_total": 4,
            "yields": 2,
            "yield_rate": 0.5,
            "yield_latency_mean": 0.3,
            "false_yields": 1,
            "backchannel_total": 4,
            "false_yield_rate": 0.25,
            "selectivity_backchannel": 0.75,
            "response_total": 3,
            "response_latency_mean": 2.5 / 3,
            "response_latency_median": 0.8,
            "talk_over_s": 3.6,
            "talk_over_per_turn_s": 3.6 / 5,
            "short_pauses": 6,
            "speech_s": 18.0,
            "pauses_per_min": 20.0,
        },
    )
    assert [r["id"] for r in pooled["per_call"]] == ["a", "b"]
    # The audit prints no interval over fewer than 10 events (τ-Voice hides such rates):
    # 4 interruptions, 4 backchannels, 6 pauses here.
    assert pooled["yield_rate_ci"] is None and pooled["pauses_per_min_ci"] is None
    assert pooled["hidden"]["yield_rate_ci"] == "4 events (fewer than 10)"
    assert pooled["hidden"]["pauses_per_min_ci"] == "6 events (fewer than 10)"
    # The intervals themselves, as the agent measures compute them over the same calls.
    calls = [c.agent for c in convs if c.dial("beta") == 0.5 and c.agent is not None]
    raw = condition_row({"beta": 0.5}, calls, resamples=500, seed=3)
    # Resampling calls: call a alone has yield rate 2/3, call b alone 0 → the interval
    # spans [0, 2/3]; the point estimate lies inside.
    lo, hi = raw["yield_rate_ci"]
    assert lo == pytest.approx(0.0) and hi == pytest.approx(2 / 3)
    lo, hi = raw["pauses_per_min_ci"]
    assert lo <= 20.0 <= hi and lo >= 10.0 and hi <= 25.0
    # Only call a has backchannels: every defined resample gives 0.25.
    assert raw["false_yield_rate_ci"] == pytest.approx([0.25, 0.25])
    assert raw["selectivity_backchannel_ci"] == pytest.approx([0.75, 0.75])
    # One call: its own numbers, and no interval (resampling one call cannot vary).
    single = rows[0.0]
    _close(single, {k: v for k, v in EXPECTED.items()})
    assert all(single[k] is None for k in single if k.endswith("_ci"))
    assert set(single["hidden"]) >= {"yield_rate_ci", "false_yield_rate_ci"}


def test_condition_with_zero_denominators_has_null_intervals() -> None:
    from replay.audit.agent_measures import AgentCall

    row = condition_row({"beta": 0.5}, [AgentCall(id="x", agent_turns=2)], resamples=100)
    for key in ("yield_rate", "false_yield_rate", "response_latency_mean", "pauses_per_min"):
        assert row[key] is None and row[f"{key}_ci"] is None
    assert row["selectivity_backchannel_ci"] is None
    json.dumps(row, allow_nan=False)


def _no_nan(text: str) -> None:
    assert "nan" not in text.lower()


def _agent_block(out: str) -> list[str]:
    """The lines of the audit's agent table, up to its first footnote."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "Agent under test" in line)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("†"))
    return lines[start:end]


def test_audit_cli_shows_the_agent_table_only_for_black_box_calls(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    a = write_log(tmp_path / "a.jsonl", known_call(), head("a"))
    zero: list[Event] = [AgentTurnStart(t=0.5, turn=0), EndEvent(t=2.0, reason="user_hangup")]
    z = write_log(tmp_path / "z.jsonl", zero, head("z", beta=0.0))
    p = write_log(tmp_path / "p.jsonl", plain_call(), head("p", kind="openai", beta=1.0))
    proc = run_cutin("audit", str(a), str(z), str(p), "--by", "beta", env=child_env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    block = _agent_block(out)
    rows = [line.split() for line in block if line.startswith(" β")]
    assert [r[:2] for r in rows] == [["β", "0"], ["β", "0.5"]]  # the plain call has no row
    line = next(line for line in block if line.startswith(" β 0.5"))
    for cell in ("2/3 · 66.7%", "mean 0.30", "1/4 · 25.0%", "mean 1.00", "2.6 · 0.87 per turn"):
        assert cell in line, cell
    assert line.split()[-1] == "25.0"  # pauses per minute
    below = "\n".join(block[block.index(line) : block.index(line) + 3])
    assert "med 0.30 · p95 0.34" in below and "5 in 12.0 s" in below
    _no_nan(out)
    data = json.loads(
        run_cutin("audit", str(a), str(z), str(p), "--by", "beta", "--json", env=child_env).stdout
    )
    rows = data["agent_under_test"]
    assert [r["condition"]["beta"] for r in rows] == [0.0, 0.5]
    assert rows[0]["yield_rate"] is None and rows[0]["yield_rate_ci"] is None
    assert rows[1]["yield_rate"] == pytest.approx(2 / 3)
    proc = run_cutin("audit", str(p), "--json", env=child_env)
    assert "agent_under_test" not in json.loads(proc.stdout)
    proc = run_cutin("audit", str(p), env=child_env)
    assert "Agent under test" not in proc.stdout


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_report_shows_per_call_measures(
    tmp_path: Path, child_env: dict[str, str], fmt: str
) -> None:
    a = write_log(tmp_path / "a.jsonl", known_call(), head("a"))
    p = write_log(tmp_path / "p.jsonl", plain_call(), head("p", kind="openai"))
    proc = run_cutin("report", str(a), str(p), "--format", fmt, env=child_env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    _no_nan(out)
    if fmt == "json":
        trials = {t["id"]: t for t in json.loads(out)["trials"]}
        _close(trials["a"]["agent_under_test"], EXPECTED)
        assert "agent_under_test" not in trials["p"]
        events = [e for t in trials["a"]["turns"] for e in t["events"]]
        assert sum(e["kind"] == "agent_yield" for e in events) == 7
        return
    assert out.count("Agent under test") == 1
    assert "agent stopped after 0.25 s" in out and "agent stopped after 2 s" not in out
    assert "2/3" in out and "66.7%" in out and "1/4" in out and "25.0" in out
    assert "0.345" in out


def test_report_escapes_text_from_the_file(tmp_path: Path, child_env: dict[str, str]) -> None:
    h = head("<b>x|y</b>")
    h.agent = AgentInfo(kind="realtime", name="<script>|bot", model="m*|<i>")
    log = write_log(tmp_path / "e.jsonl", known_call(), h)
    html = run_cutin("report", str(log), "--format", "html", env=child_env).stdout
    assert "<script>" not in html and "&lt;script&gt;" in html
    md = run_cutin("report", str(log), "--format", "md", env=child_env).stdout
    assert "<script>|bot" not in md


def test_measures_are_finite_numbers_or_none(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a.jsonl", known_call(), head("a"))
    row = measures_of_trial(load_log(log))
    assert row is not None
    for key, value in row.items():
        if isinstance(value, float):
            assert math.isfinite(value), key


def test_audit_table_prints_header_text_literally(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    h = head("m")
    h.scenario = "[bold]retail[/bold]"
    log = write_log(tmp_path / "m.jsonl", known_call(), h)
    proc = run_cutin("audit", str(log), "--by", "scenario", env=child_env)
    assert proc.returncode == 0, proc.stderr
    block = _agent_block(proc.stdout)
    assert any(line.startswith(" [bold]retail[/bold]") for line in block), block
