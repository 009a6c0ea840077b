"""Silero VAD v6 feeding the pause detector, streaming and whole-file alike.

The default backend runs the ONNX model file that faster-whisper ships
(``faster_whisper/assets/silero_vad_v6.onnx``) with onnxruntime: each 32 ms frame
is the last 64 samples of the previous frame (zeros at the start) followed by 512
new samples, and the LSTM state ``h``/``c`` (1×1×128 each) is carried from frame to
frame. The model takes a *sequence* of such rows, so a whole file runs in a few
batched calls; streaming runs the same core on whatever frames are complete, and the
two give bit-identical probabilities (tests assert it).

The optional ``silero-torch`` backend uses the ``silero-vad`` package (extra
``cutin[silero]``), never installed by default.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from controls import PauseDetector, PauseEvent
from sessions.speech import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE

Audio = npt.NDArray[np.float32]

CONTEXT_SAMPLES = 64
"""Samples of the previous frame prepended to each frame (Silero v5/v6 at 16 kHz)."""

VAD_BACKENDS = ("onnx", "silero-torch")
MODEL_FILE = "silero_vad_v6.onnx"
_BATCH_FRAMES = 1024  # rows per onnxruntime call on a whole file (memory, not accuracy)


class VadError(RuntimeError):
    """The VAD backend cannot run (model file or optional package missing)."""


class FrameVad(Protocol):
    """A stateful VAD: probabilities for consecutive 512-sample frames at 16 kHz."""

    name: str

    def reset(self) -> None:
        """Forget the stream: zero context and recurrent state."""

    def run(self, frames: Audio) -> Audio:
        """Speech probabilities for ``frames`` (n × 512), continuing the stream."""


def silero_model_path() -> Path:
    """Locate Silero VAD v6 inside the installed faster-whisper (without importing it)."""
    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        raise VadError("the onnx VAD needs the faster-whisper package: pip install faster-whisper")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "assets" / MODEL_FILE
        if candidate.is_file():
            return candidate
    raise VadError(
        f"{MODEL_FILE} is not in this faster-whisper install; "
        "pip install 'faster-whisper>=1.1' (it ships the model file)"
    )


_sessions: dict[Path, Any] = {}
_sessions_lock = threading.Lock()


def _onnx_session(path: Path) -> Any:
    """The process's onnxruntime session for ``path`` (loaded on first use)."""
    with _sessions_lock:
        session = _sessions.get(path)
        if session is None:
            import onnxruntime as ort

            opts = ort.SessionOptions()
            # One thread: frames are tiny, and the audio callback must not be starved.
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            session = ort.InferenceSession(
                str(path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
            _sessions[path] = session
        return session


class SileroOnnxVad:
    """Silero VAD v6 on onnxruntime, one thread, state carried across calls."""

    name = "onnx"

    def __init__(self, model_path: str | Path | None = None) -> None:
        path = Path(model_path) if model_path is not None else silero_model_path()
        # One loaded session per model file in the process, shared by every call (an
        # onnxruntime session may be run from several threads); the LSTM state and the
        # context, which make a stream, are this object's own.
        self._session: Any = _onnx_session(path)
        self.model_path = path
        self.reset()

    def reset(self) -> None:
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(CONTEXT_SAMPLES, dtype=np.float32)

    def run(self, frames: Audio) -> Audio:
        frames = np.ascontiguousarray(frames, dtype=np.float32).reshape(-1, FRAME_SAMPLES)
        n = frames.shape[0]
        if n == 0:
            return np.zeros(0, dtype=np.float32)
        rows = np.empty((n, CONTEXT_SAMPLES + FRAME_SAMPLES), dtype=np.float32)
        rows[:, CONTEXT_SAMPLES:] = frames
        rows[0, :CONTEXT_SAMPLES] = self._context
        rows[1:, :CONTEXT_SAMPLES] = frames[:-1, -CONTEXT_SAMPLES:]
        probs, self._h, self._c = self._session.run(
            None, {"input": rows, "h": self._h, "c": self._c}
        )
        self._context = frames[-1, -CONTEXT_SAMPLES:].copy()
        return np.asarray(probs, dtype=np.float32).reshape(n)


class SileroTorchVad:
    """Silero VAD through the optional ``silero-vad`` (torch) package."""

    name = "silero-torch"

    def __init__(self) -> None:
        try:
            # By name: torch is an optional extra, absent from most installs (and from mypy).
            torch = importlib.import_module("torch")
            silero_vad = importlib.import_module("silero_vad")
        except ImportError:
            raise VadError(
                "--vad silero-torch needs the optional extra: pip install 'cutin[silero]' "
                "(it pulls torch; the default --vad onnx needs nothing more)"
            ) from None
        self._torch: Any = torch
        self._model: Any = silero_vad.load_silero_vad()
        self.reset()

    def reset(self) -> None:
        self._model.reset_states()

    def run(self, frames: Audio) -> Audio:
        frames = np.ascontiguousarray(frames, dtype=np.float32).reshape(-1, FRAME_SAMPLES)
        out = np.empty(frames.shape[0], dtype=np.float32)
        with self._torch.no_grad():
            for i, frame in enumerate(frames):
                # The package's model keeps its own 64-sample context and state.
                out[i] = float(self._model(self._torch.from_numpy(frame.copy()), SAMPLE_RATE))
        return out


def load_vad(backend: str = "onnx") -> FrameVad:
    """A fresh VAD for ``backend`` (``onnx`` or ``silero-torch``); :class:`VadError` if unusable."""
    if backend == "onnx":
        return SileroOnnxVad()
    if backend == "silero-torch":
        return SileroTorchVad()
    raise VadError(f"unknown VAD backend {backend!r} (choose from {', '.join(VAD_BACKENDS)})")


@dataclass(frozen=True, slots=True)
class VadFrame:
    t: float
    """Frame start, seconds on the stream's clock."""
    prob: float


@dataclass(frozen=True, slots=True)
class PauseSettings:
    """The pause detector's knobs, in the units the CLI uses."""

    pause_ms: float = 200.0
    turn_end_ms: float = 500.0
    speech_threshold: float = 0.5
    silence_threshold: float = 0.35

    def detector(self) -> PauseDetector:
        """A fresh ``controls.PauseDetector`` with these settings and 32 ms frames."""
        return PauseDetector(
            frame_s=FRAME_S,
            speech_threshold=self.speech_threshold,
            silence_threshold=self.silence_threshold,
            short_pause_s=self.pause_ms / 1000.0,
            turn_end_s=self.turn_end_ms / 1000.0,
        )


class StreamingVad:
    """Frames a live sample stream into 512-sample VAD frames with timestamps.

    ``push`` takes any number of samples and returns the frames they complete;
    ``flush`` zero-pads a trailing partial frame (what the whole-file function does
    with a file's tail).
    """

    def __init__(self, vad: FrameVad | None = None, *, t0: float = 0.0) -> None:
        self.vad: FrameVad = vad if vad is not None else load_vad()
        self.t0 = t0
        self._pending = np.zeros(0, dtype=np.float32)
        self._frames_done = 0
        self.vad.reset()

    def reset(self, t0: float = 0.0) -> None:
        """Start a new stream at ``t0`` (the model state is cleared too)."""
        self.vad.reset()
        self.t0 = t0
        self._pending = np.zeros(0, dtype=np.float32)
        self._frames_done = 0

    @property
    def frames_done(self) -> int:
        return self._frames_done

    @property
    def time(self) -> float:
        """Stream time at the end of the last complete frame."""
        return self.t0 + self._frames_done * FRAME_S

    def push(self, samples: npt.NDArray[Any]) -> list[VadFrame]:
        """Add samples; returns one :class:`VadFrame` per newly completed frame."""
        new = np.asarray(samples, dtype=np.float32).reshape(-1)
        data = np.concatenate([self._pending, new]) if self._pending.size else new
        n = data.size // FRAME_SAMPLES
        self._pending = data[n * FRAME_SAMPLES :].copy()
        if n == 0:
            return []
        return self._emit(data[: n * FRAME_SAMPLES].reshape(n, FRAME_SAMPLES))

    def flush(self) -> list[VadFrame]:
        """Zero-pad and run a trailing partial frame, if any."""
        if self._pending.size == 0:
            return []
        frame = np.zeros((1, FRAME_SAMPLES), dtype=np.float32)
        frame[0, : self._pending.size] = self._pending
        self._pending = np.zeros(0, dtype=np.float32)
        return self._emit(frame)

    def _emit(self, frames: Audio) -> list[VadFrame]:
        probs = self.vad.run(frames)
        first = self._frames_done
        self._frames_done += len(probs)
        return [VadFrame(self.t0 + (first + i) * FRAME_S, float(p)) for i, p in enumerate(probs)]


def vad_probs(audio: npt.NDArray[Any], vad: FrameVad | None = None) -> Audio:
    """Whole-file speech probabilities, one per 32 ms frame (tail zero-padded)."""
    model = vad if vad is not None else load_vad()
    model.reset()
    arr = np.asarray(audio, dtype=np.float32).reshape(-1)
    n = -(-arr.size // FRAME_SAMPLES)
    padded = np.zeros(n * FRAME_SAMPLES, dtype=np.float32)
    padded[: arr.size] = arr
    frames = padded.reshape(n, FRAME_SAMPLES)
    parts = [model.run(frames[i : i + _BATCH_FRAMES]) for i in range(0, n, _BATCH_FRAMES)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def vad_frames(
    audio: npt.NDArray[Any], vad: FrameVad | None = None, *, t0: float = 0.0
) -> list[VadFrame]:
    """Whole-file :class:`VadFrame` list; equals what :class:`StreamingVad` yields."""
    probs = vad_probs(audio, vad)
    return [VadFrame(t0 + i * FRAME_S, float(p)) for i, p in enumerate(probs)]


@dataclass
class PauseAnalysis:
    frames: list[VadFrame]
    events: list[PauseEvent]


def detect_pauses(
    audio: npt.NDArray[Any],
    vad: FrameVad | None = None,
    settings: PauseSettings | None = None,
    *,
    t0: float = 0.0,
) -> PauseAnalysis:
    """Run VAD and the pause detector over a whole recording."""
    frames = vad_frames(audio, vad, t0=t0)
    detector = (settings or PauseSettings()).detector()
    events = detector.feed_many([(f.t, f.prob) for f in frames])
    return PauseAnalysis(frames, events)


@dataclass
class StreamingPauses:
    """VAD + pause detector on a live stream: push samples, get pause events now.

    Use one per audio stream (the agent's played audio, or the tester's mic). The
    events' ``t`` is on the stream clock: ``t0`` + samples pushed / 16 kHz.
    """

    vad: FrameVad | None = None
    settings: PauseSettings = field(default_factory=PauseSettings)
    t0: float = 0.0
    keep_frames: bool = False
    frames: list[VadFrame] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._stream = StreamingVad(self.vad, t0=self.t0)
        self.detector = self.settings.detector()

    @property
    def time(self) -> float:
        return self._stream.time

    @property
    def in_speech(self) -> bool:
        return self.detector.in_speech

    def reset(self, t0: float = 0.0) -> None:
        """Start over at ``t0`` (new model state, new detector counters)."""
        self._stream.reset(t0)
        self.detector = self.settings.detector()
        self.frames.clear()

    def push(self, samples: npt.NDArray[Any]) -> list[PauseEvent]:
        return self._feed(self._stream.push(samples))

    def flush(self) -> list[PauseEvent]:
        return self._feed(self._stream.flush())

    def _feed(self, frames: list[VadFrame]) -> list[PauseEvent]:
        if self.keep_frames:
            self.frames.extend(frames)
        events: list[PauseEvent] = []
        for f in frames:
            events.extend(self.detector.feed(f.t, f.prob))
        return events


def talk_over_seconds(
    frames: Sequence[VadFrame],
    cut_t: float,
    *,
    speech_threshold: float = 0.5,
    silence_threshold: float = 0.35,
) -> float:
    """Seconds of agent speech at or after ``cut_t``: the talk-over after an interruption.

    ``frames`` are VAD frames of the agent's audio as it arrived (before and after
    the cut, on the call clock). Speech uses the same hysteresis as the pause
    detector, so state carries over from before the cut; a frame straddling the
    cut counts only its part after it.
    """
    in_speech = False
    total = 0.0
    for f in frames:
        in_speech = f.prob >= (silence_threshold if in_speech else speech_threshold)
        end = f.t + FRAME_S
        if in_speech and end > cut_t:
            total += end - max(f.t, cut_t)
    return total


def talk_over_from_audio(
    agent_audio: npt.NDArray[Any],
    cut_t: float,
    *,
    t0: float = 0.0,
    vad: FrameVad | None = None,
) -> float:
    """:func:`talk_over_seconds` on raw agent audio that starts at ``t0`` on the call clock."""
    return talk_over_seconds(vad_frames(agent_audio, vad, t0=t0), cut_t)
