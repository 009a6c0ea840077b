"""No secret in a log, a report, a cache or an error line (issue 23).

Plants a password (URL user info), a query key (``?api_key=``) and an OPENAI_API_KEY
value, runs whole calls through the real CLI in child processes against the loopback
OpenAI-compatible server (the agent, the LLM caller and the tau-Voice shadow policy all
go through the secret URL), then judges, reports, audits and prompt-audits them, and
greps every byte of every file written and of every stdout/stderr for the secrets, raw
and URL-encoded. A second run points the same secret URL at a refused port."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from tests.support.cli import run_cutin
from tests.support.openai_server import OpenAIServer, RecordedRequest, Reply
from tests.support.realtime_server import RealtimeServer

PASSWORD = "pw-Zq8xPlantedPass"
QUERY_KEY = "qk-Plantedquery77"
API_KEY = "sk-PlantedEnvKey-1234"
SECRETS = (PASSWORD, QUERY_KEY, API_KEY)
BASIC = base64.b64encode(f"tester:{PASSWORD}".encode()).decode()
"""The user info as HTTP Basic auth sends it (httpx takes it from the URL)."""

JUDGE_ANSWER = json.dumps(
    {"call": {"label": "pass", "rationale": "fine"}, "turns": [{"turn": 0, "label": "pass"}]}
)


def _forms(secret: str) -> set[str]:
    """Every spelling a secret may take in a file: raw, percent- and form-encoded."""
    return {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}


def _leaks(text: str | bytes) -> list[str]:
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    found = [BASIC] if BASIC.encode() in data else []
    for secret in SECRETS:
        for form in _forms(secret):
            if form.encode() in data:
                found.append(form)
    return sorted(set(found))


def _secret_url(base_url: str) -> str:
    """``http://HOST:PORT/v1`` with the planted user info and query key."""
    scheme, rest = base_url.split("://", 1)
    return f"{scheme}://tester:{PASSWORD}@{rest}?api_key={QUERY_KEY}"


def _refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed again: connecting to it is refused


def _answer(request: RecordedRequest) -> Reply:
    """A plausible reply for whoever asks: the judge gets JSON, the rest plain text."""
    text = json.dumps(request.body or {})
    if "JSON" in text or "json" in text:
        return Reply(JUDGE_ANSWER)
    return Reply("Sure, it is order 48213. Thanks for waiting.")


@pytest.fixture
def env(tmp_path: Path, child_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in child_env.items() if not k.startswith(("CUTIN_", "OPENAI_"))}
    home = tmp_path / "home"
    home.mkdir()
    env.update(
        OPENAI_API_KEY=API_KEY,
        CUTIN_SESSIONS_DIR=str(tmp_path / "sessions"),
        CUTIN_CACHE_DIR=str(tmp_path / "cache"),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        NO_COLOR="1",
    )
    return env


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    s = OpenAIServer().start()
    s.responder = _answer
    try:
        yield s
    finally:
        s.close()


