"""A black-box agent's cut turn in replay and reports: ▌cut at the tester's onset, ■stop
where the agent's audio stopped (with the latency), ▶talked-on, false yields.

On the hand-made log in tests/support/black_box_log.py (fast, no audio).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutin_tui.views.turn_layout import Columns, TurnTable
from replay.load import load_log
from replay.model import Trial, Turn
from replay.report.black_box import (
    false_yields,
    interruption_answer,
    short_outcome,
    split_cut,
    stop_mark,
    turn_cut,
    yield_phrase,
)
from replay.report.trials import render_html, render_json, render_markdown
from tests.support.black_box_log import write_black_box_log


@pytest.fixture
def trial(tmp_path: Path) -> Trial:
    loaded = load_log(write_black_box_log(tmp_path))
    assert isinstance(loaded, Trial)
    return loaded


def _agent(trial: Trial, number: int) -> Turn:
    turn = trial.turn_by_number("agent", number)
    assert turn is not None
    return turn


def _row_text(trial: Trial, number: int) -> list[str]:
    turn = _agent(trial, number)
    cells = TurnTable(trial).cells(turn.index + 1, Columns(120, ()))
    return ["".join(text for text, _ in line) for line in cells.text]


# ---- the split -----------------------------------------------------------------


def test_split_counts_words_begun_before_the_stop() -> None:
    starts = [0.0, 0.3, 0.6, 0.9, 1.2]
    split = split_cut(starts, 2, 0.95)
    assert (split.cut, split.stop, split.stopped) == (2, 4, True)
    # A stop before the cut's words (it stopped at once) never puts the stop before the cut.
    assert split_cut(starts, 3, 0.1).stop == 3
    # Talked on: every word after the cut is talk-over; unknown: the stop sits at the cut.
    assert split_cut(starts, 2, None, talked_on=True).stop == 5
    assert split_cut(starts, 2, None).stop == 2
    assert split_cut(starts, 9, None).cut == 5


def test_phrases() -> None:
    assert stop_mark(0.2428) == "■stop+0.24s"
    assert yield_phrase("interruption", True, 0.24, 2.0, 0.22) == (
        "agent stopped 0.24 s after you began (talk-over 0.2 s)"
    )
    assert yield_phrase("interruption", False, None, 2.0, 1.9) == (
        "agent did not yield within 2.0 s (talk-over 1.9 s)"
    )
    assert yield_phrase("backchannel", True, 0.31, 1.0, 0.3, who="the tester").startswith(
        "false yield: agent stopped 0.31 s after the backchannel"
    )


def test_short_outcomes() -> None:
    assert short_outcome("interruption", True, 0.244, 2.0) == "it stopped +0.24 s"
    assert short_outcome("interruption", False, None, 2.0) == "it talked on (> 2.0 s)"
    assert short_outcome("backchannel", True, 0.31, 1.0) == "false yield +0.31 s"
    assert short_outcome("backchannel", False, None, 1.0) == "no false yield"


def test_a_simulated_agents_cut_is_not_a_black_box_one(trial: Trial) -> None:
    turn = _agent(trial, 0)
    turn.unspoken = "the rest it never said"  # cutin's own agent: the rest is unspoken
    assert turn_cut(turn) is None


# ---- on the replayed turns ---------------------------------------------------------


def test_the_cut_turn_splits_at_the_onset_and_the_stop(trial: Trial) -> None:
    turn = _agent(trial, 0)
    split = turn_cut(turn)
    assert split is not None and split.stopped
    words = turn.spoken.split()
    assert split.cut == turn.cut_word == 14
    assert words[split.cut : split.stop] == ["on"]  # said over the tester
    answer = interruption_answer(turn)
    assert answer is not None and answer.data["latency_s"] == 0.25


def test_replay_row_shows_both_points_and_the_latency(trial: Trial) -> None:
    lines = _row_text(trial, 0)
    assert lines[0].endswith("we have ▌cut on ■stop+0.25s")
    assert (
        lines[1] == "cut at 0:04.5: agent stopped 0.25 s after the tester began (talk-over 0.2 s)"
    )
    # Roles: the talk-over word and the stop have their own looks.
    turn = _agent(trial, 0)
    cells = TurnTable(trial).cells(turn.index + 1, Columns(120, ()))
    roles = {text: role for line in cells.text for text, role in line}
    assert (roles["▌cut"], roles["on"], roles["■stop+0.25s"]) == ("cut", "talk-over", "stop")


def test_the_call_row_names_the_agent_on_the_line(trial: Trial) -> None:
    cells = TurnTable(trial).cells(0, Columns(120, ()))
    facts = " ".join("".join(text for text, _ in line) for line in cells.text[1:])
    assert facts.startswith("cutin · twilio ws://127.0.0.1:8765/ · 6 turns")


def test_replay_row_of_an_agent_that_talked_on(trial: Trial) -> None:
    text = " ".join(_row_text(trial, 2))
    assert "in the email we ▌cut sent you" in text
    assert text.index("▶talked-on") > text.index("leave it with")
    assert "agent did not yield within 2.0 s (talk-over 0.7 s)" in text
    assert "■stop" not in text


def test_replay_row_of_a_false_yield(trial: Trial) -> None:
    turn = _agent(trial, 1)
    assert [round(lat or 0, 2) for _, lat in false_yields(turn)] == [0.31]
    lines = _row_text(trial, 1)
    assert lines[0] == "The parcel left our warehouse on ⟨mm-hmm⟩ Monday ■false-yield+0.31s"
    assert lines[1] == "false yield: agent stopped 0.31 s after the backchannel at 0:11.2"


def test_reports_show_the_stop_marker(trial: Trial) -> None:
    md = render_markdown([trial])
    assert "we have ▌cut *on* ■stop+0.25s |" in md
    assert "▌cut *sent you and the driver will leave it with* ▶talked-on" in md
    assert "Monday ■false-yield+0.31s" in md
    html = render_html([trial])
    assert '<span class="talk-over" title="said over the tester">on</span>' in html
    assert '<span class="stop">■stop+0.25s</span>' in html
    assert "agent on a line: twilio ws://127.0.0.1:8765/" in md
    report = json.loads(render_json([trial]))
    turns = report["trials"][0]["turns"]
    yields = [e for t in turns for e in t["events"] if e["kind"] == "agent_yield"]
    assert [e["data"]["yielded"] for e in yields] == [True, True, False]
