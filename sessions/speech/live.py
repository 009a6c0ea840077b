"""Pause detection on the audio a :class:`~sessions.speech.audio.Player` actually plays.

The player's tap delivers every rendered block of agent audio; :class:`PlaybackPauses`
drains it on its own thread, runs streaming VAD + the pause detector, and hands each
pause event to ``on_event`` (on that thread — never the audio callback's). A call
loop posts the event to itself and decides; a backchannel is then ``player.mix(token)``
and starts with the next rendered block.

Event times are on the *output-stream clock*: seconds of audio rendered since the
player's stream started (``TapBlock.index / 16 kHz``). The sound reaches the
speaker about ``player.output_latency_s`` after it is rendered.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from controls import PauseEvent
from sessions.speech import SAMPLE_RATE
from sessions.speech.mixer import TapBlock
from sessions.speech.vad import FrameVad, PauseSettings, StreamingPauses, VadFrame

PauseHandler = Callable[[PauseEvent], None]


class PlaybackPauses:
    """A worker thread: tap blocks in, pause events out (``on_event``)."""

    def __init__(
        self,
        tap: queue.SimpleQueue[TapBlock],
        on_event: PauseHandler,
        *,
        vad: FrameVad | None = None,
        settings: PauseSettings | None = None,
        keep_frames: bool = False,
    ) -> None:
        self.tap = tap
        self.on_event = on_event
        self._pauses = StreamingPauses(vad, settings or PauseSettings(), keep_frames=keep_frames)
        self._started = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.events: list[PauseEvent] = []
        self.error: BaseException | None = None

    @property
    def frames(self) -> list[VadFrame]:
        """VAD frames seen so far (only with ``keep_frames``), e.g. for talk-over."""
        return self._pauses.frames

    def feed(self, block: TapBlock) -> list[PauseEvent]:
        """Process one block now (what the thread does; usable without it, in tests)."""
        if not self._started:
            self._pauses.reset(block.index / SAMPLE_RATE)
            self._started = True
        events = self._pauses.push(block.samples)
        for ev in events:
            self.events.append(ev)
            self.on_event(ev)
        return events

    def start(self) -> PlaybackPauses:
        self._thread = threading.Thread(target=self._run, name="playback-pauses", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    block = self.tap.get(timeout=0.05)
                except queue.Empty:
                    continue
                self.feed(block)
        except BaseException as exc:  # reported to the owner, never lost in a thread
            self.error = exc

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
