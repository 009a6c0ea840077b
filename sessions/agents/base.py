"""The agent protocol the call loop talks to.

The call loop owns the conversation history (a list of :class:`Message`). When the
agent should speak it calls :meth:`Agent.reply` with the history so far and gets a
:class:`ReplyStream`: text chunks that become available over time (at once for the
scripted agent, as tokens stream for an LLM). The loop speaks chunks as they
arrive. After a truncation the loop rewrites the last assistant message to the
spoken part *before* the next ``reply`` call, so the agent only ever sees what was
actually said.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol


class AgentError(RuntimeError):
    """The agent could not produce a reply (after retries). The call goes on."""


@dataclass
class Message:
    role: Literal["system", "user", "assistant"]
    content: str
    truncated: bool = False
    """True for an assistant message cut at an interruption (content = spoken part)."""


@dataclass
class ReplyStream:
    """Text chunks of one agent reply, filled by a producer (maybe another thread)."""

    _queue: queue.Queue[str | BaseException | None] = field(default_factory=queue.Queue)
    done: bool = False
    error: BaseException | None = None
    _seen_end: bool = False

    def put(self, chunk: str) -> None:
        self._queue.put(chunk)

    def finish(self, error: BaseException | None = None) -> None:
        self._queue.put(error if error is not None else None)

    def poll(self, *, block: bool = False, timeout: float | None = None) -> list[str]:
        """Chunks available now (``block``: wait for at least one, or for the end)."""
        out: list[str] = []
        if self._seen_end:
            return out
        try:
            item = self._queue.get(block=block, timeout=timeout)
        except queue.Empty:
            return out
        while True:
            if item is None or isinstance(item, BaseException):
                self._seen_end = True
                self.done = True
                if isinstance(item, BaseException):
                    self.error = item
                return out
            out.append(item)
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return out

    @classmethod
    def of_text(cls, text: str) -> ReplyStream:
        stream = cls()
        stream.put(text)
        stream.finish()
        return stream

    @classmethod
    def in_thread(
        cls, produce: Callable[[], Iterator[str]], name: str = "agent-reply"
    ) -> ReplyStream:
        """Run ``produce`` in a daemon thread, streaming its chunks."""
        stream = cls()

        def work() -> None:
            try:
                for chunk in produce():
                    stream.put(chunk)
            except BaseException as exc:  # surfaced to the loop via .error
                stream.finish(exc)
                return
            stream.finish()

        threading.Thread(target=work, name=name, daemon=True).start()
        return stream


class Agent(Protocol):
    """An agent under test."""

    name: str

    def reply(self, history: list[Message]) -> ReplyStream | None:
        """Start the next agent turn given the history; ``None`` means the agent is done."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
