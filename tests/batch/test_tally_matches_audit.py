"""The batch summary's opportunity count uses the method's denominator, the same as
the live counters and the audit: pauses that grew into turn ends are left out."""

from __future__ import annotations

import pytest

from sessions.batch.tally import tally
from sessions.log.models import Opportunity, TurnEnd
from sessions.log.realized import realized
from tests.call.helpers import run_call


@pytest.mark.parametrize(("beta", "gamma"), [(0.0, 0.0), (0.3, 0.0), (0.0, 1.0), (1.0, 1.0)])
def test_batch_tally_agrees_with_realized_counts(beta: float, gamma: float) -> None:
    _, events, _ = run_call("airline-rebooking", beta=beta, gamma=gamma, seed=5)
    counted = tally(events)
    live = realized(events)
    assert counted.opportunities == live.opportunities
    assert counted.agent_turns == live.agent_turns
    grown = {e.short_pause_index for e in events if isinstance(e, TurnEnd)}
    raw = [e for e in events if isinstance(e, Opportunity)]
    if beta == 0.0:
        assert any(o.pause_index in grown for o in raw), "the fixture must contain the case"
    assert counted.opportunities == sum(1 for o in raw if o.pause_index not in grown or o.executed)
