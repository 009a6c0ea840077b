"""sessions.hostile.redact: what of a URL or an error message may be shown or recorded."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.hostile.redact import MASK, Redactor, public_url, redact_url, scrub, url_secrets
from sessions.log.models import AgentInfo, Header

SECRET = "s3cr3t-Value"


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        (f"http://u:{SECRET}@host.example/v1", "http://host.example/v1"),
        (f"https://{SECRET}@host.example:8443/v1", "https://host.example:8443/v1"),
        (f"http://u:{SECRET}@[::1]:8000/v1", "http://[::1]:8000/v1"),
        (f"http://[2001:db8::1]/v1?key={SECRET}", f"http://[2001:db8::1]/v1?key={MASK}"),
        (f"wss://h/media?token={SECRET}&room=7", f"wss://h/media?token={MASK}&room={MASK}"),
        (f"http://h/v1?a=1&sig={SECRET}#frag-{SECRET}", f"http://h/v1?a={MASK}&sig={MASK}"),
        (f"http://h/v1?{SECRET}", f"http://h/v1?{MASK}"),  # a bare item is masked whole
        (f"http://h/v1?api_key={SECRET}&&x=", f"http://h/v1?api_key={MASK}&x={MASK}"),
        ("HTTP://Host.Example/V1", "http://host.example/V1"),
    ],
)
def test_redact_url(url: str, redacted: str) -> None:
    assert redact_url(url) == redacted
    assert public_url(url) == redacted.partition("?")[0]
    assert redact_url(redacted) == redacted  # redacting twice changes nothing


@pytest.mark.parametrize(
    "url",
    [
        f"http://[::1:{SECRET}@x",  # unclosed IPv6 bracket: urlsplit raises
        f"http://u:{SECRET}@[::1",
        f"http://u:{SECRET}@host:notaport/v1?key={SECRET}",
        f"http://u:{SECRET}@host:99999/v1",
        f"u:{SECRET}@host:8000/v1?token={SECRET}",  # no scheme at all
        f"//u:{SECRET}@host/v1",
        f"http://u:{SECRET}@h/v1?k={SECRET}\x1b[31m",
        f"http://h/p?{SECRET}%21=x",  # not a name: masked whole (names are kept)
        f"http://h/p?{'n' * 41}{SECRET}=x",
        "",
        "::::",
        "http://",
    ],
)
def test_malformed_urls_never_raise_and_never_leak(url: str) -> None:
    for out in (redact_url(url), public_url(url)):
        assert SECRET not in out
        assert "\x1b" not in out and "\n" not in out


def test_url_secrets_names_the_secret_parts() -> None:
    found = url_secrets("http://me:p%40ss@h/v1?api_key=K1234&sig=a+b#tail")
    assert {"me", "p%40ss", "p@ss", "K1234", "a+b", "a b", "tail"} <= set(found)
    assert url_secrets(None) == [] and url_secrets("http://h/v1") == []


def test_scrub_blanks_urls_and_known_secrets_in_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-env-999")
    base = f"http://u:{SECRET}@127.0.0.1:9/v1?api_key=qk-{SECRET}"
    message = (
        f"Error code: 404 - no route /v1/chat/completions?api_key=qk-{SECRET} "
        f"at {base}: Authorization: Bearer sk-given-key-1 (env sk-from-the-env-999), "
        "encoded p%40ss%2Fw%3Ard+and p%40ss%2Fw%3Ard%20and"
    )
    out = scrub(message, "sk-given-key-1", "p@ss/w:rd and", urls=[base])
    for secret in (SECRET, "sk-given-key-1", "sk-from-the-env-999", "p%40ss"):
        assert secret not in out, out
    assert "at http://127.0.0.1:9/v1?api_key=***: Authorization" in out  # the colon kept
    assert "no route" in out  # the rest of the message stays readable


def test_short_secrets_are_not_searched_in_text() -> None:
    # A one-letter password would blank every "x" of the message; the URL still hides it.
    assert Redactor(urls=["http://u:x@h/"])("x marks http://u:x@h/") == "x marks http://h/"


def test_shown_urls_are_left_alone_and_nested_values_are_scrubbed() -> None:
    target = "ws://h/v1/realtime?model=m"
    redactor = Redactor(secrets=["sk-key-12345"], shown=[target])
    assert redactor(f"cannot connect to {target}.") == f"cannot connect to {target}."
    assert redactor.value({"a": ["sk-key-12345", 3], "b": {"c": "x sk-key-12345"}}) == {
        "a": [MASK, 3],
        "b": {"c": f"x {MASK}"},
    }


def test_a_header_never_holds_a_secret_url() -> None:
    agent = AgentInfo(
        kind="openai",
        base_url=f"http://u:{SECRET}@h:1/v1?key={SECRET}",
        dialled=f"ws://u:{SECRET}@h/",
    )
    assert agent.base_url == "http://h:1/v1"
    header = Header(session_id="x", started_at="2026-01-01T00:00:00Z", agent=agent)
    line = header.model_dump_json(by_alias=True)
    assert SECRET not in line and "ws://h/" in line
    # A log written before the redaction is read back redacted.
    loaded = Header.model_validate_json(line.replace("http://h:1/v1", f"http://u:{SECRET}@h:1/v1"))
    assert loaded.agent.base_url == "http://h:1/v1"


_SECRETS = st.text(alphabet=st.characters(codec="utf-8"), min_size=4, max_size=20).filter(
    lambda s: s.strip() == s and "@" not in s and not any(c in s for c in "/?#&=")
)


@given(password=_SECRETS, value=_SECRETS, host=st.sampled_from(["h", "[::1]", "1.2.3.4:80"]))
def test_no_planted_secret_survives(password: str, value: str, host: str) -> None:
    url = f"https://user:{password}@{host}/v1?token={value}"
    out = redact_url(url)
    assert password not in out and value not in out
    text = scrub(f"failed: {url} ({password}, {value})", urls=[url])
    assert password not in text and value not in text
