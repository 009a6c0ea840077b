"""A call's audio beside its log: ``<log>.wav``, two channels, written while the call runs.

Format: 16-bit PCM WAV at 16 kHz, channel 1 the agent, channel 2 the caller (typed
turns and backchannels as synthesized, or the microphone); sample 0 is t = 0 of
the call clock, so a log time ``t`` is frame ``t × 16000``.

Written in blocks, not frames: :meth:`CallRecording.push` only keeps the frame (no
I/O, no conversion on the caller's thread, which is the real-time pump's), and one
writer thread shared by every recording of the process appends what each has kept
every :data:`BLOCK_S` as one block (one interleave, one write, one header update).

Crash safety: after every block the RIFF and data sizes in the header are rewritten
(the stdlib ``wave`` writer does this when the frame count changed) and the file is
flushed, so a killed call leaves a valid WAV holding everything up to the last block
written (at most :data:`BLOCK_S` before the kill).
"""

from __future__ import annotations

import threading
import time
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


BLOCK_S = 0.5
"""How often the shared writer appends each recording's kept frames as one block."""


class _BlockWriter:
    """The one thread that writes every open recording's kept frames, each
    :data:`BLOCK_S`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[CallRecording] = []
        self._thread: threading.Thread | None = None

    def add(self, rec: CallRecording) -> None:
        with self._lock:
            self._open.append(rec)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="cutin-recordings", daemon=True
                )
                self._thread.start()

    def remove(self, rec: CallRecording) -> None:
        with self._lock:
            if rec in self._open:
                self._open.remove(rec)

    def _run(self) -> None:
        while True:
            time.sleep(BLOCK_S)
            with self._lock:
                recordings = list(self._open)
            for rec in recordings:
                rec.write_kept()


_WRITER = _BlockWriter()


class CallRecording:
    """Keeps (agent, caller) frames and appends them to a 2-channel WAV in blocks."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO = open(self.path, "wb")  # noqa: SIM115 -- closed in close()
        wav = wave.open(self._file, "wb")  # noqa: SIM115 -- closed in close()
        wav.setnchannels(2)
        wav.setsampwidth(2)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(b"")  # the header, at once: an empty call is a valid file
        self._file.flush()
        self._wave: wave.Wave_write | None = wav
        self._kept: list[tuple[Audio, Audio]] = []
        self._kept_lock = threading.Lock()
        """Held only to append or swap the kept list (never across I/O)."""
        self._io_lock = threading.Lock()
        """Orders the blocks: the shared writer's and :meth:`close`'s."""
        self.frames = 0
        self.error: BaseException | None = None
        self._closed = False
        _WRITER.add(self)

    def push(self, agent: npt.NDArray[np.float32], caller: npt.NDArray[np.float32]) -> None:
        """Keep the next frames (both channels the same length) for the next block;
        never blocks on I/O."""
        if agent.size and not self._closed:
            with self._kept_lock:
                self._kept.append((agent, caller))

    def write_kept(self) -> None:
        """Append what was kept since the last block as one block (the shared writer's
        thread, and :meth:`close`); a write error is kept, not raised: a full disk
        must not stop the call."""
        with self._io_lock:
            with self._kept_lock:
                kept, self._kept = self._kept, []
            if not kept or self.error is not None or self._wave is None:
                return
            agent = np.concatenate([a for a, _ in kept]) if len(kept) > 1 else kept[0][0]
            caller = np.concatenate([c for _, c in kept]) if len(kept) > 1 else kept[0][1]
            try:
                self._wave.writeframes(interleave(agent, caller))
                self._file.flush()
                self.frames += agent.size
            except (OSError, ValueError) as exc:
                self.error = exc

    def close(self) -> None:
        """Write what is kept, finish the header and close the file (idempotent)."""
        if self._closed:
            return
        self._closed = True
        _WRITER.remove(self)
        self.write_kept()
        with self._io_lock:
            wav, self._wave = self._wave, None
            try:
                if wav is not None:
                    wav.close()
            finally:
                self._file.close()

    @property
    def seconds(self) -> float:
        return self.frames / SAMPLE_RATE
