"""The WebRTC line's bad endpoints, hang-ups and hostile data channels: one line each.

Against real sockets on loopback: nothing listening, an HTTP 404, an answer that is no
SDP, an answer whose candidates lead nowhere (ICE fails within the stated timeout), the
agent closing the connection, and a data channel that floods, oversizes and sends
escape bytes. ``cutin call`` itself says a failed dial in one line, exit 2, no log.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path

import numpy as np
import pytest

from sessions.lines.base import LineError, LineState, NoticeKind
from sessions.lines.webrtc import WebRTCLine
from sessions.lines.webrtc_signal import ice_servers
from tests.lines.wire_agent import Notices
from tests.support.cli import run_cutin
from tests.support.webrtc_peer import running_peer

pytest.importorskip("aiortc")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def refused(url: str, timeout_s: float = 5.0) -> tuple[str, float, WebRTCLine]:
    """The one line ``open`` fails with, how long it took, and the line."""
    line = WebRTCLine(url)
    t0 = time.monotonic()
    with pytest.raises(LineError) as caught:
        line.open(timeout_s=timeout_s)
    took = time.monotonic() - t0
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert line.state is LineState.FAILED
    failed = [n for n in line.notices() if n.kind is NoticeKind.FAILED]
    assert [n.detail for n in failed] == [message]
    return message, took, line


def test_nothing_listening() -> None:
    url = f"http://127.0.0.1:{free_port()}/api/offer"
    message, took, _ = refused(url)
    assert message == (
        f"webrtc: cannot send the offer to {url} (connection refused: nothing listens there)"
    )
    assert took < 2.0


def test_a_404_names_the_offer_endpoint() -> None:
    with running_peer(path="/offer") as peer:
        url = peer.url.replace("/offer", "/api/offer")
        message, _, _ = refused(url)
    assert message.startswith(f"webrtc: {url} refused the offer with HTTP 404")
    assert "offer endpoint" in message


def test_an_answer_that_is_not_sdp() -> None:
    with running_peer(answer="garbage") as peer:
        message, _, _ = refused(peer.url)
    assert message == (
        f"webrtc: the answer from {peer.url} is not an SDP answer"
        ' (its "sdp" is no session description)'
    )


def test_ice_failing_is_one_line_within_the_timeout() -> None:
    with running_peer(answer="unreachable") as peer:
        message, took, _ = refused(peer.url, timeout_s=2.0)
    assert message.startswith("webrtc: ICE ") and peer.url in message, message
    assert "CUTIN_WEBRTC_ICE_SERVERS" in message
    assert took < 5.0, took


def test_dtls_failing_is_one_line() -> None:
    with running_peer(answer="bad-fingerprint") as peer:
        message, took, _ = refused(peer.url, timeout_s=5.0)
    assert message.startswith(f"webrtc: DTLS failed with {peer.url} after ICE connected")
    assert took < 5.0, took


def test_the_agent_closing_ends_the_line_closed() -> None:
    with running_peer() as peer:
        line = WebRTCLine(peer.url)
        line.open(timeout_s=5)
        seen = Notices(line)
        for _ in range(10):  # some caller audio, so the call is under way
            line.send(np.zeros(512, dtype=np.float32))
            time.sleep(0.03)
        peer.hang_up()
        (closed,) = seen.wait(NoticeKind.CLOSED, timeout=5)
        line.close()
    assert closed.data["by"] == "agent" and line.state is LineState.CLOSED
    assert "the agent closed the WebRTC connection" in closed.detail
    assert seen.of(NoticeKind.FAILED) == []


def test_a_hostile_data_channel_is_bounded_and_inert() -> None:
    escape = "\x1b]0;owned\x07\x1b[31m"
    flood = [json.dumps({"label": "rtvi-ai", "type": f"evil{i}{escape}"}) for i in range(200)]
    with running_peer() as peer:
        peer.to_send += [
            json.dumps({"label": "rtvi-ai", "type": "bot-started-speaking"}),
            json.dumps({"type": "user-transcription", "data": {"text": f"hi{escape}"}}),
            "x" * (80 << 10),  # over the 64 KiB message limit
            b"\x00\x1b[2J",
            "not json " + escape,
            *flood,
        ]
        line = WebRTCLine(peer.url, max_channel_rate=64 << 10)
        line.open(timeout_s=5)
        seen = Notices(line)
        seen.wait(NoticeKind.AGENT_EVENT, count=5, timeout=5)
        time.sleep(0.5)
        line.close()
    notices = seen.of(NoticeKind.AGENT_EVENT) + seen.of(NoticeKind.ERROR)
    text = json.dumps([[n.detail, n.data] for n in seen.seen])
    assert "\x1b" not in text and "\x07" not in text
    speaking = [n for n in notices if n.data.get("kind") == "rtvi:bot-started-speaking"]
    assert len(speaking) == 1 and speaking[0].data["second_opinion"] is True
    assert line.rtvi and line.rtvi[0][1] == "bot-started-speaking"
    assert any(n.data.get("kind") == "too_big" for n in notices)
    assert any(n.data.get("kind") == "not_json" for n in notices)
    # 200 invented event names: at most 20 names shown, the rest only counted.
    invented = [n for n in notices if str(n.data.get("kind", "")).startswith("rtvi:evil")]
    assert len(invented) <= 20
    (summary,) = seen.of(NoticeKind.SUMMARY)
    assert summary.data.get("suppressed_total", 0) >= 150 or summary.data.get("messages_dropped")


def test_ice_servers_come_from_the_environment() -> None:
    assert ice_servers("") == []
    (one, two) = ice_servers("stun:stun.example.org:3478, turn:turn.example.org")
    assert one.urls == ("stun:stun.example.org:3478",) and two.username is None
    (turn,) = ice_servers('[{"urls": ["turn:t.example.org"], "username": "u", "credential": "pw"}]')
    assert turn.credential == "pw"
    for bad in ("http://x", "[1]", '[{"urls": "stun:x", "token": "t"}]', "[nope"):
        with pytest.raises(LineError, match="CUTIN_WEBRTC_ICE_SERVERS"):
            ice_servers(bad)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_cutin_call_says_a_failed_dial_in_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/api/offer"
    result = run_cutin(
        "call", "--agent", f"webrtc:{url}", "--sessions-dir", str(tmp_path),
        env={**os.environ, "CUTIN_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        f"cutin: webrtc: cannot send the offer to {url} (connection refused: nothing listens there)"
    )
    assert not list(tmp_path.glob("*.jsonl"))


def test_the_agent_form_is_checked_before_anything_is_dialled() -> None:
    from sessions.lines.registry import transport_for

    webrtc = transport_for("webrtc:http://127.0.0.1:7860/api/offer")
    assert webrtc is not None and webrtc.kind == "webrtc"
    assert webrtc.parse("webrtc:https://agent.example/api/offer").url == (
        "https://agent.example/api/offer"
    )
    for bad in ("webrtc:ws://127.0.0.1:7860/", "webrtc:http://h:99999/", "webrtc:nothing"):
        with pytest.raises(LineError, match="webrtc"):
            webrtc.parse(bad)


def test_no_secret_reaches_a_notice() -> None:
    from sessions.lines.webrtc_signal import IceServer

    token, credential = "tok-" + "s3cr3t" * 3, "turn-" + "pw" * 8
    with running_peer(answer="garbage") as peer:
        url = f"{peer.url}?token={token}"
        line = WebRTCLine(url, ice=[IceServer(("turn:127.0.0.1:9",), "u", credential)])
        with pytest.raises(LineError) as caught:
            line.open(timeout_s=1.5)  # the TURN server never answers
    said = json.dumps([str(caught.value), line.target, *[n.detail for n in line.notices()]])
    assert token not in said and credential not in said
    assert str(caught.value) == (
        "webrtc: gathering ICE candidates took over 1.5 s (does a STUN/TURN server in"
        " CUTIN_WEBRTC_ICE_SERVERS not answer?)"
    )
