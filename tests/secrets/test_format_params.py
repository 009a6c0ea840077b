"""Redaction touches secrets only (issue 32): every registered line's format parameters
(``codec``, ``rate``, ``sample-rate``: the registry's ``rate_param`` and ``query``) survive
in the URL shown, the session header, the line's target (the line status on the screen)
and its notices, while every secret beside them (user info, ``key``/``token``/``sig``/
``password`` query values, ``;key=`` path parameters, Basic and Bearer credentials, in
raw, percent-encoded and base64 spellings) is blanked. The table is built from the
registry, so a new transport's parameters are checked without editing this file."""

from __future__ import annotations

import base64
import itertools
import json
from urllib.parse import parse_qsl, quote, quote_plus

import pytest

from sessions.call.setup.line_call import RemoteSpec
from sessions.hostile.redact import (
    FORMAT_PARAMS,
    MASK,
    Redactor,
    public_url,
    redact_url,
    url_secrets,
)
from sessions.lines.base import LineError, NoticeKind
from sessions.lines.factory import open_line, parse_line_agent
from sessions.lines.registry import Transport, transports
from sessions.log.models import Header
from tests.lines.test_pcm_line import hold
from tests.lines.wire_agent import Notices, WireAgent

PASSWORD = "pw-Fmt/Planta?:9"
"""Its Basic base64 has a ``/`` and padding: every spelling below differs."""
PATH_KEY = "pk-FmtPathKey42"
SECRETS = {
    "token": "tk-FmtToken42",
    "sig": "sg-FmtSig42",
    "password": "pw-FmtQueryPass42",
    "api_key": "ak-FmtApiKey42",
}
BASIC = base64.b64encode(f"caller:{PASSWORD}".encode()).decode()


