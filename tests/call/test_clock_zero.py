"""The session log's header is written when the call's clock starts, with that instant.

The far-end measure (a real line, the far end's own wall clock) is in
tests/measures/test_t0_alignment.py; these are the cheap cases around it: the virtual
clock, a real-time call of a simulated agent, a call that never started, old logs.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

from controls.tendencies import Tendencies
from sessions.agents.scripted import ScriptedAgent
from sessions.call.config import CallConfig
from sessions.call.recorder import Recorder
from sessions.call.setup.simulated_call import SimulatedCall, simulated_call
from sessions.call.voice.audio_out import LeadClock
from sessions.callers.users import ScriptedUser
from sessions.clock import ClockZero, RealClock
from sessions.log import read_session
from sessions.log.models import AgentInfo
from sessions.log.writer import dump_line
from sessions.scenarios import load_scenario


def _call(tmp_path: Path, *, virtual: bool = True) -> tuple[Recorder, SimulatedCall]:
    sc = load_scenario("retail-order-change")
    config = CallConfig(scenario=sc, tendencies=Tendencies(0.0, 0.0, 0.0), seed=1)
    recorder = Recorder.create(tmp_path, config, AgentInfo(kind="scripted", name="x"))
    loop = simulated_call(
        config, ScriptedAgent(sc), user=ScriptedUser(sc), listeners=[recorder], virtual=virtual
    )
    return recorder, loop


def _started(header_started_at: str) -> float:
    return dt.datetime.fromisoformat(header_started_at).timestamp()


def test_a_virtual_call_starts_at_its_first_frame_not_when_its_log_was_made(
    tmp_path: Path,
) -> None:
    recorder, loop = _call(tmp_path)
    assert recorder.path.read_text() == ""  # made, but no t = 0 yet
    time.sleep(0.15)
    before = time.time()
    loop.run_virtual(20.0)
    after = time.time()
    recorder.close()
    header = read_session(recorder.path).header
    assert header.clock == "virtual"
    assert header.t0_unix is not None and before <= header.t0_unix <= after
    assert abs(_started(header.started_at) - header.t0_unix) <= 0.0005 + 1e-6


def test_a_real_time_call_is_stamped_with_its_clock_zero(tmp_path: Path) -> None:
    recorder, loop = _call(tmp_path, virtual=False)
    time.sleep(0.15)  # building took a while: the clock starts only now
    mono_before = time.monotonic()
    loop.run_for(0.2)
    recorder.close()
    session = read_session(recorder.path)
    header = session.header
    assert header.clock == "real"
    assert header.t0_unix is not None and header.t0_monotonic is not None
    assert mono_before <= header.t0_monotonic <= mono_before + 0.05
    # The two readings are one instant: wall minus monotonic as this machine has it.
    assert abs((header.t0_unix - header.t0_monotonic) - (time.time() - time.monotonic())) < 0.002
    assert session.events and session.events[-1].type == "end"


def test_a_call_that_never_started_still_leaves_its_header(tmp_path: Path) -> None:
    recorder, _loop = _call(tmp_path)
    recorder.close()
    header = read_session(recorder.path).header
    assert header.scenario == "retail-order-change"
    assert header.t0_unix is None and header.clock is None  # no t = 0 was ever measured


def test_the_new_fields_are_optional_and_unknown_ones_are_kept(tmp_path: Path) -> None:
    old = {
        "type": "header",
        "schema": "cutin.session/1",
        "session_id": "abc",
        "started_at": "2026-01-01T00:00:00.000+00:00",
        "from_the_future": {"kept": True},
    }
    end = {"type": "end", "t": 1.0, "reason": "hangup"}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n" + json.dumps(end) + "\n")
    header = read_session(path).header
    assert header.t0_unix is None and header.t0_monotonic is None and header.clock is None
    written = json.loads(dump_line(header))
    assert written["from_the_future"] == {"kept": True}
    assert "t0_unix" not in written  # an old log is written back as it was
    new = header.model_copy(update={"t0_unix": 1767225600.0, "clock": "real"})
    assert json.loads(dump_line(new))["t0_unix"] == 1767225600.0


def test_clock_zero_is_the_clocks_own_anchor() -> None:
    clock = RealClock()
    assert ClockZero.of(clock).monotonic == clock.t0
    # A voice call's device clock: t = 0 is when call time 0 is heard, not the lead ahead.
    lead = LeadClock(time.monotonic() - 1.0, 0.25)
    zero = ClockZero.of(lead)
    assert zero.monotonic == lead.t0
    assert abs(zero.unix - (time.time() - 1.0)) < 0.002

    class Bare:  # a clock that only tells the time
        def now(self) -> float:
            return 2.0

    bare = ClockZero.of(Bare())
    assert abs(bare.monotonic - (time.monotonic() - 2.0)) < 0.002
    assert not bare.virtual and ClockZero.now().virtual
