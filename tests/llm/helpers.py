"""Small builders shared by the LLM tests."""

from __future__ import annotations

from sessions.llm_client import LLMClient, LLMConfig, RetryPolicy
from tests.support.openai_server import OpenAIServer

SECRET = "sk-test-DO-NOT-LEAK-4242"


def fast_retry(max_retries: int = 2, timeout_s: float = 2.0) -> RetryPolicy:
    """Quick backoff so retry tests stay fast."""
    return RetryPolicy(
        max_retries=max_retries, timeout_s=timeout_s, backoff_base_s=0.01, backoff_max_s=0.05
    )


def client_for(
    server: OpenAIServer,
    *,
    key: str | None = SECRET,
    max_retries: int = 2,
    timeout_s: float = 2.0,
    model: str = "test-model",
) -> LLMClient:
    config = LLMConfig(
        model=model,
        base_url=server.base_url,
        api_key=key,
        retry=fast_retry(max_retries, timeout_s),
    )
    return LLMClient(config)
