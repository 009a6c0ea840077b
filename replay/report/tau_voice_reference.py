"""τ-Voice's published leaderboard values the batch page draws as reference lines.

Source: the τ-Voice leaderboard of tau2-bench (taubench.com), as docs/agent-measures.md
quotes it for gpt-realtime-2: response latency L_R 1.94 s, yield latency L_Y 0.61 s,
yield rate R_Y 0.998, backchannel selectivity S_BC 0.011. Only the values the repo
cites are here; a reference is a point of comparison, never an expectation.
"""

from __future__ import annotations

from replay.report.plots import Reference

SOURCE = "τ-Voice leaderboard (tau2-bench, taubench.com), gpt-realtime-2"
"""Where the values come from, printed under the plots."""

REFERENCES: dict[str, tuple[Reference, ...]] = {
    "yield_latency": (Reference("gpt-realtime-2 L_Y", 0.61),),
    "response_latency": (Reference("gpt-realtime-2 L_R", 1.94),),
}
"""Measure → its reference lines."""

RATES = {"yield_rate": 0.998, "selectivity_backchannel": 0.011}
"""The same model's published rates (shown in words beside the condition table)."""

__all__ = ["RATES", "REFERENCES", "SOURCE"]
