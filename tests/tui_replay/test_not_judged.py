"""A call nothing judged (no reward, no verdict) is "not judged" (·), never ✓ passed:
in the replay's list and call row, and in the report's summary, table and titles; it is
not a failure either (`f` and `n` pass it over)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text

from cutin_tui.screens.replay import ReplayApp
from cutin_tui.views.turn_layout import Columns, TurnTable
from cutin_tui.widgets.trial_list import trial_prompt
from replay.load import load_log
from replay.model import JudgeVerdict, Trial
from replay.report.trials import render_html, render_json, render_markdown
from tests.tui_replay.helpers import SIZE, NotedApp, loaded
from tests.tui_replay.logs import write_demo_log, write_plain_log


def _unjudged(tmp_path: Path, name: str = "plain.jsonl", sid: str = "plain1") -> Trial:
    trial = load_log(write_plain_log(tmp_path, name, sid))
    assert trial.reward is None and not trial.verdicts
    return trial


def _judged(tmp_path: Path) -> Trial:
    trial = load_log(write_plain_log(tmp_path, "judged.jsonl", "judged1"))
    trial.verdicts.append(JudgeVerdict("rules", "pass", "success", rationale="said it"))
    return trial


def test_a_call_without_reward_or_verdict_is_not_judged(tmp_path: Path) -> None:
    trial = _unjudged(tmp_path)
    assert not trial.judged and not trial.failed
    assert _judged(tmp_path).judged


def test_the_list_entry_says_not_judged_not_passed(tmp_path: Path) -> None:
    entry = trial_prompt(_unjudged(tmp_path)).plain
    assert entry.startswith("· plain1") and "✓" not in entry and "not judged" in entry
    assert trial_prompt(_judged(tmp_path)).plain[0] in "✓✗"


def test_the_call_row_says_not_judged(tmp_path: Path) -> None:
    table = TurnTable(_unjudged(tmp_path))
    cells = table.cells(0, Columns(100, ()))
    first = " ".join(" ".join(text for text, _ in cells.text[0]).split())
    assert first == "· plain1 · task short · not judged"
    assert not table.fails(0)


def test_reports_count_and_mark_calls_not_judged(tmp_path: Path) -> None:
    trials = [_unjudged(tmp_path), _judged(tmp_path)]
    report = json.loads(render_json(trials))
    summary = report["summary"]
    assert summary["not_judged"] == 1
    assert summary["passed"] + summary["failed"] + summary["not_judged"] == 2
    assert [t["judged"] for t in report["trials"]] == [False, True]
    md = render_markdown(trials)
    assert "· 1 not judged" in md.splitlines()[2]
    assert "| · | plain1 |" in md and "## · plain1 · task short · not judged" in md
    html = render_html(trials)
    assert '<b class="info">1</b> not judged' in html
    assert '<td class="info" data-v="1">·</td>' in html  # sorts between failed and passed
    # Named by its scenario and dials, the session id in the tooltip (issue 30).
    assert 'title="session plain1"><a href="#t0">short · α 0 · β 0 · γ 0</a>' in html


def test_an_all_judged_report_does_not_mention_it(tmp_path: Path) -> None:
    md = render_markdown([_judged(tmp_path)])
    assert "not judged" not in md


async def test_failures_filter_and_next_failure_pass_unjudged_calls_over(tmp_path: Path) -> None:
    demo = write_demo_log(tmp_path)  # judged, with failed turns
    plain = write_plain_log(tmp_path, "plain.jsonl", "plain1")
    app = NotedApp([plain, demo])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        listing = screen.trial_list
        assert "1 not judged" in str(listing.border_subtitle)
        await pilot.press("n")
        await pilot.pause()
        assert listing.current is not None and listing.current.id == "demo01"
        await pilot.press("f")
        ids = [listing.trial_at(n).id for n in range(len(listing.shown))]
        assert "plain1" not in ids


async def test_only_unjudged_calls_have_no_failure_to_go_to(tmp_path: Path) -> None:
    app = NotedApp([write_plain_log(tmp_path, "plain.jsonl", "plain1")])
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("n")
        await pilot.pause()
        assert any("no failure" in note[2] for note in app.notes)


async def test_a_lone_unjudged_call_is_listed_with_the_dot(tmp_path: Path) -> None:
    app = ReplayApp([write_plain_log(tmp_path, "plain.jsonl", "plain1")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        prompt = screen.trial_list.get_option_at_index(0).prompt
        assert isinstance(prompt, Text) and prompt.plain.startswith("·")
