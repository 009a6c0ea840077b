"""`--agent` values and the key a black-box or LLM agent needs, refused up front.

``agent_choice`` is what argparse calls; the key checks run `cutin` as a program,
with no key in its environment, so nothing is dialled or run before the refusal.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from cutin_tui.cli import main
from cutin_tui.cli.call_cmd import agent_choice
from tests.support.cli import run_cutin

FORMS = "twilio:ws://HOST:PORT/PATH"


@pytest.mark.parametrize("value", ["scripted", "openai", "realtime", "twilio:ws://127.0.0.1:8765/"])
def test_accepted_forms(value: str) -> None:
    assert agent_choice(value) == value


@pytest.mark.parametrize(
    "value",
    ["twilio:ws://[::1", "twilio:wss://[fe80::1/x"],
)
def test_refusals_name_the_accepted_forms_in_plain_words(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        agent_choice(value)
    message = str(caught.value)
    assert FORMS in message and "realtime" in message
    assert "agent_choice" not in message and "\n" not in message


@pytest.mark.parametrize("value", ["ws://127.0.0.1:8765/", "wss://h/"])
def test_a_bare_url_is_answered_with_its_own_protocol_forms(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        agent_choice(value)
    message = str(caught.value)
    assert "does not say which protocol" in message and "\n" not in message
    assert f"twilio:{value} (Twilio Media Streams)" in message
    assert f"vonage:{value} (Vonage Voice WebSocket)" in message
    assert "HOST:PORT" not in message and "realtime" not in message  # not every form there is


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("twillio:ws://127.0.0.1:8765/", "did you mean 'twilio:ws://127.0.0.1:8765/'?"),
        ("Twilio:wss://h/", "did you mean 'twilio:wss://h/'?"),
        ("opneai", "did you mean 'openai'?"),
        ("realtme", "did you mean 'realtime'?"),
        ("scripter", "did you mean 'scripted'?"),
        ("vonnage:ws://h/", "did you mean 'vonage:ws://h/'?"),
        ("bogus", "; the kinds are scripted, openai, realtime, twilio, "),
        ("x" * 5000, "; the kinds are scripted, openai, "),
    ],
    ids=lambda v: v[:20] if isinstance(v, str) and v.startswith("x" * 20) else None,
)
def test_an_unknown_kind_is_one_short_line_with_the_closest_kind(value: str, said: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        agent_choice(value)
    message = str(caught.value)
    assert message.startswith("unknown agent '") and said in message, message
    assert len(message) < 200 and "\n" not in message, message
    assert "HOST:PORT" not in message  # the forms are in --help, not in every refusal


def test_an_unknown_kind_on_the_command_line_points_to_help(child_env: dict[str, str]) -> None:
    proc = run_cutin("call", "--agent", "twillio:ws://127.0.0.1:9/", env=child_env, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "cutin call: argument --agent: unknown agent 'twillio:ws://127.0.0.1:9/'; did you "
        "mean 'twilio:ws://127.0.0.1:9/'? (see 'cutin call --help')"
    ]


def test_a_bare_websocket_url_is_not_taken_as_twilio() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="protocol"):
        agent_choice("ws://127.0.0.1:8765/")


@pytest.mark.parametrize("command", ["call", "simulate"])
def test_bad_agent_on_the_command_line_is_one_plain_line(
    command: str, child_env: dict[str, str]
) -> None:
    proc = run_cutin(command, "--agent", "twilio:ws://[::1", env=child_env, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "--agent" in lines[0] and FORMS in lines[0]
    assert "agent_choice" not in lines[0] and "Traceback" not in proc.stderr


def _keyless(env: dict[str, str], home: Path) -> dict[str, str]:
    env = {k: v for k, v in env.items() if k != "OPENAI_API_KEY" and not k.startswith("CUTIN_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "cfg"), CUTIN_SESSIONS_DIR=str(home))
    return env


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--agent", "realtime", "--scenario", "retail-order-change"],
        ["simulate", "--user", "llm", "--scenario", "retail-order-change"],
        ["simulate", "--policy", "tau-voice", "--scenario", "retail-order-change"],
        ["simulate", "--shadow", "tau-voice", "--scenario", "retail-order-change"],
        ["call", "--agent", "realtime"],
        ["call", "--policy", "tau-voice"],
    ],
)
def test_no_key_and_no_local_server_is_refused_before_any_call(
    argv: list[str], child_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "batch"
    extra = ["--out", str(out)] if argv[0] == "simulate" else []
    proc = run_cutin(*argv, *extra, env=_keyless(child_env, tmp_path), timeout=90)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "OPENAI_API_KEY" in lines[0] and "--base-url" in lines[0]
    assert not out.exists()  # no call was tried


def test_realtime_key_check_passes_with_a_local_base_url() -> None:
    from cutin_tui.cli.call_cmd import check_agent_key

    check_agent_key(argparse.Namespace(agent="realtime", base_url="http://127.0.0.1:9/v1"))


def test_realtime_key_check_refuses_without_key_or_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cutin_tui.cli import CliError
    from cutin_tui.cli.call_cmd import check_agent_key

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CUTIN_OPENAI_BASE_URL", raising=False)
    with pytest.raises(CliError, match="--agent realtime needs an API key"):
        check_agent_key(argparse.Namespace(agent="realtime", base_url=None))


@pytest.mark.parametrize(
    ("value", "says"),
    [("abc", "valid number"), ("2500", "less than or equal to 2000"), ("-1", "greater than")],
)
def test_a_bad_setting_in_the_environment_is_one_line_exit_2(
    value: str, says: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CUTIN_PLAYOUT_MS", value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-shown-123456")
    code = main(["simulate", "--agent", "twilio:ws://127.0.0.1:9/", "--out", "unused"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("cutin: bad setting"), err
    assert "CUTIN_PLAYOUT_MS" in err and says in err, err
    assert "sk-never" not in err
