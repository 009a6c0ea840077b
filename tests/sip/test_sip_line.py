"""Real SIP calls from the SIP line to a real PJSIP far end on loopback.

The far end (tests/support/sip_agent.py) is a second PJSIP endpoint in its own process;
without ``--bot`` it echoes what it hears 0.2 s later, so what the caller hears back is
known by construction. Each refusal mode answers the INVITE as a real SIP peer would.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from sessions.lines.base import LineError, LineState, NoticeKind
from sessions.lines.sip.line import SipLine
from sessions.lines.sip.uri import SipAccount
from tests.sip.far_end import sip_far_end

RATE = 16_000
FRAME = 512


def _tone(seconds: float, hz: float = 300.0, level: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (level * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def _talk(line: SipLine, audio: np.ndarray, seconds: float) -> np.ndarray:
    """Send ``audio`` then silence for ``seconds`` in real time; what came back."""
    heard = []
    start = time.monotonic()
    total = int(seconds * RATE)
    for i in range(0, total, FRAME):
        chunk = audio[i : i + FRAME]
        if chunk.size < FRAME:
            chunk = np.concatenate([chunk, np.zeros(FRAME - chunk.size, np.float32)])
        line.send(chunk)
        heard.append(line.take(FRAME))
        due = start + (i + FRAME) / RATE
        time.sleep(max(0.0, due - time.monotonic()))
    return np.concatenate(heard)


def _rms(audio: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) if audio.size else 0.0


def _no_account() -> SipAccount:
    return SipAccount()


def test_a_call_carries_audio_both_ways_sends_dtmf_in_order_and_ends_with_bye() -> None:
    with sip_far_end() as far:
        line = SipLine(f"sip:agent@127.0.0.1:{far.port}", account=_no_account())
        line.open(15.0)
        try:
            assert line.state is LineState.OPEN
            assert line.codec.upper().startswith("PCMU")  # PCMU is offered first
            far.wait_line("answered PCMU")
            heard = _talk(line, _tone(1.0), 3.0)
            line.send_dtmf("1#9*")
            line.send_dtmf("0")
            for digit in "1#9*0":
                far.wait_line(f"dtmf {digit}")
        finally:
            line.close()
        far.wait_line("ended by=caller code=200")  # our BYE, answered 200 OK
    # The echo: a 0.3 tone (RMS 0.212) comes back through G.711 twice, then silence.
    windows = [_rms(heard[i : i + RATE // 10]) for i in range(0, heard.size, RATE // 10)]
    assert max(windows) == pytest.approx(0.212, abs=0.03), windows
    assert windows[-1] < 0.01, "the echo never ended"
    assert [d for d in far.said("dtmf ")] == ["dtmf 1", "dtmf #", "dtmf 9", "dtmf *", "dtmf 0"]
    kinds = [n.kind for n in line.notices()]
    assert kinds[:2] == [NoticeKind.OPEN, NoticeKind.FORMAT]
    assert kinds.count(NoticeKind.DTMF) == 2
    assert kinds[-1] is NoticeKind.CLOSED
    assert line.state is LineState.CLOSED


def test_the_agent_hanging_up_closes_the_line_cleanly() -> None:
    with sip_far_end("--hangup-after", "1.0") as far:
        line = SipLine(f"sip:agent@127.0.0.1:{far.port}", account=_no_account())
        line.open(15.0)
        deadline = time.monotonic() + 20
        while line.state is LineState.OPEN and time.monotonic() < deadline:
            line.send(np.zeros(FRAME, np.float32))
            time.sleep(0.032)
        far.wait_line("ended by=agent")
        line.close()
    notices = line.notices()
    assert line.state is LineState.CLOSED
    assert notices[-1].kind is NoticeKind.CLOSED and notices[-1].data["by"] == "agent"
    assert "BYE" in notices[-1].detail


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        (("--busy",), "is busy (486 Busy Here)"),
        (("--not-found",), "does not exist there (404 Not Found)"),
        (("--no-answer",), "rang but nobody answered within 3 s"),
        (("--codecs", "G722/16000"), "accepts neither PCMU nor PCMA (488"),
    ],
    ids=["busy", "not-found", "no-answer", "codec-mismatch"],
)
def test_a_call_that_cannot_start_fails_open_with_one_line(
    mode: tuple[str, ...], words: str
) -> None:
    with sip_far_end(*mode) as far:
        target = f"sip:agent@127.0.0.1:{far.port}"
        line = SipLine(target, account=_no_account())
        with pytest.raises(LineError) as failed:
            line.open(3.0)
        if mode == ("--no-answer",):
            far.wait_line("ended by=caller code=487")  # cutin's CANCEL ended the ringing
    message = str(failed.value)
    assert words in message, message
    assert message.startswith(f"sip: {target}") and "\n" not in message
    assert line.state is LineState.FAILED
    (notice,) = line.notices()
    assert notice.kind is NoticeKind.FAILED and notice.detail == message


def test_nobody_listening_is_one_line_and_the_password_never_shows() -> None:
    with sip_far_end() as far:
        port = far.port  # a port that was a SIP agent's and is free again
    line = SipLine(f"sip:cutin:hunter2pass@127.0.0.1:{port}", account=_no_account())
    assert "hunter2pass" not in line.target
    with pytest.raises(LineError) as failed:
        line.open(2.0)
    message = str(failed.value)
    assert "\n" not in message and "hunter2pass" not in message
    assert message.startswith("sip: ") and "127.0.0.1" in message, message
    assert all("hunter2pass" not in n.detail for n in line.notices())
