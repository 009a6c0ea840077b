"""The real `cutin call --speech espeak` in a real terminal (tmux), playing into the
virtual audio device: type, let backchannels come, hang up, quit; then the log and
the recording beside it."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.log import read_session
from tests.e2e.tmux import Tmux, cutin_binary
from tests.support.pulse import PulseServer
from tests.voice_call.helpers import read_two_channels, rms

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.usefixtures("espeak_ok"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not cutin_binary().exists(), reason="the cutin console script is missing"),
]


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    session = Tmux()
    try:
        yield session
    finally:
        session.close()


def test_a_voice_call_in_the_terminal(
    tmux: Tmux, tmp_path: Path, pulse_server: PulseServer, voice_cache: Path
) -> None:
    argv = [str(cutin_binary()), "call", "--sessions-dir", str(tmp_path), "--speech", "espeak"]
    argv += ["--gamma", "1"]
    env = {"PYTHONUNBUFFERED": "1", "CUTIN_CACHE_DIR": str(voice_cache), **pulse_server.env}
    tmux.start(argv, env, then="echo EXIT=$?")
    tmux.wait_for("Riverside", timeout=60)
    tmux.type("my order is 48213")
    tmux.keys("Enter")
    tmux.wait_for("“my order is 48213”", timeout=40)
    tmux.wait_for(lambda s: re.search(r"backchannels\s+[1-9]", s) is not None, timeout=60)
    tmux.keys("F10")
    tmux.wait_for("call ended (hangup)")
    tmux.keys("C-q")
    after = tmux.wait_for("EXIT=", timeout=30)
    assert "EXIT=0" in after
    found = re.search(r"log: (\S+\.jsonl)", tmux.screen(history=True))
    assert found, tmux.screen(history=True)
    log = read_session(Path(found[1]))
    assert not log.warnings
    assert (log.header.speech.tts, log.header.speech.vad) == ("espeak", "onnx")
    agent, caller = read_two_channels(Path(found[1]).with_suffix(".wav"))
    end = log.events[-1]
    assert end.type == "end" and agent.size / 16000 == pytest.approx(end.t, abs=1.0)
    user = next(e for e in log.events if e.type == "user_turn")
    assert rms(caller, user.t, user.end_t) > 0.01  # type: ignore[attr-defined]
    words = [w for e in log.events if e.type == "agent_words" for w in e.words]  # type: ignore[attr-defined]
    assert sum(rms(agent, w.start, w.end) > 0.005 for w in words) >= 0.9 * len(words)
