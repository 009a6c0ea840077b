"""Playback and microphone capture with sounddevice, 16 kHz mono float32.

The PortAudio callbacks only move samples: the player's callback asks its
:class:`~sessions.speech.mixer.Mixer` for the next block, the recorder's callback
puts a copy of each block on a queue. Neither touches a UI, logs, or waits on
anything but the mixer's short lock; consumers (VAD, STT, the call loop) drain the
queues on their own threads.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE
from sessions.speech.devices import AudioUnavailable, import_sounddevice
from sessions.speech.mixer import Mixer, TapBlock

Audio = npt.NDArray[np.float32]


def _describe(device: int | str | None) -> str:
    return "the default device" if device is None else f"device {device!r}"


def _open_stream(
    *,
    output: bool,
    device: int | str | None,
    blocksize: int,
    latency: float | str,
    callback: Callable[..., None],
) -> Any:
    """A started 16 kHz mono float32 output (or input) stream; :class:`AudioUnavailable`
    with a one-line reason if the device can't be opened."""
    sd = import_sounddevice()
    stream_class = sd.OutputStream if output else sd.InputStream
    try:
        stream = stream_class(
            samplerate=SAMPLE_RATE,
            channels=1,
            dtype="float32",
            blocksize=blocksize,
            device=device,
            latency=latency,
            callback=callback,
        )
        stream.start()
    except Exception as exc:  # PortAudioError, ValueError for a bad device, ...
        purpose = "playback" if output else "recording"
        raise AudioUnavailable(f"cannot open {_describe(device)} for {purpose}: {exc}") from None
    return stream


def _latency_s(stream: Any) -> float:
    """PortAudio's latency estimate of an open stream (0 while closed)."""
    return float(stream.latency) if stream is not None else 0.0


class Player:
    """Agent audio out, with backchannels mixed on top; ``stop()`` truncates at once.

    ``tap``: a queue that receives the played *agent* audio block by block (see
    :class:`~sessions.speech.mixer.TapBlock`), for VAD on exactly what was played.
    """

    def __init__(
        self,
        device: int | str | None = None,
        *,
        blocksize: int = 256,
        latency: float | str = "low",
        tap: queue.SimpleQueue[TapBlock] | None = None,
    ) -> None:
        self.device = device
        self.blocksize = blocksize
        self.latency = latency
        self.mixer = Mixer(tap=tap)
        self.underflows = 0
        self.started = threading.Event()
        """Set by the first output callback: the device is really running."""
        self._anchor: tuple[int, float] | None = None
        self._stream: Any = None

    def start(self) -> Player:
        """Open and start the output stream (:class:`AudioUnavailable` if it can't)."""
        if self._stream is None:
            self._stream = _open_stream(
                output=True,
                device=self.device,
                blocksize=self.blocksize,
                latency=self.latency,
                callback=self._callback,
            )
        return self

    def _callback(self, outdata: Any, frames: int, _time: Any, status: Any) -> None:
        if status.output_underflow:
            self.underflows += 1
        # One tuple assignment: readers on other threads see a consistent pair.
        self._anchor = (self.mixer.rendered_samples, time.monotonic())
        outdata[:, 0] = self.mixer.render(frames)
        self.started.set()

    def heard_at(self, index: int) -> float | None:
        """Estimated ``time.monotonic()`` when output-stream sample ``index`` reaches the
        speaker (None before the first callback). Maps tap/pause times to the call clock."""
        anchor = self._anchor
        if anchor is None:
            return None
        rendered, at = anchor
        return at + (index - rendered) / SAMPLE_RATE + self.output_latency_s

    @property
    def output_latency_s(self) -> float:
        """PortAudio's estimate of the time from render to the speaker."""
        return _latency_s(self._stream)

    # The agent's turn -------------------------------------------------------
    def play(self, audio: npt.NDArray[Any], *, more_coming: bool = False) -> None:
        """Play a turn from its start (``more_coming``: chunks will follow via ``append``)."""
        self.mixer.play(audio, more_coming=more_coming)

    def append(self, audio: npt.NDArray[Any]) -> None:
        self.mixer.append(audio)

    def finish(self) -> None:
        self.mixer.finish()

    def stop(self) -> float:
        """Cut the agent's audio now; returns seconds of the turn that were played."""
        return self.mixer.stop()

    @property
    def position_s(self) -> float:
        """Seconds of the current turn handed to the device so far."""
        return self.mixer.position_s

    @property
    def playing(self) -> bool:
        return self.mixer.main_active

    # Tokens ---------------------------------------------------------------
    def mix(self, samples: npt.NDArray[Any], token: str = "") -> None:
        """Mix a (backchannel) token on top, starting with the next block."""
        self.mixer.overlay(samples, token)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until turn and tokens are rendered, then for the device latency."""
        done = self.mixer.idle.wait(timeout)
        if done:
            time.sleep(self.output_latency_s)
        return done

    def close(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            stream.abort()
            stream.close()

    def __enter__(self) -> Player:
        return self.start()

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class RecordedBlock:
    index: int
    """Input-stream sample index of the block's first sample."""
    samples: Audio
    received: float
    """``time.monotonic()`` when the callback ran (ADC time + input latency, roughly)."""


class MicRecorder:
    """Microphone in: every block goes onto :attr:`blocks` as a :class:`RecordedBlock`."""

    def __init__(
        self,
        device: int | str | None = None,
        *,
        blocksize: int = 512,
        latency: float | str = "low",
        blocks: queue.Queue[RecordedBlock] | None = None,
    ) -> None:
        self.device = device
        self.blocksize = blocksize
        self.latency = latency
        self.blocks: queue.Queue[RecordedBlock] = blocks if blocks is not None else queue.Queue()
        self.overflows = 0
        self.started = threading.Event()
        """Set by the first input callback (a first stream can take a second or two)."""
        self._index = 0
        self._stream: Any = None

    def start(self) -> MicRecorder:
        """Open and start the input stream (:class:`AudioUnavailable` if it can't)."""
        if self._stream is None:
            self._stream = _open_stream(
                output=False,
                device=self.device,
                blocksize=self.blocksize,
                latency=self.latency,
                callback=self._callback,
            )
        return self

    def _callback(self, indata: Any, frames: int, _time: Any, status: Any) -> None:
        if status.input_overflow:
            self.overflows += 1
        block = RecordedBlock(self._index, indata[:, 0].copy(), time.monotonic())
        self._index += frames
        self.blocks.put_nowait(block)
        self.started.set()

    @property
    def input_latency_s(self) -> float:
        return _latency_s(self._stream)

    def drain(self) -> list[RecordedBlock]:
        """Every block queued so far (non-blocking)."""
        out: list[RecordedBlock] = []
        while True:
            try:
                out.append(self.blocks.get_nowait())
            except queue.Empty:
                return out

    def stop(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            stream.stop()
            stream.close()

    def __enter__(self) -> MicRecorder:
        return self.start()

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.stop()


def join_blocks(blocks: list[RecordedBlock]) -> Audio:
    """The samples of consecutive blocks as one array."""
    if not blocks:
        return np.zeros(0, dtype=np.float32)
    return np.concatenate([b.samples for b in blocks])
