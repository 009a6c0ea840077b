"""A call's audio beside its log: ``<log>.wav``, two channels, written while the call runs.

Format: 16-bit PCM WAV at 16 kHz, channel 1 the agent, channel 2 the caller (typed
turns and backchannels as synthesized, or the microphone); sample 0 is t = 0 of
the call clock, so a log time ``t`` is frame ``t × 16000``.

Crash safety: blocks are appended by a writer thread, and after every block the
RIFF and data sizes in the header are rewritten (the stdlib ``wave`` writer does
this when the frame count changed) and the file is flushed, so a killed call
leaves a valid WAV holding everything up to the last block written.
"""

from __future__ import annotations

import queue
import threading
import wave
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE

Audio = npt.NDArray[np.float32]


def recording_path(log_path: Path) -> Path:
    """Where the recording of the call logged at ``log_path`` goes (the replay looks there)."""
    return Path(log_path).with_suffix(".wav")


def interleave(agent: npt.NDArray[np.float32], caller: npt.NDArray[np.float32]) -> bytes:
    """Two equal-length float channels as interleaved little-endian 16-bit frames."""
    both = np.stack([agent, caller], axis=1)
    return (np.clip(both, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()


class CallRecording:
    """Appends (agent, caller) blocks to a 2-channel WAV on a writer thread."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO = open(self.path, "wb")  # noqa: SIM115 -- closed in close()
        self._wave = wave.open(self._file, "wb")  # noqa: SIM115 -- closed in close()
        self._wave.setnchannels(2)
        self._wave.setsampwidth(2)
        self._wave.setframerate(SAMPLE_RATE)
        self._wave.writeframes(b"")  # the header, at once: an empty call is a valid file
        self._file.flush()
        self._queue: queue.Queue[tuple[Audio, Audio] | None] = queue.Queue()
        self.frames = 0
        self.error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="call-recording", daemon=True)
        self._thread.start()

    def push(self, agent: npt.NDArray[np.float32], caller: npt.NDArray[np.float32]) -> None:
        """Queue the next block (both channels the same length); never blocks."""
        if agent.size and not self._closed:
            self._queue.put((agent, caller))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self.error is not None:
                continue
            try:
                self._wave.writeframes(interleave(*item))
                self._file.flush()
                self.frames += item[0].size
            except (OSError, ValueError) as exc:  # a full disk must not stop the call
                self.error = exc

    def close(self) -> None:
        """Write what is queued, finish the header and close the file (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join(timeout=10.0)
        try:
            self._wave.close()
        finally:
            self._file.close()

    @property
    def seconds(self) -> float:
        return self.frames / SAMPLE_RATE
