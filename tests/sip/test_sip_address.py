"""``--agent sip:...``: what is accepted, what is refused (one line), what is never shown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessions.lines.base import LineError
from sessions.lines.factory import is_line_agent, parse_line_agent
from sessions.lines.sip.line import SipLine
from sessions.lines.sip.uri import SipAccount, parse_sip, sip_account
from tests.sip.far_end import sip_far_end
from tests.support.cli import run_cutin


@pytest.mark.parametrize(
    ("agent", "uri"),
    [
        ("sip:agent@127.0.0.1:5070", "sip:agent@127.0.0.1:5070"),
        ("sip:support@pbx.example.com", "sip:support@pbx.example.com"),
        ("sip:pbx.example.com;transport=tcp", "sip:pbx.example.com;transport=tcp"),
        ("sip:1000@[::1]:5060", "sip:1000@[::1]:5060"),
        ("sip:bob:s3cretpw@h:5060", "sip:bob@h:5060"),
    ],
)
def test_sip_addresses_are_parsed_without_their_password(agent: str, uri: str) -> None:
    assert is_line_agent(agent)
    assert parse_line_agent(agent).kind == "sip"
    address = parse_sip(agent)
    assert address.uri == uri == address.shown
    assert "s3cretpw" not in repr(address)


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        ("sips:agent@h", "sips: (SIP over TLS) is not supported yet"),
        ("sip:", "not a SIP address"),
        ("sip:a@h:0", "port is not a number"),
        ("sip:a@h:99999", "port is not a number"),
        ("sip:a@h x", "not a SIP address"),
        ("sip:a@h\x1b]0;pwned\x07", "not a SIP address"),
        ("sip:a@h?Subject=x", "not a SIP address"),
        ("sip:a@-h", "no valid host"),
        ("sip:bob:@h", "empty password"),
    ],
)
def test_bad_sip_addresses_are_refused_in_one_line(agent: str, says: str) -> None:
    with pytest.raises(LineError) as refused:
        parse_line_agent(agent)
    message = str(refused.value)
    assert says in message and "\n" not in message and "\x1b" not in message


def test_the_account_comes_from_the_environment_and_a_bad_registrar_is_refused() -> None:
    env = {"CUTIN_SIP_USER": "1001", "CUTIN_SIP_PASSWORD": "pw-123456", "CUTIN_SIP_REGISTRAR":
           "sip:pbx.example.com"}  # fmt: skip
    account = sip_account(env)
    assert (account.user, account.registrar) == ("1001", "sip:pbx.example.com")
    assert "pw-123456" not in repr(account)
    with pytest.raises(LineError, match="CUTIN_SIP_REGISTRAR"):
        sip_account({"CUTIN_SIP_REGISTRAR": "http://pbx.example.com"})


def test_dtmf_is_checked_before_it_is_sent() -> None:
    line = SipLine("sip:agent@127.0.0.1:9", account=SipAccount())
    for bad in ("", "12x", "1" * 40):
        with pytest.raises(LineError, match="DTMF is 1 to"):
            line.send_dtmf(bad)
    with pytest.raises(LineError, match="not connected"):
        line.send_dtmf("1")


def test_cutin_call_to_a_busy_sip_agent_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "CUTIN_CACHE_DIR": str(tmp_path / "cache")}
    with sip_far_end("--busy") as far:
        target = f"sip:agent@127.0.0.1:{far.port}"
        result = run_cutin("call", "--agent", target, "--sessions-dir", str(tmp_path), env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == f"cutin: sip: {target} is busy (486 Busy Here)"
    assert not list(tmp_path.glob("*.jsonl")), "no log is left for a call that never started"
    help_text = run_cutin("call", "--help", env=env).stdout
    assert "sip:USER@HOST[:PORT]" in " ".join(help_text.split())
