"""Quitting a live line call while the agent's ears are seconds behind (a backlog of its
audio still to transcribe, as on a loaded machine) still ends the call: the driver gives
the backlog up instead of leaving the log without its last turn and its ``end``."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from cutin_tui.calls.call_driver import RealtimeDriver
from cutin_tui.calls.call_setup import open_call
from cutin_tui.cli import build_parser
from cutin_tui.cli.call_cmd import call_plan
from sessions.log import read_session
from sessions.settings import Settings
from sessions.speech.packing import PackedTranscriber
from tests.support.known_agent import running_known_agent


class StuckEars:
    """The real transcriber, stuck on its first piece until released (at most 20 s): a
    machine too busy to keep up, at its worst."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.release = threading.Event()

    def transcribe(self, audio: Any, **kw: Any) -> Any:
        self.release.wait(20)
        return self.real.transcribe(audio, **kw)


def _pending(ears: Any) -> int:
    with ears._lock:
        return sum(1 for f in ears._futures if not f.done())


def test_quitting_with_a_transcription_backlog_still_logs_the_end(tmp_path: Path) -> None:
    settings = Settings(sessions_dir=tmp_path / "sessions", cache_dir=tmp_path / "cache")
    with running_known_agent() as agent:
        args = build_parser().parse_args(["call", "--agent", f"twilio:{agent.url}"])
        driver = open_call(call_plan(args, settings), settings)
        assert isinstance(driver, RealtimeDriver)
        ears = driver.loop.far.ears  # type: ignore[attr-defined]
        ears.transcriber = stuck = StuckEars(ears.transcriber)
        # In real time the pieces go to a packing worker: this call's own, stuck too.
        ears.packer = PackedTranscriber(stuck)  # type: ignore[arg-type]
        driver.start()
        try:
            deadline = time.monotonic() + 30
            # A piece of the greeting is with the ears (at its first pause), and stuck.
            while _pending(ears) < 1 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _pending(ears) >= 1, "the agent's greeting must reach the ears"
            began = time.monotonic()
            driver.stop()
            took = time.monotonic() - began
        finally:
            stuck.release.set()
    assert driver.log_path is not None
    events = list(read_session(driver.log_path).events)
    kinds = [e.type for e in events]
    assert kinds[-1] == "end", kinds[-5:]
    assert "agent_turn_end" in kinds
    # Given up after a third of the driver's 3 s, not waited out (which raced the log's close).
    assert took <= 2.2, took
