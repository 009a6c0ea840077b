"""A human-style user turn shows its repairs and restarts as such: their own role in the
turn table and the live transcript (styles distinct from every other insertion and from
the caller's words), and their own marks and legend in the Markdown and HTML reports."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from textual.app import App, ComposeResult

from controls.disfluency import InsertionKind
from controls.disfluency_human import inject_human
from cutin_tui.screens.replay import ReplayApp
from cutin_tui.views.call_view import UserEntry
from cutin_tui.views.turn_layout import diff_tokens
from cutin_tui.widgets.transcript import TranscriptView
from cutin_tui.widgets.turn_view import TurnView
from replay.model import InsertedToken, Turn
from replay.report.html_page import _html_turn_text
from replay.report.markdown import _md_turn_text
from tests.tui_replay.helpers import SIZE, loaded

CUTIN_STYLES = Path(__file__).resolve().parents[2] / "cutin_tui" / "styles"
TEXT = "I would like to change the flight to Denver for my daughter and me please"
ROLES = ("user", "filler", "repetition", "pause", "repair", "restart")


def _both_kinds() -> tuple[str, list[tuple[int, str, str]]]:
    """A human-style rendering of TEXT with a repair and a restart (searched over seeds,
    so a retuned injector still finds one), as the log keeps its insertions."""
    for seed in range(2000):
        result = inject_human(TEXT, 1.0, seed=seed)
        kinds = {i.kind for i in result.insertions}
        if {InsertionKind.REPAIR, InsertionKind.RESTART} <= kinds:
            return result.rendered, [(i.index, i.kind.value, i.token) for i in result.insertions]
    raise AssertionError("no seed gives both a repair and a restart")


def test_turn_layout_gives_self_corrections_their_own_roles() -> None:
    rendered, insertions = _both_kinds()
    pieces = diff_tokens(rendered, [(index, kind) for index, kind, _ in insertions])
    by_role: dict[str, list[str]] = {}
    for token, role in pieces:
        by_role.setdefault(role, []).append(token)
    expected = {k: [t for _, kind, t in insertions if kind == k] for k in ("repair", "restart")}
    assert by_role["repair"] == expected["repair"]
    assert by_role["restart"] == expected["restart"]
    assert any(t.endswith("—") for t in by_role["repair"])
    assert "inserted" not in by_role


def _distinct(styles: Mapping[str, object]) -> None:
    values = list(styles.values())
    assert len(set(map(str, values))) == len(values), styles


async def test_replay_turn_table_styles_them_distinctly(demo_log: Path) -> None:
    app = ReplayApp([demo_log])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        view = screen.query_one(TurnView)
        styles = {role: view._style(role) for role in ROLES}
        _distinct(styles)
        assert styles["repair"].strike and styles["restart"].strike
        assert styles["repair"].color != styles["restart"].color


class _TranscriptApp(App[None]):
    CSS_PATH = [str(CUTIN_STYLES / "app.tcss"), str(CUTIN_STYLES / "call.tcss")]

    def compose(self) -> ComposeResult:
        yield TranscriptView(id="transcript")


async def test_live_transcript_draws_them_in_their_own_styles() -> None:
    rendered, insertions = _both_kinds()
    app = _TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        entry = UserEntry(0, "typed", TEXT, rendered, insertions)
        text = view._rendered(entry)
        repair, restart = view._style("repair"), view._style("restart")
        assert repair != restart and repair.strike and restart.strike
        spans = {text.plain[s.start : s.end]: s.style for s in text.spans}
        for _, kind, token in insertions:
            if kind in ("repair", "restart"):
                assert spans[token] == (repair if kind == "repair" else restart), token


def _turn() -> Turn:
    rendered, insertions = _both_kinds()
    return Turn(
        index=0,
        speaker="user",
        number=0,
        start=0.0,
        end=4.0,
        text=TEXT,
        spoken=rendered,
        original=TEXT,
        rendered=rendered,
        insertions=[InsertedToken(i, k, t) for i, k, t in insertions],
    )


def test_reports_mark_repairs_and_restarts_and_say_what_the_marks_mean() -> None:
    turn = _turn()
    md = _md_turn_text(turn)
    html = _html_turn_text(turn)
    for ins in turn.insertions:
        if ins.kind == "repair":
            assert f"~~{ins.token}~~" in md and f"_~~{ins.token}~~_" not in md
            assert f'<span class="ins ins-repair" title="repair">{ins.token}</span>' in html
        elif ins.kind == "restart":
            assert f"_~~{ins.token}~~_" in md
            assert f'<span class="ins ins-restart" title="restart">{ins.token}</span>' in html
        elif ins.kind == "filler":
            assert f"**{ins.token}**" in md
    assert "repair, said then corrected" in md and "restart, said again" in md
    assert "(said, then corrected)" in html
    # A paper-style turn keeps its plain bold marks and no legend.
    paper = _turn()
    paper.insertions = [i for i in paper.insertions if i.kind == "filler"][:1]
    assert "~~" not in _md_turn_text(paper) and "corrected" not in _html_turn_text(paper)
