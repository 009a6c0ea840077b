"""Run folders whose measures are known by construction, for `cutin compare` tests.

Each call is a log of a call to a black-box agent (``agent.kind`` twilio), written with
the real :class:`~sessions.log.SessionWriter`: the agent takes a turn, the caller cuts
in, and the agent stops ``latency`` seconds after the caller's onset (an ``agent_yield``
after an interruption, yielded) or talks on (``None``: not yielded). Every agent turn
answers the caller's previous turn ``response_s`` after it ended. So a run's
``yield_rate``, ``yield_latency_*`` and ``response_latency_*`` are exactly what the test
wrote, and two runs that differ by +300 ms per yield differ by exactly that.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sessions.log import (
    AgentTurnEnd,
    AgentTurnStart,
    EndEvent,
    Event,
    Interruption,
    UserTurn,
)
from sessions.log.models import AgentInfo, AgentYield, FrameLag, TurnEnd
from tests.support.logs import header, tendencies, write_log

TURN_S = 6.0
"""Each agent turn's slot on the call's clock."""


def call_events(
    latencies: Sequence[float | None], response_s: float = 0.6, *, lag_p99_s: float = 0.0
) -> list[Event]:
    """One call: an agent turn per latency, each cut in on 1.5 s after its onset; its
    ``end`` logs a frame lag of ``lag_p99_s`` at p99 (over 0.032 s: a lagged call)."""
    ev: list[Event] = []
    for k, latency in enumerate(latencies):
        start = 1.0 + k * TURN_S
        cut = round(start + 1.5, 6)
        yielded = latency is not None
        stop = round(cut + latency, 6) if latency is not None else None
        end = stop if stop is not None else round(start + 4.0, 6)
        ev += [
            AgentTurnStart(
                t=start,
                turn=k,
                response_latency_s=response_s if k else None,
                response_to="turn" if k else None,
            ),
            Interruption(t=cut, turn=k, trigger="auto", cut_t=cut, cut_word=4, text="Wait"),
            UserTurn(
                t=cut,
                turn=k,
                source="interruption",
                original="Wait, one thing.",
                rendered="Wait, one thing.",
                end_t=round(cut + 0.9, 6),
            ),
            AgentYield(
                t=round(cut + 2.0, 6),
                turn=k,
                after="interruption",
                onset_t=cut,
                window_s=2.0,
                yielded=yielded,
                stop_t=stop,
                latency_s=latency,
                resumed=True,
                talk_over_s=min(latency, 0.9) if latency is not None else 0.9,
            ),
            TurnEnd(t=round(end + 0.5, 6), silence_start=end, turn=k),
            AgentTurnEnd(
                t=round(end + 0.5, 6),
                turn=k,
                text="I have your order open here",
                spoken="I have your order open here",
                interrupted=True,
                cut_t=cut,
                cut_word=4,
                stop_t=stop,
                speech_s=round(end - start, 6),
            ),
        ]
    lag = FrameLag(p50_s=0.001, p99_s=lag_p99_s, max_s=lag_p99_s, frames=1000)
    ev.append(EndEvent(t=1.0 + len(latencies) * TURN_S, reason="hangup", frame_lag=lag))
    return ev


def write_run(
    folder: Path,
    calls: Sequence[Sequence[float | None]],
    *,
    scenario: str = "retail-order-change",
    beta: float = 1.0,
    version: str = "0.9.0",
    first_seed: int = 1,
    lagged: Sequence[int] = (),
) -> Path:
    """A run folder of ``len(calls)`` logs, call ``i`` seeded ``first_seed + i`` (the
    calls ``lagged`` lists lagged: 0.1 s late at p99)."""
    for i, latencies in enumerate(calls):
        seed = first_seed + i
        head = header(
            f"{folder.name}-{seed}",
            agent=AgentInfo(kind="twilio", name="known", base_url="ws://127.0.0.1:8765/"),
            scenario=scenario,
            tendencies=tendencies(0.0, beta, 0.0),
            cutin_version=version,
            seeds={"seed": seed},
        )
        events = call_events(latencies, lag_p99_s=0.1 if i in lagged else 0.0)
        write_log(folder / f"call-{seed:03d}.jsonl", events, head)
    return folder


__all__ = ["TURN_S", "call_events", "write_run"]