def _forms() -> set[str]:
    found: set[str] = set()
    for secret in [PASSWORD, PATH_KEY, *SECRETS.values(), BASIC, BASIC.rstrip("=")]:
        found |= {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    return found


FORMS = _forms()


def _params(t: Transport) -> dict[str, list[str]]:
    """A transport's URL parameters and the values each may take, from the registry."""
    params = {t.rate_param: [str(r) for r in t.rates]} if t.rate_param else {}
    for item in t.query.strip("[]").removeprefix("?").split("&"):
        name, _, choices = item.partition("=")
        if name:
            params.setdefault(name, choices.split("|"))
    return params


def _cases() -> list[tuple[str, str]]:
    """(kind, query) for every accepted combination of every WebSocket line's format
    parameters (Plivo's μ-law at 16 kHz is refused by its parser, so left out)."""
    cases = []
    for t in transports():
        params = _params(t)
        if not (t.prefix and t.schemes and params):
            continue
        for values in itertools.product(*params.values()):
            query = "&".join(f"{n}={v}" for n, v in zip(params, values, strict=True))
            try:
                parse_line_agent(f"{t.kind}:ws://127.0.0.1:9/media?{query}")
            except LineError:
                continue
            cases.append((t.kind, query))
    return cases


CASES = _cases()


def _secret_url(port: int, query: str) -> str:
    secrets = "&".join(f"{k}={quote_plus(v)}" for k, v in SECRETS.items())
    user = f"caller:{quote(PASSWORD, safe='')}"
    return f"ws://{user}@127.0.0.1:{port}/media;key={PATH_KEY}?{query}&{secrets}"


def _leaks(text: str) -> list[str]:
    return sorted(f for f in FORMS if f in text)


def test_the_table_covers_every_line_and_its_parameters_are_format_params() -> None:
    kinds = {kind for kind, _ in CASES}
    with_params = {t.kind for t in transports() if t.prefix and t.schemes and _params(t)}
    assert with_params >= {"exotel", "vonage", "pcm", "telnyx", "plivo"}
    assert kinds == with_params
    assert len(CASES) >= 13  # 3 Exotel + 2 Vonage + 3 PCM + 2 Telnyx + 3 Plivo
    for t in transports():
        missing = set(_params(t)) - FORMAT_PARAMS
        assert not missing, f"{t.kind}'s URL parameters {missing} would be masked as secrets"


@pytest.mark.parametrize(("kind", "query"), CASES, ids=[f"{k}?{q}" for k, q in CASES])
def test_format_params_survive_and_secrets_do_not(kind: str, query: str) -> None:
    url = _secret_url(9, query)
    parse_line_agent(f"{kind}:{url}")  # a URL the line accepts
    shown = redact_url(url)
    public = public_url(url)
    assert public == f"ws://127.0.0.1:9/media;key={MASK}?{query}"
    assert shown == public + "".join(f"&{k}={MASK}" for k in SECRETS)
    assert not _leaks(shown)
    # The header the call writes (and reads back).
    info = RemoteSpec(agent=f"{kind}:{url}").agent_info("agent")
    header = Header(session_id="s", started_at="2026-01-01T00:00:00Z", agent=info)
    line = header.model_dump_json(by_alias=True)
    assert public in line and not _leaks(line)
    # Text a line or an exception writes: the format values stay, every secret goes.
    values = [v for _, v in parse_qsl(query)]
    text = (
        f"PCM16 little-endian {' '.join(values)} Hz mono; dialling {url}: "
        f"Authorization: Basic {BASIC}, Bearer {SECRETS['token']} "
        f"(as sent: Basic%20{quote(BASIC, safe='')}) " + " ".join(url_secrets(url))
    )
    scrubbed = Redactor(urls=[url])(text)
    assert not _leaks(scrubbed), scrubbed
    assert f"PCM16 little-endian {' '.join(values)} Hz mono" in scrubbed
    assert f"?{query}&" in scrubbed


@pytest.mark.parametrize(("kind", "query"), CASES, ids=[f"{k}?{q}" for k, q in CASES])
def test_a_real_line_shows_its_format_and_no_secret(kind: str, query: str) -> None:
    """The line on loopback: its target (what the line status shows) keeps the format
    parameters, and no notice of its opening blanks a format value or holds a secret."""
    with WireAgent(hold) as agent:
        url = _secret_url(agent.port, query)
        line = open_line(parse_line_agent(f"{kind}:{url}"), timeout_s=5)
        notices = Notices(line).of(NoticeKind.FORMAT) + Notices(line).of(NoticeKind.OPEN)
        line.close()
    assert f"?{query}" in line.target and not _leaks(line.target)
    assert f";key={MASK}" in line.target
    said = [n.detail for n in notices] + [json.dumps(n.data) for n in notices]
    assert notices and not _leaks(" ".join(said))
    for notice in notices:
        assert MASK not in notice.detail.replace(f";key={MASK}", ""), notice
    request = agent.calls[0].ws.request
    assert request is not None and PATH_KEY in request.path  # dialled as written


def test_a_format_value_that_is_no_format_is_masked() -> None:
    # Only a short word or number is shown: anything else under a format name is masked.
    for value in ("x" * 17, "a%20b", "hunter2!", "", quote("sk/123", safe="")):
        url = f"ws://h/m?rate={value}&codec={value}"
        assert redact_url(url) == f"ws://h/m?rate={MASK}&codec={MASK}", value
        assert public_url(url) == "ws://h/m"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://h/v1;key=SECRETPATH", f"http://h/v1;key={MASK}"),
        ("http://h/v1;SECRETPATH/x", f"http://h/v1;{MASK}/x"),
        ("http://h/a;b=SECRETPATH;c=SECRETPATH2/v1", f"http://h/a;b={MASK};c={MASK}/v1"),
        ("h:1/v1;key=SECRETPATH?rate=8000", f"h:1/v1;key={MASK}?rate=8000"),
        ("http://[::1/v1;key=SECRETPATH", f"http://[::1/v1;key={MASK}"),
    ],
)
def test_path_parameters_are_secrets(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "SECRETPATH" not in public_url(url)
    text = Redactor(urls=[url])(f"failed at {url} (key SECRETPATH, SECRETPATH2)")
    assert "SECRETPATH" not in text


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("Authorization: Basic dXNlcjpzZWNyZXRwdw==", f"Authorization: Basic {MASK}"),
        ('{"authorization": "basic dXNlcjpzZWNyZXRwdw"}', f'{{"authorization": "basic {MASK}"}}'),
        ("Authorization: Bearer sk-abc123", f"Authorization: Bearer {MASK}"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", f"Bearer {MASK}"),
        ("Basic support only; bearer tokens expire", "Basic support only; bearer tokens expire"),
        ("basic information, basic On, a bearer 2", "basic information, basic On, a bearer 2"),
    ],
)
def test_echoed_credentials_are_blanked_ordinary_words_are_not(text: str, scrubbed: str) -> None:
    # No known secret at all: the credential is recognised by its scheme and shape.
    assert Redactor()(text) == scrubbed


def test_the_user_info_is_blanked_in_every_basic_spelling() -> None:
    url = f"http://caller:{quote(PASSWORD, safe='')}@h/v1"
    raw = f"caller:{PASSWORD}".encode()
    spellings = [
        base64.b64encode(raw).decode(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode(),
        quote(base64.b64encode(raw).decode(), safe=""),
        base64.b64encode(f"caller:{quote(PASSWORD, safe='')}".encode()).decode(),
    ]
    assert len(set(spellings)) == len(spellings)
    for spelling in spellings:
        # Not after "Basic": only the known secret can blank it.
        assert Redactor(urls=[url])(f"token={spelling}!") == f"token={MASK}!", spelling
