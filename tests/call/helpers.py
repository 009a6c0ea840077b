"""Small helpers for driving the call loop on a virtual clock."""

from __future__ import annotations

from dataclasses import dataclass, field

from controls import Tendencies
from sessions.agents.base import Message, ReplyStream
from sessions.agents.scripted import ScriptedAgent
from sessions.call.config import CallConfig
from sessions.call.setup.simulated_call import SimulatedCall, simulated_call
from sessions.callers.users import ScriptedUser
from sessions.log.models import Event
from sessions.scenarios import Scenario, load_scenario


@dataclass
class HistorySpy:
    """An agent wrapper that keeps a copy of every history it was given."""

    inner: ScriptedAgent
    seen: list[list[Message]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    def reply(self, history: list[Message]) -> ReplyStream | None:
        self.seen.append([Message(m.role, m.content, m.truncated) for m in history])
        return self.inner.reply(history)

    def close(self) -> None:
        self.inner.close()


def run_call(
    scenario: str | Scenario = "retail-order-change",
    *,
    alpha: float = 0.0,
    beta: float = 0.0,
    gamma: float = 0.0,
    seed: int = 1,
    headless_user: bool = True,
    auto_interrupt: bool = True,
    auto_backchannel: bool = True,
    schedule: list[tuple[float, object]] | None = None,
    max_seconds: float = 600.0,
) -> tuple[SimulatedCall, list[Event], HistorySpy]:
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    events: list[Event] = []
    agent = HistorySpy(ScriptedAgent(sc))
    config = CallConfig(
        scenario=sc,
        tendencies=Tendencies(alpha, beta, gamma),
        seed=seed,
        auto_interrupt=auto_interrupt,
        auto_backchannel=auto_backchannel,
    )
    loop = simulated_call(
        config, agent, user=ScriptedUser(sc) if headless_user else None, listeners=[events.append]
    )
    for at, command in schedule or []:
        loop.schedule(at, command)  # type: ignore[arg-type]
    loop.run_virtual(max_seconds=max_seconds)
    return loop, events, agent


def of_type(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e.type == kind]
