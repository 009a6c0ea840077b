"""Black-box calls to a real Pipecat bot on loopback, over Twilio Media Streams.

The bot (examples/pipecat_bot.py) runs Silero VAD, faster-whisper tiny.en and espeak-ng
with interruptions on (or off). cutin dials it with the remote loop in real time, as
``cutin call --agent twilio:ws://...`` does, and the log's measurements are checked
against the 2-channel recording the call leaves and against what the bot says it did.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from controls.tendencies import Tendencies
from replay.load import load_paths
from replay.model import Trial
from replay.report.trials import render_html
from sessions.call.config import CallConfig
from sessions.call.engine.engine import CallEngine
from sessions.call.recorder import Recorder
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.callers.users import ScriptedUser
from sessions.lines.twilio import TwilioLine
from sessions.log.models import AgentYield, Event, SpeechInfo
from sessions.log.reader import read_session
from sessions.scenarios import load_scenario
from tests.remote.helpers import first_sound, read_two_channels, stop_after
from tests.replay.report_page import (
    PX_S,
    check_in_browser,
    marks_match_the_log,
    network_references,
    read_page,
)
from tests.support.bot_calls import hang_up_after, yield_after
from tests.support.pipecat_bot import Bot, BotPool

pytestmark = [pytest.mark.audio, pytest.mark.slow]
FRAME = 0.02
"""One 20 ms Twilio media frame: the tolerance between the log and the recording."""


def dial(
    bot: Bot,
    tmp_path: Path,
    *,
    beta: float,
    gamma: float,
    seconds: float,
    done: Callable[[Event], bool],
    count: int = 1,
) -> Path:
    """One real-time call to the bot, hung up 3 s after the ``count``-th event ``done``
    holds for (at most ``seconds`` long); returns the log (its recording is beside it)."""
    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, beta, gamma), seed=2)
    spec = RemoteSpec(agent=f"twilio:{bot.url}", cache_dir=tmp_path / "cache")
    recorder = Recorder.create(
        tmp_path, config, spec.agent_info(scenario.agent.name), speech=spec.speech_info()
    )
    wav = recorder.path.with_suffix(".wav")
    user = ScriptedUser(scenario, barge_in_with_next_line=True)
    loop = build_line_call(spec, config, recording_path=wav, user=user)
    # The one engine steps a Twilio line call, as it steps every other kind.
    assert isinstance(loop, CallEngine) and isinstance(loop.line, TwilioLine)
    loop.listeners.append(recorder)
    hang_up_after(loop, done, 3.0, count=count)
    try:
        loop.run_for(seconds)
    finally:
        recorder.close()
    return recorder.path


def events(log: Path, kind: str) -> list[Event]:
    return [e for e in read_session(log).events if e.type == kind]


def test_barge_in_makes_the_bot_yield_and_the_log_matches_the_recording(
    tmp_path: Path, pipecat_bot: Bot
) -> None:
    bot = pipecat_bot
    log = dial(bot, tmp_path, beta=1.0, gamma=0.0, seconds=40, done=yield_after("interruption"))
    assert bot.said("interrupted"), "the bot never reported being interrupted"
    cuts = events(log, "interruption")
    assert cuts, "β = 1 never barged in on the bot's long answer"
    yields = [e for e in events(log, "agent_yield") if e.after == "interruption"]
    assert yields and yields[0].yielded, yields
    y = yields[0]
    agent, caller = read_two_channels(log.with_suffix(".wav"))
    onset = first_sound(caller, y.onset_t - 0.1)
    stop = stop_after(agent, y.onset_t)
    assert abs(onset - y.onset_t) <= FRAME
    assert abs(stop - y.stop_t) <= FRAME
    assert abs(max(0.0, stop - onset) - y.latency_s) <= FRAME
    assert y.clear_t is not None, "Pipecat's interruption sends Twilio's clear"
    print(f"bot yield latency {y.latency_s:.3f} s; cutin's reaction {cuts[0].reaction_s:.3f} s")
    _report_shows_the_call(log, y, tmp_path)


def _report_shows_the_call(log: Path, y: AgentYield, tmp_path: Path) -> None:
    """The HTML report of this real bot call (issue 30): its timeline's cut and stop marks
    at the logged times (read back from the SVG), the stretch around the yield there to
    hear from the recording, nothing from the network, and Chromium paints it cleanly."""
    (trial,) = load_paths([log])
    assert isinstance(trial, Trial)
    text = render_html([trial])
    page = read_page(text)
    assert marks_match_the_log(page, [log]) >= 2  # the cut and the bot's stop, at least
    assert y.stop_t is not None and any(abs(t - y.stop_t) < PX_S for t in page.of("stop"))
    assert page.audios and any(a.start <= y.onset_t <= a.end for a in page.audios)
    assert all(a.channels == 2 for a in page.audios)
    assert network_references(text) == []
    (tmp_path / "page").mkdir()
    check_in_browser(text, tmp_path / "page", len(page.strips), unfolded=True)


def test_a_bot_with_interruptions_off_does_not_yield(tmp_path: Path, pipecat_bots: BotPool) -> None:
    bot = pipecat_bots.get("--no-interruptions")
    # Two barge-ins it talked through (or 35 s).
    log = dial(
        bot, tmp_path, beta=1.0, gamma=0.0, seconds=35, done=yield_after("interruption"), count=2
    )
    bot.wait_idle()
    yields = [e for e in events(log, "agent_yield") if e.after == "interruption"]
    assert yields, "β = 1 never barged in"
    assert not any(y.yielded for y in yields), yields
    assert all(y.talk_over_s > 0.5 for y in yields)


def test_backchannels_at_gamma_one_give_a_false_yield_figure(
    tmp_path: Path, pipecat_bot: Bot
) -> None:
    log = dial(
        pipecat_bot,
        tmp_path,
        beta=0.0,
        gamma=1.0,
        seconds=40,
        done=yield_after("backchannel", yielded=True),
    )
    pipecat_bot.wait_idle()
    after_bc = [e for e in events(log, "agent_yield") if e.after == "backchannel"]
    assert after_bc, "γ = 1 never backchannelled in the bot's answers"
    false_yields = sum(1 for e in after_bc if e.yielded)
    # Pipecat takes a 0.4 s "mm-hmm" for a barge-in: its VAD needs only 0.2 s of speech.
    assert false_yields >= 1
    print(f"false yields {false_yields}/{len(after_bc)}")


def test_the_header_names_the_line_not_a_secret(tmp_path: Path) -> None:
    spec = RemoteSpec(agent="twilio:wss://user:tok@example.invalid:443/media?token=abc")
    info = spec.agent_info("x")
    assert info.kind == "twilio"
    assert info.base_url == "wss://example.invalid:443/media"
    assert isinstance(spec.speech_info(), SpeechInfo)


def test_simulate_and_audit_a_batch_against_the_bot(tmp_path: Path, pipecat_bots: BotPool) -> None:
    """`cutin simulate --agent twilio:...` files real-time calls like any batch; a second
    run skips them; `cutin audit` reports the agent under test.

    The bot's long greeting (the README tour's) has a pause after 17 words, where β = 1
    cuts in about 7 s into the call: the yield does not wait on the bot hearing the
    caller and answering at length, which under load came after 30 s."""
    import json
    import os

    from tests.support.cli import run_cutin

    out = tmp_path / "batch"
    env = {**os.environ, "CUTIN_CACHE_DIR": str(tmp_path / "cache")}
    args = ["simulate", "--scenario", "retail-order-change", "--beta", "1", "--gamma", "0",
            "--runs", "1", "--max-seconds", "16", "--out", str(out)]  # fmt: skip
    bot = pipecat_bots.get("--long-greeting")
    first = run_cutin(*args, "--agent", f"twilio:{bot.url}", env=env, timeout=180)
    assert first.returncode == 0, first.stderr
    bot.wait_idle()
    again = run_cutin(*args, "--agent", f"twilio:{bot.url}", env=env, timeout=180)
    bot.wait_idle()
    assert again.returncode == 0 and "1 skipped" in again.stderr, again.stderr
    (log,) = out.glob("*.jsonl")
    assert log.with_suffix(".wav").stat().st_size > 44
    session = read_session(log)
    assert session.header.agent.kind == "twilio"
    assert [e for e in session.events if e.type == "agent_yield"]
    # --keep-lagged: a call the machine's load made lag is still this call; what is
    # checked here is that the audit reports the agent under test (tests/batch check
    # that lagged calls are left out by default).
    audit = run_cutin("audit", str(out), "--by", "beta", "--json", "--keep-lagged", env=env)
    assert audit.returncode == 0, audit.stderr
    rows = json.loads(audit.stdout)["agent_under_test"]
    assert rows and rows[0]["yield_total"] >= 1
