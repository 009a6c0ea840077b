"""A Realtime agent that echoes the credentials it was sent (issue 32).

The base URL carries a password (user info, which ``websockets`` sends as ``Authorization:
Basic``), a ``;key=`` path parameter and an ``?api_key=`` query value; OPENAI_API_KEY goes
as ``Bearer``. The loopback Realtime server quotes its Authorization headers back in an
``error`` (raw and percent-encoded) and in an event of its own, either during the call or
as its refusal of the session. Real ``cutin simulate`` child processes dial it; stdout,
stderr, every file they write (the log, the WAV and what lies beside it) and ``cutin
report`` of the log are grepped for every spelling of every secret. Also: a ``ws://``
base URL is dialled without TLS, a ``wss://`` one with it, and the error says which.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, unquote, urlsplit

import pytest

from sessions.lines.base import LineError
from sessions.lines.realtime import RealtimeLine, websocket_base
from tests.support.cli import run_cutin
from tests.support.realtime_server import RealtimeServer

USER = "tester"
PASSWORD = "pw-Echo%3FaPass"
"""As written in the URL; ``websockets`` sends it decoded (``pw-Echo?aPass``)."""
PATH_KEY = "pk-PlantedPathKey9"
QUERY_KEY = "qk-PlantedQueryKey9"
API_KEY = "sk-EchoedEnvKey-5678"
BASIC = base64.b64encode(f"{USER}:{unquote(PASSWORD)}".encode()).decode()
"""What the server gets: ``dGVzdGVyOnB3LUVjaG8/YVBhc3M=`` (a ``/`` and padding, so its
percent-encoded spelling differs)."""


def _forms() -> set[str]:
    """Every spelling of every secret: raw, decoded, percent- and form-encoded, JSON
    string; the Basic credential also URL-safe and unpadded."""
    basic = {BASIC, BASIC.rstrip("="), base64.urlsafe_b64encode(base64.b64decode(BASIC)).decode()}
    found = set()
    for secret in {PASSWORD, unquote(PASSWORD), PATH_KEY, QUERY_KEY, API_KEY, *basic}:
        found |= {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    return found


FORMS = _forms()


def _leaks(data: str | bytes) -> list[str]:
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    return sorted(f for f in FORMS if f.encode() in raw)


class _Server(RealtimeServer):
    """The loopback server, answering a path with parameters (``/v1;key=K/realtime``)."""

    def _process_request(self, connection: Any, request: Any) -> Any:
        self.paths.append(request.path)
        self.headers.append({k.lower(): v for k, v in request.headers.raw_items()})
        path = "/".join(s.partition(";")[0] for s in urlsplit(request.path).path.split("/"))
        if path != "/v1/realtime":
            return connection.respond(404, "not a realtime path\n")
        return None


@pytest.fixture
def env(tmp_path: Path, child_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in child_env.items() if not k.startswith(("CUTIN_", "OPENAI_"))}
    env.update(
        OPENAI_API_KEY=API_KEY,
        CUTIN_SESSIONS_DIR=str(tmp_path / "sessions"),
        CUTIN_CACHE_DIR=str(tmp_path / "cache"),
        NO_COLOR="1",
    )
    return env


@pytest.fixture
def servers() -> Iterator[Any]:
    started: list[RealtimeServer] = []

    def start(**kwargs: Any) -> RealtimeServer:
        started.append(_Server(speed=8.0, **kwargs).start())
        return started[-1]

    yield start
    for server in started:
        server.close()


def _secret_url(server: RealtimeServer) -> str:
    return f"http://{USER}:{PASSWORD}@127.0.0.1:{server.port}/v1;key={PATH_KEY}?api_key={QUERY_KEY}"


def _simulate(url: str, out: Path, env: dict[str, str]) -> list[tuple[str, str]]:
    done = run_cutin(
        *("simulate", "--agent", "realtime", "--base-url", url, "--model", "test-realtime"),
        *("--scenario", "clinic-triage", "--max-seconds", "6", "--out", str(out)),
        env=env,
        timeout=180,
    )
    return [("stdout", done.stdout), ("stderr", done.stderr), ("rc", str(done.returncode))]


def _assert_clean(root: Path, outputs: list[tuple[str, str]]) -> None:
    problems = [f"{what}: {found}" for what, text in outputs if (found := _leaks(text))]
    for path in sorted(root.rglob("*")):
        if path.is_file() and (found := _leaks(path.read_bytes()) + _leaks(path.name)):
            problems.append(f"{path.relative_to(root)}: {found}")
    assert not problems, "secrets leaked:\n" + "\n".join(problems)


def test_credentials_an_agent_echoes_during_a_call_reach_no_output_log_or_report(
    servers: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = servers(echo_auth="call")
    out = tmp_path / "sessions" / "echo"
    outputs = _simulate(_secret_url(server), out, env)
    assert dict(outputs)["rc"] in ("0", "1"), dict(outputs)["stderr"][-2000:]
    # The planted credentials really went out: path parameter, query, Basic and Bearer.
    assert server.paths and PATH_KEY in server.paths[0] and QUERY_KEY in server.paths[0]
    assert server.sent_events("debug.request"), "the server never echoed"
    echoed = server.sent_events("debug.request")[0].event["message"]
    assert f"Basic {BASIC}" in echoed and f"Bearer {API_KEY}" in echoed

    (log,) = sorted(out.glob("*.jsonl*"))
    assert any(p.suffix == ".wav" for p in out.iterdir()), sorted(out.iterdir())
    text = log.read_text(encoding="utf-8")
    header = json.loads(text.splitlines()[0])
    assert header["agent"]["base_url"] == f"http://127.0.0.1:{server.port}/v1;key=***"
    # The echo was logged, with the credentials blanked.
    assert "not authorized: got Basic ***; Bearer ***" in text, text[-3000:]
    assert '[\\"Authorization\\", \\"Basic ***\\"]' in text, text[-3000:]
    for fmt in ("md", "json"):
        done = run_cutin("report", "--format", fmt, str(log), env=env, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        outputs += [(f"report {fmt}", done.stdout), (f"report {fmt} stderr", done.stderr)]
    html = tmp_path / "report.html"
    done = run_cutin("report", "--format", "html", "-o", str(html), str(log), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    outputs += [("report html", done.stdout + done.stderr)]
    # The report's black-box line names the endpoint, its path parameter blanked.
    assert f"127.0.0.1:{server.port}/v1;key=***" in html.read_text(encoding="utf-8")
    _assert_clean(tmp_path, outputs)


def test_credentials_an_agent_echoes_in_its_refusal_reach_no_output(
    servers: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = servers(echo_auth="refuse")
    outputs = _simulate(_secret_url(server), tmp_path / "sessions" / "refused", env)
    stderr = dict(outputs)["stderr"]
    assert dict(outputs)["rc"] == "1", stderr[-2000:]
    assert "refused the session" in stderr and "Basic ***" in stderr, stderr[-2000:]
    _assert_clean(tmp_path, outputs)


def test_the_secret_forms_are_real() -> None:
    # The test would miss a leak if the spellings it greps for were all the same.
    assert quote(BASIC, safe="") != BASIC and BASIC.endswith("=")
    assert unquote(PASSWORD) != PASSWORD


@pytest.mark.parametrize(
    ("base", "dialled"),
    [
        ("http://h:1/v1", "ws://h:1/v1"),
        ("ws://h:1/v1", "ws://h:1/v1"),
        ("https://h/v1", "wss://h/v1"),
        ("wss://h/v1", "wss://h/v1"),
        ("WS://h/v1", "ws://h/v1"),
        (None, None),
    ],
)
def test_the_socket_is_dialled_as_the_base_url_says(base: str | None, dialled: str | None) -> None:
    assert websocket_base(base) == dialled


def test_a_ws_base_url_is_dialled_without_tls_and_a_wss_one_with_it(servers: Any) -> None:
    server = servers()
    line = RealtimeLine(base_url=f"ws://u:p4ssw0rd@127.0.0.1:{server.port}/v1", api_key="sk-x-1")
    assert line.target.startswith(f"ws://127.0.0.1:{server.port}/v1/realtime")
    line.open(timeout_s=5.0)  # the plain loopback server accepts it
    line.close()
    assert server.headers[0]["authorization"].startswith("Bearer")

    tls = RealtimeLine(base_url=f"wss://127.0.0.1:{server.port}/v1", api_key="sk-x-1")
    with pytest.raises(LineError) as refused:
        tls.open(timeout_s=5.0)
    assert f"wss://127.0.0.1:{server.port}" in str(refused.value)
    assert "TLS" in str(refused.value)


def test_a_base_url_of_another_scheme_is_refused_clearly() -> None:
    with pytest.raises(LineError, match="give http://, https://, ws:// or wss://"):
        RealtimeLine(base_url=f"ftp://u:{PATH_KEY}@h/v1", api_key="sk-x-1")
    with pytest.raises(LineError) as refused:
        RealtimeLine(base_url=f"ftp://u:{PATH_KEY}@h/v1", api_key="sk-x-1")
    assert PATH_KEY not in str(refused.value)
