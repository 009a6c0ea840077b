"""Shared pytest fixtures (registered from tests/conftest.py via ``pytest_plugins``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import OpenAIServer


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A fresh loopback OpenAI-compatible server (see tests/support/openai_server.py)."""
    server = OpenAIServer().start()
    try:
        yield server
    finally:
        server.close()
