"""Calls whose frames were processed late: their timings are not trusted.

A real-time call logs its frame lag on its ``end`` event
(:class:`~sessions.log.models.FrameLag`). When its p99 exceeded one frame (32 ms) the
machine did not pace it (too many calls at once, or a busy machine): the caller's
audio went out late and the agent's was read late, so the call's latencies (yield,
response) and talk-over are off by up to that lag. The audit notes such calls and,
unless ``--keep-lagged``, leaves their timings out of the agent-under-test table: the
latency figures, the no_response counts (a call that fell behind may have missed the
agent's answer: the machine's fault, not the agent's), talk-over, pauses and dead air.
What does not depend on timing stays: whether the agent yielded to each interruption
and to each backchannel (the counts, the yield and false-yield rates, selectivity), so
a batch whose every call lagged still shows its yield verdicts. Their caller-side
counts stay in the condition tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from replay.audit.agent_measures import AgentCall
from replay.audit.sessions import Conversation
from sessions.log.models import LAG_LIMIT_S, EndEvent, FrameLag


def frame_lag_of(path: str) -> FrameLag | None:
    """The frame lag a log's ``end`` event records (None: none, or not a readable log)."""
    from sessions.log import LogError, read_session

    if not path or not Path(path).is_file():
        return None
    try:
        ends = read_session(Path(path), skip_bad=True).of(EndEvent)
    except (LogError, OSError):
        return None
    return ends[-1].frame_lag if ends else None


def set_aside_lagged(conversations: Sequence[Conversation], *, keep: bool) -> list[str]:
    """Flag the lagged calls; without ``keep`` drop their agent-side measures.

    Returns the audit's notes (none when no call lagged)."""
    lagged: list[tuple[Conversation, FrameLag]] = []
    lags: dict[str, FrameLag | None] = {}
    for conv in conversations:
        if conv.kind != "cutin":
            continue
        if conv.source not in lags:
            lags[conv.source] = frame_lag_of(conv.source)
        lag = lags[conv.source]
        if lag is not None and lag.p99_s > LAG_LIMIT_S:
            lagged.append((conv, lag))
    if not lagged:
        return []
    names = ", ".join(
        f"{conv.name} (p99 {lag.p99_s * 1000:.0f} ms)" for conv, lag in lagged[:5]
    ) + (f" and {len(lagged) - 5} more" if len(lagged) > 5 else "")
    many = len(lagged) != 1
    head = (
        f"{len(lagged)} call{'s' if many else ''} lagged: frames processed more than one "
        f"frame (32 ms) late at p99, so {'their' if many else 'its'} timings are not "
        f"trusted ({names})"
    )
    if keep:
        return [
            f"{head}; kept in the latency figures (--keep-lagged): {'their' if many else 'its'} "
            "latencies and no_responses may be this machine falling behind, not the agent"
        ]
    for conv, _ in lagged:
        if conv.agent is not None:
            conv.agent = timing_free(conv.agent)
    return [
        f"{head}; their latencies, no_responses, talk-over, pauses and dead air are left out "
        "of the agent-under-test figures, their yields and false yields kept "
        "(--keep-lagged keeps all)"
    ]


def timing_free(call: AgentCall) -> AgentCall:
    """``call`` with only what does not depend on its timing: its yields and false
    yields after each act (and the selectivity counts), its agent turns; no latency,
    no no_response, no talk-over, pause or dead-air figure."""
    return AgentCall(
        id=call.id,
        source=call.source,
        agent_kind=call.agent_kind,
        yield_total=call.yield_total,
        yields=call.yields,
        backchannel_total=call.backchannel_total,
        false_yields=call.false_yields,
        already_silent=call.already_silent,
        selectivity={k: list(v) for k, v in call.selectivity.items()},
        agent_turns=call.agent_turns,
    )
