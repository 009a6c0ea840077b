"""τ2 half-duplex messages → turns (tool traffic as inline events)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from replay.model import InlineEvent, Speaker, Turn


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
        idx = msg.get("turn_idx", pos)
        if role == "tool":
            if turns:
                content = msg.get("content")
                turns[-1].events.append(
                    InlineEvent(
                        t if t is not None else (turns[-1].end or 0.0),
                        "tool_result",
                        short(content or ""),
                        {"id": msg.get("id"), "error": bool(msg.get("error")), "content": content},
                    )
                )
                turns[-1].meta["messages"].append(idx)
            continue
        if role not in ("assistant", "user"):
            continue
        speaker: Speaker = "agent" if role == "assistant" else "user"
        last = turns[-1] if turns else None
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
        content = msg.get("content")
        if isinstance(content, str) and content.strip() and not msg.get("is_audio"):
            turn.text = f"{turn.text}\n{content}" if turn.text else content
            turn.spoken = turn.text
        for call in msg.get("tool_calls") or []:
            if isinstance(call, Mapping):
                turn.events.append(
                    InlineEvent(
                        t if t is not None else (turn.end or 0.0),
                        "tool_call",
                        call_label(call),
                        {
                            "id": call.get("id"),
                            "name": call.get("name"),
                            "arguments": call.get("arguments"),
                        },
                    )
                )
    return turns


__all__ = ["call_label", "parse_time", "short", "turns_from_messages"]
