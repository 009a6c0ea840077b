"""τ2 half-duplex messages → turns (tool traffic as inline events)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from replay.model import CallControl, InlineEvent, Speaker, ToolCallEvent, ToolResultEvent, Turn
from replay.tau2.control import event_for, split_control


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _rel(value: Any, t0: datetime | None) -> float | None:
    t = parse_time(value)
    if t is None or t0 is None:
        return None
    try:
        return round((t - t0).total_seconds(), 6)
    except TypeError:  # one aware, one naive
        return None


def short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_label(call: Mapping[str, Any]) -> str:
    args = call.get("arguments")
    if isinstance(args, Mapping):
        inner = ", ".join(f"{k}={short(v, 40)}" for k, v in args.items())
    else:
        inner = short(args or "", 60)
    return f"{call.get('name', '?')}({inner})"


def turns_from_messages(messages: Sequence[Any], t0: datetime | None) -> list[Turn]:
    turns: list[Turn] = []
    counters = {"agent": 0, "user": 0}
    for pos, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        t = _rel(msg.get("timestamp"), t0)
        idx = msg.get("turn_idx")
        idx = idx if isinstance(idx, int) else pos
        if role == "tool":
            if turns:
                content = msg.get("content")
                turns[-1].events.append(
                    InlineEvent(
                        t if t is not None else (turns[-1].end or 0.0),
                        ToolResultEvent(),
                        short(content or ""),
                        {"id": msg.get("id"), "error": bool(msg.get("error")), "content": content},
                    )
                )
                turns[-1].meta["messages"].append(idx)
            continue
        if role not in ("assistant", "user"):
            continue
        speaker: Speaker = "agent" if role == "assistant" else "user"
        content = msg.get("content")
        said, controls = split_control(content) if isinstance(content, str) else ("", [])
        last = turns[-1] if turns else None
        if controls and not said.strip() and not msg.get("tool_calls") and last is not None:
            # Only a control token: an event of the call, on the turn it ends.
            _add_controls(last, controls, t, speaker, idx)
            continue
        if last is not None and last.speaker == speaker:
            turn = last
        else:
            turn = Turn(
                index=len(turns),
                speaker=speaker,
                number=counters[speaker],
                start=t,
                end=t,
                text="",
                spoken="",
                source="tau2" if speaker == "user" else "",
                meta={"messages": []},
            )
            counters[speaker] += 1
            turns.append(turn)
        turn.meta["messages"].append(idx)
        if t is not None:
            turn.end = t
            if turn.start is None:
                turn.start = t
        if said.strip() and not msg.get("is_audio"):
            turn.text = f"{turn.text}\n{said}" if turn.text else said
            turn.spoken = turn.text
        if controls:
            _add_controls(turn, controls, t, speaker, None)
        for call in msg.get("tool_calls") or []:
            if isinstance(call, Mapping):
                turn.events.append(
                    InlineEvent(
                        t if t is not None else (turn.end or 0.0),
                        ToolCallEvent(),
                        call_label(call),
                        {
                            "id": call.get("id"),
                            "name": call.get("name"),
                            "arguments": call.get("arguments"),
                        },
                    )
                )
    return turns


def _add_controls(
    turn: Turn, names: list[str], t: float | None, by: Speaker, message: int | None
) -> None:
    for name in names:
        kind, label = event_for(name)
        at = t if t is not None else (turn.end or 0.0)
        turn.events.append(InlineEvent(at, CallControl(kind), label, {"by": by}))
    if message is not None:
        turn.meta["messages"].append(message)


def strip_controls(turns: Sequence[Turn]) -> None:
    """Take control tokens out of turns built elsewhere (ticks) into call events at
    each turn's end."""
    for turn in turns:
        text, names = split_control(turn.text)
        if names:
            turn.text = turn.spoken = text
            _add_controls(turn, names, turn.end, turn.speaker, None)


__all__ = ["call_label", "parse_time", "short", "strip_controls", "turns_from_messages"]
