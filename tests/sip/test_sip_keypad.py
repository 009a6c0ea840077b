"""A scenario's keypad steps over a real SIP call, and the SIP line's summary.

``cutin simulate --agent sip:...`` (the real program, as a child) calls the loopback
PJSIP far end (tests/support/sip_agent.py, which prints every RFC 4733 digit it
receives, in order, and echoes the caller's audio 0.2 s later). The scenario speaks,
presses 1, speaks, keys in 4417#: the far end must receive exactly 1 4 4 1 7 #, and the
log must hold each step as the ``dtmf`` line event the call screen's key gives, between
the caller's spoken turns.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sessions.lines.base import LineState, NoticeKind
from sessions.lines.sip.line import SipLine
from sessions.lines.sip.uri import SipAccount
from sessions.log import read_session
from sessions.log.models import EndEvent, LineEvent, UserTurn
from tests.sip.far_end import sip_far_end
from tests.support.cli import run_cutin

IVR = """
name = "ivr-steps"
title = "Speak, press 1, speak, key in an account number"
[agent]
name = "the menu"
turns = [{ text = "Welcome." }]
[user]
goal = "reach billing"
persona = "knows the menu"
turns = [
  "Hello, I would like to check my balance please.",
  { dtmf = "1" },
  "My account number is next.",
  { dtmf = "4417#" },
]
"""


@pytest.mark.audio
@pytest.mark.slow
def test_a_scripted_caller_presses_its_keypad_steps_in_order_on_a_sip_call(
    tmp_path: Path,
) -> None:
    scenario = tmp_path / "ivr.toml"
    scenario.write_text(IVR, encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "CUTIN_CACHE_DIR": str(tmp_path / "cache")}
    started = time.monotonic()
    with sip_far_end() as far:
        result = run_cutin(
            "simulate", "--agent", f"sip:agent@127.0.0.1:{far.port}", "--scenario",
            str(scenario), "--alpha", "0", "--beta", "0", "--gamma", "0",
            "--max-seconds", "60", "--out", str(out), env=env, timeout=180,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        far.wait_line("ended by=caller code=200")  # the caller hung up with a BYE
        received = [line.removeprefix("dtmf ") for line in far.said("dtmf ")]
    print(f"SIP keypad call: {time.monotonic() - started:.1f} s")
    assert received == list("14417#"), received

    (log,) = out.glob("*.jsonl")
    session = read_session(log)
    assert session.header.agent.kind == "sip"
    events = [e for e in session.events if isinstance(e, UserTurn | LineEvent)]
    steps = [
        ("dtmf", e.data["digits"]) if isinstance(e, LineEvent) else ("say", e.original)
        for e in events
        if isinstance(e, UserTurn) or e.kind == "dtmf"
    ]
    assert steps == [
        ("say", "Hello, I would like to check my balance please."),
        ("dtmf", "1"),
        ("say", "My account number is next."),
        ("dtmf", "4417#"),
    ], steps
    dtmf = [e for e in session.of(LineEvent) if e.kind == "dtmf"]
    assert [e.detail for e in dtmf] == ["sent DTMF 1", "sent DTMF 4417#"]
    assert not [e for e in session.events if e.type == "error" and "dtmf" in str(e)]
    assert session.of(EndEvent)[-1].reason == "user_hangup"


def _line() -> SipLine:
    return SipLine("sip:agent@127.0.0.1:9", account=SipAccount())


def test_the_sip_line_ends_with_a_summary_of_what_it_held_back() -> None:
    """As every line does (sessions/lines/notices.py): PJSIP's warnings past three are
    only counted, caller frames the worker's pipe could not take are counted, and the
    ``summary`` notice before the last one says how many."""
    line = _line()
    for i in range(7):
        line._on_event({"event": "log", "text": f"warning {i}"})
    line.frames_dropped = 4
    line._end(LineState.CLOSED, "hung up", {"by": "cutin"})
    notices = line.notices()
    kinds = [n.kind for n in notices]
    assert kinds == [NoticeKind.ERROR] * 4 + [NoticeKind.SUMMARY, NoticeKind.CLOSED]
    assert "more of the same (sip_log)" in notices[3].detail
    summary = notices[-2]
    assert summary.data["suppressed"] == {"error:sip_log": 4}  # the 4th to the 7th
    assert summary.data["caller_frames_dropped"] == 4
    assert summary.detail == "held back: 4 notices only counted, 4 caller frames dropped"

    calm = _line()
    calm._end(LineState.CLOSED, "hung up", {"by": "cutin"})
    assert [n.kind for n in calm.notices()] == [NoticeKind.CLOSED]  # nothing held back
