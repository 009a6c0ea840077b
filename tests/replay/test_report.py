"""Reports: the JSON form's documented schema, Markdown and HTML views."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from replay.judges.rules import judge_trial
from replay.load import load_paths
from replay.report.trials import build_report, render, render_html, render_json, render_markdown
from tests.conftest import TAU2_FIXTURES

from .craft import standard_call

TRIAL_KEYS = {"id", "task_id", "reward", "failed", "judged", "source", "kind", "mode",
              "duration_s", "verdict_counts", "verdicts", "turns", "warnings"}  # fmt: skip
TURN_KEYS = {"index", "speaker", "number", "start", "end", "text", "spoken", "unspoken",
             "interrupted", "cut_t", "cut_word", "talk_over_s", "original", "rendered",
             "insertions", "source", "events", "confidence", "unsure_words"}  # fmt: skip
VERDICT_KEYS = {
    "judge",
    "scope",
    "turn",
    "speaker",
    "name",
    "label",
    "score",
    "rationale",
    "t",
    "data",
}


def judged(tmp_path: Path):  # type: ignore[no-untyped-def]
    (trial,) = load_paths([standard_call(tmp_path / "call.jsonl")])
    trial.verdicts.extend(judge_trial(trial, ["confirmation email", "elm street"]))
    return trial


def test_json_form_has_the_documented_keys(tmp_path: Path) -> None:
    report = json.loads(render_json([judged(tmp_path)]))
    assert set(report) == {"schema", "summary", "trials", "tau_voice_metrics", "warnings"}
    assert report["schema"] == "cutin.report/1"
    assert report["summary"] == {"trials": 1, "failed": 1, "passed": 0, "not_judged": 0,
                                 "with_reward": 0, "tick_trials": 0}  # fmt: skip
    assert report["tau_voice_metrics"] is None
    (trial,) = report["trials"]
    assert set(trial) == TRIAL_KEYS  # no tau_voice_metrics for a non-tick trial
    assert all(set(t) == TURN_KEYS for t in trial["turns"])
    assert all(set(v) == VERDICT_KEYS for v in trial["verdicts"])
    cut = trial["turns"][2]
    assert cut["interrupted"] and cut["cut_word"] == 14 and cut["unspoken"].startswith("file")
    assert trial["turns"][1]["insertions"][0] == {"index": 0, "kind": "filler", "token": "uh,"}
    success = [v for v in trial["verdicts"] if v["name"] == "success"]
    assert success[0]["label"] == "fail" and trial["failed"] is True
    yield_v = next(v for v in trial["verdicts"] if v["name"] == "yield")
    assert yield_v["turn"] == 2 and yield_v["speaker"] == "agent"
    assert yield_v["data"] == {"yield_latency_s": 0.0, "talk_over_s": 0.0}


def test_tick_trials_carry_tau_voice_metrics_with_the_golden_names() -> None:
    report = build_report(load_paths([TAU2_FIXTURES / "voice_full_duplex"]))
    expected = json.loads((TAU2_FIXTURES / "voice_full_duplex.expected_metrics.json").read_text())
    assert report["tau_voice_metrics"] == expected
    per_trial = [t["tau_voice_metrics"] for t in report["trials"]]
    assert sum(m["counts"]["response_total"] for m in per_trial) == 35
    starts = [turn["start"] for t in report["trials"] for turn in t["turns"]]
    assert all(round(s, 6) == s for s in starts)  # no 61.800000000000004 in the JSON


def test_markdown_marks_cut_unheard_words_and_insertions(tmp_path: Path) -> None:
    md = render_markdown([judged(tmp_path)])
    assert md.startswith("# cutin report\n\n1 trial · 1 failed · 0 passed")
    assert "see the address we have on ▌cut ~~file which is the Elm Street" in md
    assert "heard: **uh,** I want to change **my-** my address" in md
    assert "✗ **rules** success: elm street: the agent never said 'elm street'" in md
    assert "| 2 | 6.0 | agent |" in md and "11.6 s tester cut in" in md


def test_html_is_one_self_contained_page(tmp_path: Path) -> None:
    page = render_html([judged(tmp_path)])
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "<style>" in page
    assert not re.search(r"<script|<link|src=|https?://", page)
    assert '<span class="cut"' in page and '<span class="unspoken"' in page
    assert '<span class="ins ins-filler" title="filler">uh,</span>' in page
    assert "&lt;" not in "".join(page.split("<style>")[0])  # nothing double-escaped up top


def test_html_escapes_what_it_shows(tmp_path: Path) -> None:
    trial = judged(tmp_path)
    trial.turns[0].spoken = "<b>bold</b> & co"
    page = render_html([trial])
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in page and "<b>bold</b>" not in page


def test_render_rejects_unknown_formats(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        render([judged(tmp_path)], "pdf")


def test_a_cutin_call_reports_the_realized_counts_the_live_panel_shows(tmp_path: Path) -> None:
    from sessions.log import read_session
    from sessions.log.realized import realized

    path = standard_call(tmp_path / "call.jsonl")
    (trial,) = load_paths([path])
    line = realized(read_session(path).events).line()
    assert line.startswith("agent turns ")
    assert line in render_markdown([trial])
    assert line in render_html([trial])
