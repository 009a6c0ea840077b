"""Shared pytest fixtures (registered from tests/conftest.py via ``pytest_plugins``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import OpenAIServer
from tests.support.pipecat_bot import Bot, BotPool


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A fresh loopback OpenAI-compatible server (see tests/support/openai_server.py)."""
    server = OpenAIServer().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def pipecat_bots() -> Iterator[BotPool]:
    """The example Pipecat bots of the whole run, one per configuration:
    ``pipecat_bots.get("--no-interruptions")``, ``pipecat_bots.get(protocol="telnyx")``
    (see tests/support/pipecat_bot.py). A bot serves one call at a time, so close each
    line before the test ends; ``get`` waits until the bot's last call has ended."""
    pool = BotPool()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def pipecat_bot(pipecat_bots: BotPool) -> Bot:
    """The example Pipecat bot (interruptions on, Twilio), shared by the whole run, idle,
    its ``said`` reading only this test's lines. Skips when espeak-ng or Pipecat is
    missing."""
    return pipecat_bots.get()
