"""Shared pytest fixtures (registered from tests/conftest.py via ``pytest_plugins``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import OpenAIServer
from tests.support.pipecat_bot import Bot, running_bot


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A fresh loopback OpenAI-compatible server (see tests/support/openai_server.py)."""
    server = OpenAIServer().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def pipecat_bot() -> Iterator[Bot]:
    """The example Pipecat bot (interruptions on), one for the whole run; it serves one
    call at a time, so close each line before the next test dials
    (see tests/support/pipecat_bot.py). Skips when espeak-ng or Pipecat is missing."""
    with running_bot() as bot:
        yield bot
