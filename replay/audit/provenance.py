"""Who and what a call's words came from, as its header and events log them: the agent
a call talked to (so only calls to the same agent pair) and the source of each caller
turn's text (so disfluency is read per source)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def lookup(data: Mapping[str, Any], path: str) -> Any:
    """A dotted path into nested mappings; None when any step is missing."""
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def agent_identity(header: Mapping[str, Any]) -> tuple[str, str, str]:
    """The agent a call talked to: its kind (scripted, openai, twilio, ...), name and
    model, as the header logs them ("" when absent)."""
    return tuple(  # type: ignore[return-value]
        "" if (v := lookup(header, f"agent.{k}")) is None else str(v)
        for k in ("kind", "name", "model")
    )


def agent_label(header: Mapping[str, Any]) -> str:
    """``twilio · Riverside support`` (kind, name, model as far as logged)."""
    return " · ".join(p for p in agent_identity(header) if p) or "unnamed agent"


SOURCES: dict[str, str] = {
    "typed": "typed",
    "mic": "microphone",
    "scenario": "scenario line",
    "simulator": "LLM caller",
    "interruption": "interruption",
    "tau2": "τ2 user simulator",
    "text": "text file",
}
"""A user turn's logged source → how the audit names it."""


def turn_source(source: str, header: Mapping[str, Any]) -> str:
    """How the audit reads a user turn's logged ``source``: simulated calls logged an
    LLM caller's own lines as ``scenario`` before it had its own; the batch says."""
    if source == "scenario" and lookup(header, "batch.user") == "llm":
        return "simulator"
    return source


__all__ = ["SOURCES", "agent_identity", "agent_label", "lookup", "turn_source"]
