"""A black-box call whose line misbehaves: it ends, or goes on, with a logged error.

A scripted Twilio Media Streams agent on loopback (tests/support/twilio_agent.py)
drops the connection, hangs up, or sends malformed messages; the remote loop runs in
real time through the real TwilioLine and must never raise.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from controls.tendencies import Tendencies
from sessions.call.config import CallConfig
from sessions.call.line_parts import RemoteConfig
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.lines.base import LineError
from sessions.log.models import Event
from sessions.scenarios import load_scenario
from tests.support.twilio_agent import AgentCall, TwilioAgent

pytestmark = pytest.mark.audio  # espeak-ng for the caller's voice


def _call(
    url: str, tmp_path: Path, seconds: float = 6.0, remote: RemoteConfig | None = None
) -> tuple[list[Event], str | None]:
    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 0.0, 0.0))
    spec = RemoteSpec(agent=f"twilio:{url}", cache_dir=tmp_path / "cache")
    loop = build_line_call(spec, config, recording_path=tmp_path / "call.wav", remote=remote)
    events: list[Event] = []
    loop.listeners.append(events.append)
    loop.run_for(seconds)
    return events, loop.end_reason


def test_a_dropped_line_ends_the_call_with_a_logged_error(tmp_path: Path) -> None:
    async def drop(call: AgentCall) -> None:
        await call.expect("start")
        await asyncio.sleep(1.0)
        call.ws.transport.abort()  # no close frame: the TCP connection just dies

    with TwilioAgent(drop) as agent:
        events, reason = _call(agent.url, tmp_path)
    assert reason == "line_failed"
    errors = [e for e in events if e.type == "error" and e.where == "line"]
    assert errors and "\n" not in errors[0].message
    assert events[-1].type == "end"
    assert (tmp_path / "call.wav").stat().st_size > 44  # the audio so far is kept


def test_the_agent_hanging_up_ends_the_call(tmp_path: Path) -> None:
    async def hangup(call: AgentCall) -> None:
        await call.expect("start")
        await asyncio.sleep(0.5)
        await call.ws.close(1000, "bye")

    with TwilioAgent(hangup) as agent:
        events, reason = _call(agent.url, tmp_path)
    assert reason == "agent_hangup"
    assert [e.kind for e in events if e.type == "line"][-1] == "closed"


def test_malformed_messages_are_logged_and_the_call_goes_on(tmp_path: Path) -> None:
    async def garbage(call: AgentCall) -> None:
        start = await call.expect("start")
        await call.send("{not json")
        await call.send({"event": "media", "streamSid": start["streamSid"], "media": {}})
        await call.send({"event": "teleport"})
        await call.wait_closed(timeout=30)

    with TwilioAgent(garbage) as agent:
        events, reason = _call(agent.url, tmp_path, seconds=3.0)
        assert agent.calls[0].events("stop"), "hanging up sends Twilio's stop"
    assert reason == "hangup"
    errors = [e for e in events if e.type == "error" and e.where == "line"]
    assert len(errors) >= 2


def test_a_refused_connection_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    scenario = load_scenario("retail-order-change")
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:9/", cache_dir=tmp_path / "cache")
    with pytest.raises(LineError) as info:
        build_line_call(spec, CallConfig(scenario=scenario))
    assert "127.0.0.1:9" in str(info.value) and "\n" not in str(info.value)


def test_a_silent_agent_is_reported_once(tmp_path: Path) -> None:
    async def mute(call: AgentCall) -> None:
        await call.expect("start")
        await call.wait_closed(timeout=30)

    with TwilioAgent(mute) as agent:
        events, reason = _call(agent.url, tmp_path, 3.0, RemoteConfig(silent_agent_s=1.0))
    assert reason == "hangup"
    silent = [e for e in events if e.type == "error" and "no audio" in e.message]
    assert len(silent) == 1 and agent.url.rstrip("/") in silent[0].message
