"""Agent connectors: the voice agent under test, behind one small protocol."""

from sessions.agents.base import Agent, AgentError, Message, ReplyStream

__all__ = ["Agent", "AgentError", "Message", "ReplyStream"]
