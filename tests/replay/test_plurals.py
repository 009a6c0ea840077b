"""No "1 trials": every count replay, its reports, the audit and the replay screen put
before a noun agrees with it (issue 32). Each test counts one of something that the
code before wrote in the plural."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cutin_tui.cli import main
from cutin_tui.views.turn_layout import TurnTable
from replay.judges.rules import success_verdicts
from replay.load import load_log
from replay.plural import noun, plural
from replay.report.agent_render import call_lines
from replay.tau2.verdicts import reward_verdicts
from tests.tui_replay.logs import write_plain_log

ONE_PLURAL = re.compile(r"(?<![\d.,])\b1 ([a-z]+ )?([a-z]+s)\b")
"""``1 trials``, ``1 agent turns``: a count of one before a plural noun."""
NOT_PLURALS = {"pass", "s", "ms", "yes", "this", "is", "was", "has", "does", "its", "plus"}


def one_plurals(text: str) -> list[str]:
    return [m.group(0) for m in ONE_PLURAL.finditer(text) if m.group(2) not in NOT_PLURALS]


def test_plural_and_noun() -> None:
    assert [plural(n, "trial") for n in (0, 1, 2)] == ["0 trials", "1 trial", "2 trials"]
    assert plural(1, "agent turn") == "1 agent turn" and plural(3, "agent turn") == "3 agent turns"
    assert plural(2, "match", "matches") == "2 matches" and noun(1, "match", "matches") == "match"
    assert one_plurals("1 trials · 1 failed · 1 agent turns · 1 pass · 0.1 words") == [
        "1 trials",
        "1 agent turns",
    ]


@pytest.fixture
def one_call(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    return write_plain_log(tmp_path / "logs", "call.jsonl", "only")


def test_cutin_report_of_one_call_says_1_trial(
    one_call: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for fmt in ("md", "html"):
        out = tmp_path / f"report.{fmt}"
        assert main(["report", str(one_call), "-o", str(out)]) == 0
        err = capsys.readouterr().err
        assert err == f"cutin: wrote {out} (1 trial)\n"
        page = out.read_text(encoding="utf-8")
        assert not one_plurals(page), one_plurals(page)
        assert ("1 trial ·" if fmt == "md" else "<title>cutin report · 1 trial</title>") in page


def test_a_call_of_one_turn_is_1_turn_on_the_replay_screen(one_call: Path) -> None:
    trial = load_log(one_call)
    del trial.turns[1:]
    lines = TurnTable(trial)._call_lines(200, False)
    facts = re.sub(r"\s+", " ", " ".join(word for line in lines for word, _ in line))
    assert "· 1 turn" in facts and not one_plurals(facts), facts


def test_one_success_phrase_and_one_expected_action(one_call: Path) -> None:
    trial = load_log(one_call)
    said = next(trial.agent_turns()).spoken.split()[0]
    summary = success_verdicts(trial, [said])[-1]
    assert summary.rationale == "the success phrase spoken"
    missed = success_verdicts(trial, ["never said at all"])[-1]
    assert missed.rationale == "1 of 1 success phrase never spoken"
    info: dict[str, Any] = {
        "reward_basis": ["ACTION"],
        "action_checks": [{"action": {"name": "book", "arguments": {}}, "action_match": True}],
    }
    rationales = [v.rationale for v in reward_verdicts(info, trial)]
    assert "the expected action taken" in rationales, rationales
    info["action_checks"][0]["action_match"] = False
    rationales = [v.rationale for v in reward_verdicts(info, trial)]
    assert any(r.startswith("1 of 1 expected action missing") for r in rationales), rationales


class _Ones(dict[str, Any]):
    """A call row where every count is one."""

    def __missing__(self, key: str) -> Any:
        return 1

    def get(self, key: str, default: Any = None) -> Any:
        return self[key]


def test_a_black_box_call_with_one_of_everything_says_it_in_the_singular() -> None:
    lines = [f"{measure}: {value} {out_of}" for measure, value, out_of, _ in call_lines(_Ones())]
    text = "\n".join(lines)
    assert not one_plurals(text), one_plurals(text)
    assert "1 yield" in text and "1 error in 1 tic" in text and "1/1 interruption" in text
