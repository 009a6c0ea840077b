"""User response positions: the frozen evaluation set of the prompted-disfluency audit.

A *position* is one moment in a recorded call where the caller answered: the user
simulator's system prompt, the conversation before that turn, and the reply that was
recorded. Replaying a position under another prompt condition regenerates that one
reply with the same context, so every condition is compared on the same paired
positions (prompts-versus-rules, section 4).

What counts as a position, from a cutin session log:

* the call passed (:attr:`replay.model.Trial.failed` is false);
* its scenario (header ``scenario``) can be loaded, since the simulator's system
  prompt is rebuilt from the scenario's goal and persona with
  :func:`prompts.user_sim.system_prompt`, as ``cutin simulate --user llm`` builds it;
* every user turn with text, except interruption lines (they answer a different
  prompt); those stay in later positions' histories.

History roles are the agent's side (``assistant`` = agent, ``user`` = caller); an
interrupted agent turn is its spoken part with ``truncated`` set; user turns are their
original text (before any injection), as the conversation history holds them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from replay.model import Trial, Turn

SCHEMA = "cutin.positions/1"
Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class HistoryItem:
    role: Role
    content: str
    truncated: bool = False

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.truncated:
            out["truncated"] = True
        return out


@dataclass(frozen=True, slots=True)
class Position:
    id: str
    conversation: str
    source: str
    scenario: str | None
    turn: int
    """The user turn's number in its call (0-based)."""
    system: str
    """The user simulator's system prompt, without any disfluency directive."""
    history: tuple[HistoryItem, ...]
    reply: str
    """The recorded reply (original text)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "id": self.id,
            "conversation": self.conversation,
            "source": self.source,
            "scenario": self.scenario,
            "turn": self.turn,
            "system": self.system,
            "history": [h.as_dict() for h in self.history],
            "reply": self.reply,
            **({"extra": self.extra} if self.extra else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Position:
        """Parse one positions line; a missing field is a ``KeyError`` naming it."""
        return cls(
            id=str(data["id"]),
            conversation=str(data["conversation"]),
            source=str(data.get("source", "")),
            scenario=data.get("scenario"),
            turn=int(data["turn"]),
            system=str(data["system"]),
            history=tuple(_history_from(h) for h in data["history"]),
            reply=str(data["reply"]),
            extra=dict(data.get("extra") or {}),
        )


def _history_from(data: dict[str, Any]) -> HistoryItem:
    role = data["role"]
    if role not in ("user", "assistant"):
        raise ValueError(f"history role must be user or assistant, got {role!r}")
    return HistoryItem(cast(Role, role), str(data["content"]), bool(data.get("truncated", False)))


SystemPromptFor = Callable[[Trial], str | None]
"""The simulator's system prompt for a trial, or None when it cannot be rebuilt."""


@dataclass
class Extraction:
    positions: list[Position] = field(default_factory=list)
    conversations: int = 0
    """Conversations that gave at least one position."""
    skipped: list[str] = field(default_factory=list)
    """Why a trial gave none (one line each)."""


def _history_item(turn: Turn) -> HistoryItem | None:
    if turn.speaker == "agent":
        heard = turn.spoken if turn.interrupted else (turn.text or turn.spoken)
        return HistoryItem("assistant", heard, truncated=turn.interrupted) if heard else None
    said = turn.original or turn.text
    return HistoryItem("user", said) if said else None


def positions_of(trial: Trial, system: str) -> list[Position]:
    """Every position of one trial (see the module docstring)."""
    out: list[Position] = []
    history: list[HistoryItem] = []
    for turn in trial.turns:
        item = _history_item(turn)
        if turn.speaker == "user" and item is not None and turn.source != "interruption":
            out.append(
                Position(
                    id=f"{trial.id}:u{turn.number}",
                    conversation=trial.id,
                    source=trial.source,
                    scenario=_scenario(trial),
                    turn=turn.number,
                    system=system,
                    history=tuple(history),
                    reply=item.content,
                )
            )
        if item is not None:
            history.append(item)
    return out


def _scenario(trial: Trial) -> str | None:
    value = trial.header.get("scenario")
    return None if value is None else str(value)


def extract(
    trials: Iterable[Trial],
    system_prompt_for: SystemPromptFor,
    *,
    per_conversation: int | None = None,
    seed: int = 0,
    include_failed: bool = False,
) -> Extraction:
    """Positions of every usable trial, at most ``per_conversation`` of each, sampled
    with ``random.Random(seed)`` in trial order (so the same inputs give the same set);
    the sample keeps each conversation's positions in turn order."""
    rng = random.Random(seed)
    result = Extraction()
    for trial in trials:
        if trial.kind != "cutin":
            result.skipped.append(
                f"{trial.id}: {trial.kind} trial (its user-simulator prompt is not in the results)"
            )
            continue
        if trial.failed and not include_failed:
            result.skipped.append(f"{trial.id}: the call failed")
            continue
        system = system_prompt_for(trial)
        if system is None:
            result.skipped.append(f"{trial.id}: scenario {_scenario(trial)!r} cannot be loaded")
            continue
        found = positions_of(trial, system)
        if not found:
            result.skipped.append(
                f"{trial.id}: no caller replies (interruption lines do not count)"
            )
            continue
        if per_conversation is not None and len(found) > per_conversation:
            keep = sorted(rng.sample(range(len(found)), per_conversation))
            found = [found[i] for i in keep]
        result.positions.extend(found)
        result.conversations += 1
    return result


def by_conversation(positions: Sequence[Position]) -> dict[str, list[Position]]:
    """Positions grouped by conversation, in first-seen order."""
    groups: dict[str, list[Position]] = {}
    for p in positions:
        groups.setdefault(p.conversation, []).append(p)
    return groups


def scenario_system_prompt(trial: Trial) -> str | None:
    """The simulator prompt ``cutin simulate --user llm`` used for the trial's scenario
    (a shipped name or a file path), or None if the scenario cannot be loaded."""
    from prompts.user_sim import system_prompt
    from sessions.scenarios.model import ScenarioError
    from sessions.scenarios.store import load_scenario

    name = _scenario(trial)
    if not name:
        return None
    try:
        scenario = load_scenario(name)
    except (ScenarioError, OSError):
        return None
    return system_prompt(scenario.user.goal, scenario.user.persona)
