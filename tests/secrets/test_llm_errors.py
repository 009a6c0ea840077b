"""The chat client: a base URL's query goes to the server, and no error message it
raises holds the key, the user info or a query value, whatever the server echoes."""

from __future__ import annotations

import pytest

from sessions.llm_client import LLMClient, LLMConfig, LLMError, RetryPolicy, split_query
from tests.support.openai_server import Error, OpenAIServer, Reply

PASSWORD = "pw-Echoed-Pass-42"
QUERY_KEY = "qk-Echoed-Query-42"
API_KEY = "sk-Echoed-Key-4242"


def _url(server: OpenAIServer) -> str:
    return server.base_url.replace("://", f"://me:{PASSWORD}@") + f"?api_key={QUERY_KEY}"


def _client(url: str) -> LLMClient:
    retry = RetryPolicy(max_retries=0, timeout_s=5.0)
    return LLMClient(LLMConfig(model="test-model", base_url=url, api_key=API_KEY, retry=retry))


def test_the_query_of_the_base_url_is_sent_with_every_request(
    openai_server: OpenAIServer,
) -> None:
    openai_server.enqueue(Reply("one"), Reply("two"))
    client = _client(_url(openai_server))
    assert client.complete([{"role": "user", "content": "hi"}]).text == "one"
    assert "".join(client.stream([{"role": "user", "content": "hi"}])) == "two"
    paths = [r.path for r in openai_server.chat_requests()]
    assert paths == [f"/v1/chat/completions?api_key={QUERY_KEY}"] * 2


@pytest.mark.parametrize("stream", [False, True])
def test_an_error_echoing_the_secrets_is_scrubbed(
    openai_server: OpenAIServer, stream: bool
) -> None:
    url = _url(openai_server)
    echo = f"bad key {API_KEY} for {url} (user me:{PASSWORD}, api_key={QUERY_KEY})"
    openai_server.enqueue(Error(400, echo))
    client = _client(url)
    with pytest.raises(LLMError) as info:
        if stream:
            list(client.stream([{"role": "user", "content": "hi"}]))
        else:
            client.complete([{"role": "user", "content": "hi"}])
    message = str(info.value)
    assert "HTTP 400" in message and "test-model at http://127.0.0.1:" in message
    for secret in (PASSWORD, QUERY_KEY, API_KEY):
        assert secret not in message, message


def test_split_query() -> None:
    assert split_query(None) == (None, {})
    assert split_query("http://h/v1") == ("http://h/v1", {})
    assert split_query("http://u:p@h/v1?a=1&b=") == ("http://u:p@h/v1", {"a": "1", "b": ""})
    assert split_query("http://[::1/v1?a=1") == ("http://[::1/v1?a=1", {})
