"""The replay table's τ2 review column (issue 14): τ2's own review stands beside
the reward, each error on its turn with who made it and how severe it is, and τ2
control tokens read as call events. Pure layout: no app needed."""

from __future__ import annotations

from pathlib import Path

from cutin_tui.views.turn_layout import Columns, TurnTable, judge_groups
from replay.load import load_path
from tests.replay.test_tau2_versions import FORK_GEN1, _with_review


def _text(lines: list[list[tuple[str, str]]]) -> str:
    return "\n".join("".join(t for t, _ in line) for line in lines)


def test_review_errors_in_their_own_column(tmp_path: Path) -> None:
    (trial,) = load_path(_with_review(tmp_path)).trials
    table = TurnTable(trial)
    groups = judge_groups([trial])
    assert groups == ("tau2", "review")
    columns = Columns(160, groups)
    header = "".join(t for t, _ in columns.header())
    assert "τ2 reward" in header and "τ2 review" in header
    agent_row = table.cells(3, columns, focused=True)  # row 3 = turn 2, the agent's
    reward_cell, review_cell = agent_row.judges
    assert reward_cell == []  # the reward is about the call, not this turn
    review = " ".join(_text(review_cell).split())  # the focused name wraps
    assert review.startswith("✗ agent critical content_error (repeated_request)")
    assert "(tau2-review)" in review and "zip code had been given" in review
    # Unfocused, a narrow column still shows who made the error and how severe it is.
    (line,) = table.cells(4, columns, focused=False).judges[1]
    assert _text([line]).startswith(" i user minor content")
    call = table.cells(0, columns, focused=True)
    assert "✗ reward" in _text(call.judges[0])
    assert "✗ review" in _text(call.judges[1]) and "! hallucination check" in _text(call.judges[1])


def test_a_hang_up_is_an_event_line_not_words() -> None:
    (trial,) = load_path(FORK_GEN1).trials
    table = TurnTable(trial)
    columns = Columns(160, judge_groups([trial]))
    *words, event = _text(table.cells(2, columns).text).splitlines()
    assert words[-1].endswith("¡Buen día!") and "###" not in "".join(words)
    assert event.startswith("☎ hang-up (###STOP###) at")
    focused_call = _text(table.cells(0, columns, focused=True).text)
    assert "τ2 gen 1 · monolithic · git e94fa4d" in focused_call
    assert "user gemini/gemma-4-26b-a4b-it" in focused_call
