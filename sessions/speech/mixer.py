"""The sample mixer behind :class:`sessions.speech.audio.Player`, free of any device.

One *main voice* (the agent's turn: a buffer, possibly still growing as audio
streams in) plus any number of *overlays* (backchannel tokens) summed on top.
``render(n)`` is what the output callback calls: it only slices and adds arrays
it already holds; control calls from other threads take the same short lock,
so ``stop()`` is exact: it returns how much of the turn was handed to the device,
and nothing of the turn is rendered after it.

``tap``: every rendered block's *main voice only* (zeros when the agent is silent)
goes into this queue with its output-stream sample index, so a consumer can run
streaming VAD on exactly what was played without hearing the mixed-in tokens.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE

Audio = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class TapBlock:
    index: int
    """Output-stream sample index of the block's first sample."""
    samples: Audio


@dataclass(frozen=True, slots=True)
class OverlayStart:
    """When an overlay's first sample was rendered (output-stream sample index)."""

    token: str
    index: int


class Mixer:
    """Main voice + overlays, rendered block by block."""

    def __init__(self, *, tap: queue.SimpleQueue[TapBlock] | None = None) -> None:
        self.tap = tap
        self._lock = threading.Lock()
        self._main: deque[Audio] = deque()
        self._main_offset = 0  # samples of _main[0] already rendered
        self._turn_pos = 0  # samples of the current turn rendered
        self._turn_open = False  # more main audio may still arrive
        self._overlays: list[tuple[str, Audio, int]] = []  # (token, samples, rendered)
        self._rendered = 0  # output-stream samples rendered so far
        self.overlay_starts: queue.SimpleQueue[OverlayStart] = queue.SimpleQueue()
        self.idle = threading.Event()
        self.idle.set()

    # -- control (any thread) -------------------------------------------------
    def play(self, audio: npt.NDArray[Any], *, more_coming: bool = False) -> None:
        """Start a new turn with ``audio`` (replacing whatever was playing)."""
        chunk = np.asarray(audio, dtype=np.float32).reshape(-1)
        with self._lock:
            self._main = deque([chunk]) if chunk.size else deque()
            self._main_offset = 0
            self._turn_pos = 0
            self._turn_open = more_coming
            self._update_idle()

    def append(self, audio: npt.NDArray[Any]) -> None:
        """Add streamed audio to the current turn (call :meth:`finish` after the last)."""
        chunk = np.asarray(audio, dtype=np.float32).reshape(-1)
        with self._lock:
            if chunk.size:
                self._main.append(chunk)
            self._update_idle()

    def finish(self) -> None:
        """No more audio will be appended to this turn."""
        with self._lock:
            self._turn_open = False
            self._update_idle()

    def overlay(self, samples: npt.NDArray[Any], token: str = "") -> None:
        """Mix ``samples`` on top, starting with the next rendered block."""
        arr = np.asarray(samples, dtype=np.float32).reshape(-1)
        with self._lock:
            self._overlays.append((token, arr, 0))
            self._update_idle()

    def stop(self) -> float:
        """Stop the main voice now; returns seconds of the turn that were rendered."""
        with self._lock:
            self._main.clear()
            self._main_offset = 0
            self._turn_open = False
            pos = self._turn_pos
            self._update_idle()
        return pos / SAMPLE_RATE

    def stop_overlays(self) -> None:
        with self._lock:
            self._overlays.clear()
            self._update_idle()

    # -- state ----------------------------------------------------------------
    @property
    def position_s(self) -> float:
        """Seconds of the current turn handed to the device so far."""
        return self._turn_pos / SAMPLE_RATE

    @property
    def rendered_samples(self) -> int:
        return self._rendered

    @property
    def main_active(self) -> bool:
        """The agent's turn is playing (or waiting for streamed audio)."""
        return bool(self._main) or self._turn_open

    def _update_idle(self) -> None:
        if self._main or self._turn_open or self._overlays:
            self.idle.clear()
        else:
            self.idle.set()

    # -- the audio thread --------------------------------------------------------
    def render(self, n: int) -> Audio:
        """The next ``n`` output samples (main voice + overlays, clipped to [-1, 1])."""
        main = np.zeros(n, dtype=np.float32)
        with self._lock:
            start_index = self._rendered
            filled = 0
            while filled < n and self._main:
                head = self._main[0]
                take = min(n - filled, head.size - self._main_offset)
                main[filled : filled + take] = head[self._main_offset : self._main_offset + take]
                filled += take
                self._main_offset += take
                if self._main_offset >= head.size:
                    self._main.popleft()
                    self._main_offset = 0
            self._turn_pos += filled
            mixing = bool(self._overlays)
            out = main.copy() if mixing else main
            kept: list[tuple[str, Audio, int]] = []
            for token, samples, done in self._overlays:
                if done == 0:
                    self.overlay_starts.put(OverlayStart(token, start_index))
                take = min(n, samples.size - done)
                out[:take] += samples[done : done + take]
                if done + take < samples.size:
                    kept.append((token, samples, done + take))
            self._overlays = kept
            self._rendered += n
            self._update_idle()
        if self.tap is not None:
            self.tap.put(TapBlock(start_index, main))
        if mixing:
            np.clip(out, -1.0, 1.0, out=out)
        return out