def _every_file(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            yield path


def _assert_clean(root: Path, outputs: list[tuple[str, str]]) -> int:
    """Every file under ``root`` (names and bytes) and every output: no planted secret.
    Returns how many files were read."""
    problems = []
    files = 0
    for path in _every_file(root):
        files += 1
        rel = path.relative_to(root)
        if leaked := _leaks(str(rel)):
            problems.append(f"file name {rel}: {leaked}")
        if leaked := _leaks(path.read_bytes()):
            problems.append(f"{rel}: {leaked}")
    for what, text in outputs:
        if leaked := _leaks(text):
            problems.append(f"{what}: {leaked}")
    assert not problems, "secrets leaked:\n" + "\n".join(problems)
    return files


def test_no_secret_in_logs_reports_caches_or_output(
    server: OpenAIServer, env: dict[str, str], tmp_path: Path
) -> None:
    url = _secret_url(server.base_url)
    batch = tmp_path / "sessions" / "batch"
    outputs: list[tuple[str, str]] = []

    def cutin(*args: str, ok: tuple[int, ...] = (0,)) -> str:
        done = run_cutin(*args, env=env, timeout=300)
        outputs.append((f"cutin {args[0]} stdout", done.stdout))
        outputs.append((f"cutin {args[0]} stderr", done.stderr))
        assert done.returncode in ok, f"cutin {' '.join(args[:2])}: {done.stderr[-2000:]}"
        return done.stdout

    cutin(
        *("simulate", "--agent", "openai", "--base-url", url, "--model", "test-model"),
        *("--user", "llm", "--shadow", "tau-voice", "--scenario", "retail-order-change"),
        *("--beta", "0,1", "--out", str(batch), "--json"),
    )
    logs = sorted(batch.glob("*.jsonl"))
    assert len(logs) == 2, sorted(p.name for p in batch.iterdir())
    # The calls really went through the secret URL, with the planted credentials.
    paths = [r.path for r in server.chat_requests()]
    assert paths and all(QUERY_KEY in p for p in paths)
    assert all(r.headers.get("authorization") == f"Basic {BASIC}" for r in server.requests)
    header = json.loads(logs[0].read_text(encoding="utf-8").splitlines()[0])
    assert header["agent"]["base_url"] == server.base_url  # the redacted form

    cutin("judge", "--judge", "llm", "--base-url", url, "--model", "test-model", str(batch))
    verdicts = [line for p in logs for line in p.read_text().splitlines() if '"verdict"' in line]
    assert verdicts, "the LLM judge wrote no verdict"
    for fmt in ("md", "html", "json"):
        cutin("report", "--format", fmt, "-o", str(tmp_path / f"report.{fmt}"), str(batch))
    cutin("audit", "--json", str(batch))
    positions = tmp_path / "positions.jsonl"
    cutin("positions", "extract", "-o", str(positions), str(batch))
    cutin(
        *("prompt-audit", "--base-url", url, "--model", "test-model", "--conditions", "none"),
        *("--alpha", "", "--cache", str(tmp_path / "cache" / "prompt-audit"), "--json"),
        *("--no-progress", str(positions)),
    )

    refused = f"http://tester:{PASSWORD}@127.0.0.1:{_refused_port()}/v1?api_key={QUERY_KEY}"
    failed = tmp_path / "sessions" / "refused"
    err = cutin(
        *("simulate", "--agent", "openai", "--base-url", refused, "--model", "test-model"),
        *("--scenario", "clinic-triage", "--out", str(failed)),
        ok=(1,),
    )
    del err
    assert list(failed.glob("*.jsonl.failed")), "the refused call left no failed log"
    assert "connection" in outputs[-1][1]
    judge_refused = run_cutin(
        *("judge", "--judge", "llm", "--base-url", refused, "--model", "test-model"),
        str(batch),
        env=env,
    )
    assert judge_refused.returncode != 0
    outputs += [("judge (refused) stdout", judge_refused.stdout)]
    outputs += [("judge (refused) stderr", judge_refused.stderr)]

    # A log written before headers were redacted: read back, reported and audited clean.
    old = tmp_path / "old-log"
    old.mkdir()
    first, rest = logs[0].read_text(encoding="utf-8").split("\n", 1)
    planted = first.replace(json.dumps(server.base_url), json.dumps(url))
    assert planted != first
    (tmp_path / "old-log" / "old.jsonl").write_text(planted + "\n" + rest, encoding="utf-8")
    for fmt in ("md", "html", "json"):
        cutin("report", "--format", fmt, "-o", str(tmp_path / f"old-report.{fmt}"), str(old))
    cutin("audit", "--json", str(old))
    # The planted log is the one file allowed to hold the secret; judge it elsewhere.
    (old / "old.jsonl").unlink()

    files = _assert_clean(tmp_path, outputs)
    assert files >= 10


def test_no_secret_from_a_realtime_call_or_a_refused_realtime_endpoint(
    env: dict[str, str], tmp_path: Path
) -> None:
    outputs: list[tuple[str, str]] = []
    server = RealtimeServer(speed=8.0).start()
    try:
        url = _secret_url(server.base_url)
        out = tmp_path / "sessions" / "realtime"
        done = run_cutin(
            *("simulate", "--agent", "realtime", "--base-url", url, "--model", "test-realtime"),
            *("--scenario", "clinic-triage", "--max-seconds", "6", "--out", str(out)),
            env=env,
            timeout=180,
        )
        outputs += [("realtime stdout", done.stdout), ("realtime stderr", done.stderr)]
        assert done.returncode in (0, 1), done.stderr[-2000:]
        assert server.paths and all(QUERY_KEY in p for p in server.paths), server.paths
        assert server.input_audio, "the caller never spoke into the line"
    finally:
        server.close()
    logs = list(out.glob("*.jsonl*"))
    assert logs and any(p.suffix == ".wav" for p in out.iterdir()), sorted(out.iterdir())

    refused = f"http://tester:{PASSWORD}@127.0.0.1:{_refused_port()}/v1?api_key={QUERY_KEY}"
    done = run_cutin(
        *("simulate", "--agent", "realtime", "--base-url", refused, "--model", "test-realtime"),
        *("--scenario", "clinic-triage", "--max-seconds", "6", "--out", str(tmp_path / "r2")),
        env=env,
        timeout=180,
    )
    outputs += [("refused stdout", done.stdout), ("refused stderr", done.stderr)]
    assert done.returncode == 1 and "connect" in done.stderr, done.stderr[-2000:]
    _assert_clean(tmp_path, outputs)
