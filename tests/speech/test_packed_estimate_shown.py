"""The words a decision counted without hearing them (a line's words not back from the
packing worker yet, or ``--transcribe end|off``) are shown as estimated in the
last-decision panel, from the opportunity's logged ``words_estimated``."""

from __future__ import annotations

from cutin_tui.views.call_view import CallView
from cutin_tui.views.explain import rule_checks
from sessions.log.models import Opportunity


def _decision(situation: dict[str, object]) -> list[str]:
    checks = [{"rule": "interrupt", "name": "words", "passed": True, "value": 14, "needed": "≥ 12"}]
    view = CallView()
    view.apply(
        [
            Opportunity(
                t=4.4, index=0, pause_index=0, turn=0, decision="INTERRUPT", executed=True,
                checks=checks, situation=situation,
            )
        ]
    )  # fmt: skip
    d = view.decision
    assert d is not None
    return [c.text for c in rule_checks(d.checks, "interrupt", estimated=d.words_estimated)]


def test_estimated_words_are_marked_heard_ones_are_not() -> None:
    assert _decision({"words_transcribed": 5, "words_estimated": 9}) == ["words 14 ≥ 12, 9 est."]
    assert _decision({"words_transcribed": 14, "words_estimated": 0}) == ["words 14 ≥ 12"]
    # A hostile or older log's odd value is no estimate.
    assert _decision({"words_estimated": "many"}) == ["words 14 ≥ 12"]
    assert _decision({}) == ["words 14 ≥ 12"]
