"""Tester's speech onset → agent audio stops: a hands-free microphone barge-in in a
whole real-time call (``cutin call --speech espeak --input mic``), through a
userspace PulseAudio.

The caller's words are played into a second null sink whose monitor is the call's
microphone, a few seconds into each agent turn. Onsets come from the call's
2-channel recording (the microphone audio is on the caller channel, on the call
clock), the stop from where the agent's audio ends. Also: how often STT heard the
keyword, and the logged talk-over (the VAD onset → the stop).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from controls import Tendencies

AGENT_TURN = (
    "Thanks, I have your order open here. It is packed at our warehouse and it has not "
    "gone out yet. The address on file is the Elm Street one from last year. We can still "
    "change it today, at no cost to you."
)
CALLER_WORDS = "Sorry, I need to change my delivery address."
BARGE_INS = 3
ROW = {
    "budget": "tester's speech onset → agent audio stops (hands-free mic barge-in)",
    "target": "— (DESIGN: the cut is at the onset)",
}


def mic_barge_in(tmp: Path, env: dict[str, str], pactl: Callable[..., str]) -> dict[str, object]:
    from cutin_tui.calls.call_setup import open_call
    from sessions.plan import CallPlan
    from sessions.speech.tts import EspeakTts
    from sessions.speech.wav import write_wav
    from tests.voice_call.helpers import Events, read_two_channels, scenario_file
    from tests.voice_call.measure import describe_ms, first_sound_after

    words = EspeakTts(voice="en-gb").synthesize(CALLER_WORDS).audio
    wav = write_wav(tmp / "caller.wav", words)
    module = pactl(
        "load-module", "module-null-sink", "sink_name=micsink", "rate=16000", "channels=1"
    ).strip()
    pactl("set-default-source", "micsink.monitor")
    try:
        plan = CallPlan(
            scenario=scenario_file(tmp / "scenario.toml", *[AGENT_TURN] * (BARGE_INS + 1)),
            tendencies=Tendencies(0.0, 0.0, 0.0),
            sessions_dir=tmp,
            speech="espeak",
            input="mic",
        )
        driver = open_call(plan)
        events = Events(driver)
        try:
            driver.start()
            for turn in range(BARGE_INS):
                events.wait_for(lambda e, n=turn: e.type == "agent_turn_start" and e.turn == n, 30)
                time.sleep(2.5)
                subprocess.run(["paplay", "--device=micsink", str(wav)], env=env, timeout=30)
                events.wait_for(lambda e, n=turn: e.type == "user_turn" and e.turn == n, 30)
        finally:
            driver.stop()
    finally:
        pactl("set-default-source", "vsink.monitor")
        pactl("unload-module", module)
    assert driver.recording_path is not None
    _agent, caller = read_two_channels(driver.recording_path)
    cuts = [e for e in events.of("agent_turn_end") if e.interrupted]
    users = events.of("user_turn")
    stops: list[float] = []
    for cut in cuts:
        onset = first_sound_after(caller, cut.cut_t - 0.5, floor=1e-2)
        if onset is not None:
            stops.append(cut.cut_t + cut.talk_over_s - onset)
    if not stops:
        return {**ROW, "measured": "error", "note": "no barge-in was detected"}
    heard = sum("address" in u.original.lower() for u in users)
    talk_over = statistics.median(c.talk_over_s for c in cuts)
    return {
        **ROW,
        "measured": describe_ms(stops),
        "note": f"{len(stops)} barge-ins 2.5 s into an agent turn; onsets from the call's "
        f"recording (microphone on the caller channel); logged talk-over (VAD onset → stop) "
        f"p50 {talk_over * 1000:.0f} ms; STT (tiny.en) heard 'address' in {heard}/{len(users)}",
    }


def rows() -> list[dict[str, object]]:
    """The rows bench/run.py prints."""
    if shutil.which("espeak-ng") is None or shutil.which("paplay") is None:
        return [{**ROW, "measured": "skipped", "note": "needs espeak-ng and paplay"}]
    from tests.support.pulse import PulseUnavailable, pulse_session

    try:
        with tempfile.TemporaryDirectory(prefix="cutin-voice-mic-") as tmp_name:
            tmp = Path(tmp_name)
            os.environ.setdefault("CUTIN_CACHE_DIR", str(tmp / "cache"))
            with pulse_session(tmp / "pulse") as server:
                return [mic_barge_in(tmp, {**os.environ, **server.env}, server.pactl)]
    except PulseUnavailable as exc:
        return [{**ROW, "measured": "skipped", "note": str(exc)}]
