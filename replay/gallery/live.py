"""Play a gallery example live: the same call loop, on a real (optionally scaled) clock.

The loop runs on its own thread and reports each session-log event through
``on_event`` (called on that thread: a UI must hand it over to its own thread).
Scripted actions are the ones placed on the virtual clock; the call is
deterministic, so they land on the same words in real time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from replay.gallery.runner import GalleryRun, make_loop
from sessions.call.setup.simulated_call import SimulatedCall
from sessions.log.models import Event


class ScaledClock:
    """Seconds since start, times ``speed`` (2.0 plays twice as fast, 0.5 in slow motion)."""

    def __init__(self, speed: float = 1.0) -> None:
        if not 0.05 <= speed <= 50.0:
            raise ValueError(f"speed must be between 0.05 and 50, got {speed}")
        self.speed = speed
        self._t0 = time.monotonic()

    def now(self) -> float:
        return (time.monotonic() - self._t0) * self.speed


class LiveSound(Protocol):
    """Sound for a live play (see :mod:`replay.gallery.sound`)."""

    def prepare(self, run: GalleryRun) -> None:
        """Synthesize everything up front (may take a second)."""

    def start(self, clock: ScaledClock, stop: threading.Event) -> None:
        """Begin playing in step with ``clock`` until ``stop`` is set."""

    def close(self) -> None:
        """Silence what is playing (the device stays open for the next play)."""

    def shutdown(self) -> None:
        """Release the audio device."""


class LivePlay:
    """One live run of an example. ``start()`` returns at once; ``stop()`` ends it."""

    def __init__(
        self,
        run: GalleryRun,
        *,
        on_event: Callable[[Event], None],
        speed: float = 1.0,
        voice: LiveSound | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self.run = run
        self.speed = speed
        self.voice = voice
        self._on_event = on_event
        self._on_error = on_error
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._clock: ScaledClock | None = None
        self.loop: SimulatedCall = make_loop(run.entry, run.actions, [on_event])
        self.finished = threading.Event()

    def now(self) -> float:
        """The example's clock (0 until playing starts)."""
        return self._clock.now() if self._clock is not None else 0.0

    @property
    def playing(self) -> bool:
        return self._thread is not None and not self.finished.is_set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="gallery-play", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            if self.voice is not None:
                try:
                    self.voice.prepare(self.run)
                except Exception as exc:  # no sound is not fatal: the text clock still runs
                    self.voice = None
                    if self._on_error is not None:
                        self._on_error(f"no sound: {exc}")
            if self._stop.is_set():
                return
            self._clock = ScaledClock(self.speed)
            if self.voice is not None:
                self.voice.start(self._clock, self._stop)
            self.loop.run_realtime(self._clock, self._stop)
        except Exception as exc:
            if self._on_error is not None:
                self._on_error(f"play failed: {type(exc).__name__}: {exc}")
        finally:
            if self.voice is not None:
                self.voice.close()
            self.finished.set()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop playing and wait for the thread (the loop logs an end event)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
