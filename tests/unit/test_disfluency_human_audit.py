"""The human anchors of `cutin audit --texts --style human`, measured on the held-out
τ2 airline user turns, and the measures themselves on inputs of known truth."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from replay.audit.counter import TurnCounts
from replay.audit.human import ANCHORS, anchor_rows, realized, texts_anchor_rows
from replay.audit.texts import split_conversations

FIXTURES = Path(__file__).parents[1] / "fixtures"
HELD_OUT = FIXTURES / "disfluency_styles/tau2_airline_user_turns_heldout.txt"
TAU2 = FIXTURES / "tau2/text_airline_results.json"


def _held_out() -> list[list[str]]:
    return split_conversations(HELD_OUT.read_text(encoding="utf-8").splitlines())


def test_held_out_file_is_the_odd_half_of_the_tau2_run() -> None:
    control = re.compile(r"###([A-Z][A-Z_-]*)###")
    sims = json.loads(TAU2.read_text(encoding="utf-8"))["simulations"]
    expected = []
    for sim in sims[1::2]:
        turns = [
            " ".join(control.sub(" ", m["content"]).split())
            for m in sim["messages"]
            if m["role"] == "user" and isinstance(m.get("content"), str)
        ]
        expected.append([t for t in turns if t])
    assert _held_out() == [c for c in expected if c]


def test_human_style_meets_every_anchor_on_held_out_turns_and_paper_does_not() -> None:
    rows = texts_anchor_rows(_held_out(), 0.5, resamples=400)
    assert [r["anchor"] for r in rows] == [a.key for a in ANCHORS]
    for row in rows:
        human = row["human"]
        assert isinstance(human, dict)
        assert human["within"], row
        low, high = human["ci"]
        assert low <= human["value"] <= high
    paper = {str(r["anchor"]): r["paper"] for r in rows}
    missed = {k for k, v in paper.items() if isinstance(v, dict) and not v["within"]}
    # The paper's rule is uniform per word: no turn-initial slot, no self-corrections,
    # no over-dispersion beyond turn length.
    assert {"initial_share", "self_corrections_per_1k", "dispersion"} <= missed


def _turn(words: int, fillers: int = 0, **kw: int | bool) -> TurnCounts:
    return TurnCounts(words=words, fillers=fillers, **kw)  # type: ignore[arg-type]


def test_anchor_values_on_hand_counted_turns() -> None:
    convs = [
        [_turn(100, 3, initial_filler=True, um=1, uh=2, adjacent=2, repairs=1)],
        [_turn(100, 1, um=1, uh=0, restarts=1)],
    ]
    got = realized(convs, resamples=50)
    assert got["fillers_per_1k"].value == pytest.approx(20.0)
    assert got["repetitions_per_1k"].value == pytest.approx(10.0)
    assert got["um_share"].value == pytest.approx(0.5)
    assert got["initial_share"].value == pytest.approx(0.25)
    assert got["self_corrections_per_1k"].value == pytest.approx(10.0)
    assert got["disfluencies_per_100"].value == pytest.approx(4.0)


def test_dispersion_is_one_for_counts_proportional_to_length() -> None:
    """Turns of very different lengths at one exact rate: the plain variance-to-mean
    ratio would be large, the length-adjusted index is 0 (no scatter at all), and
    a known scatter gives its χ²/df by hand."""
    even = [[_turn(10, 1), _turn(50, 5), _turn(100, 10)]]
    assert realized(even, resamples=20)["dispersion"].value == pytest.approx(0.0)
    scattered = [[_turn(10, 0), _turn(10, 2)]]
    # r = 2/20, expected 1 each: χ² = (0-1)²/1 + (2-1)²/1 = 2, df = 1.
    assert realized(scattered, resamples=20)["dispersion"].value == pytest.approx(2.0)


def test_rows_carry_each_style() -> None:
    rows = anchor_rows({"a": [[_turn(10, 1, um=1)]]}, resamples=10)
    assert all("a" in r for r in rows)


def test_cli_prints_the_anchor_table(capsys: pytest.CaptureFixture[str]) -> None:
    from cutin_tui.cli import main

    assert main(["audit", "--texts", str(HELD_OUT), "--style", "human", "--alpha", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "human anchors at α=0.5" in out
    assert "length-adjusted dispersion" in out
    assert main(["audit", "--texts", str(HELD_OUT), "--style", "human", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["human_anchors"]) == {"0.25", "0.5", "0.75", "1"}
