"""What every call in one process shares: the loaded speech-to-text model, one STT worker
thread (per piece, or packing pieces: :func:`shared_packer`), and the caller's
synthesized speech.

Many calls at once (``cutin simulate --jobs N``) would otherwise each load Whisper (about
a second and ~100 MB each), start their own STT thread, and synthesize the same barge-in
openers and lines again. The Silero VAD session is shared the same way in
:mod:`sessions.speech.vad` (each call keeps only its own recurrent state).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sessions.speech.packing import PackedTranscriber
from sessions.speech.stt import Transcriber
from sessions.speech.tts import Speech

SPEECH_CACHE_SAMPLES = 16_000 * 1800
"""At most half an hour of cached caller speech (~115 MB of float32), least used dropped."""

_lock = threading.Lock()
_transcribers: dict[tuple[str, int], Transcriber] = {}
_stt_worker: ThreadPoolExecutor | None = None
_packers: dict[int, PackedTranscriber] = {}
_speech: OrderedDict[tuple[str, str], Speech] = OrderedDict()
_speech_samples = 0


def shared_transcriber(model: str | Path | None = None, *, cpu_threads: int = 1) -> Transcriber:
    """One loaded faster-whisper model per (model, threads) in this process; its calls are
    serialized by the transcriber's own lock. Raises ``SttError`` naming the fix."""
    key = (str(model or ""), cpu_threads)
    with _lock:
        found = _transcribers.get(key)
        if found is None:
            found = Transcriber(model=model, cpu_threads=cpu_threads).load().warm()
            _transcribers[key] = found
        return found


def stt_worker() -> ThreadPoolExecutor:
    """The one thread that transcribes every call's agent speech, in the order asked.

    One model serves all calls, one request at a time, so more threads would only wait
    on its lock; a single queue also keeps each call's segments in order."""
    global _stt_worker
    with _lock:
        if _stt_worker is None:
            _stt_worker = ThreadPoolExecutor(1, thread_name_prefix="cutin-stt")
        return _stt_worker


def shared_packer(transcriber: Transcriber) -> PackedTranscriber:
    """The one packing worker (:mod:`sessions.speech.packing`) of a shared transcriber:
    every real-time call's pieces go into the same packs."""
    with _lock:
        found = _packers.get(id(transcriber))
        if found is None or found.transcriber is not transcriber:
            found = PackedTranscriber(transcriber)
            _packers[id(transcriber)] = found
        return found


def cached_speech(key: str, text: str, make: Callable[[str], Speech]) -> Speech:
    """``make(text)``, or the same speech made earlier for ``key`` (the voice, rate and
    style that rendered it). Speech is read-only once made, so calls may share it."""
    global _speech_samples
    with _lock:
        found = _speech.get((key, text))
        if found is not None:
            _speech.move_to_end((key, text))
            return found
    speech = make(text)
    with _lock:
        if (key, text) not in _speech:
            _speech[(key, text)] = speech
            _speech_samples += speech.audio.size
            while _speech_samples > SPEECH_CACHE_SAMPLES and len(_speech) > 1:
                _, old = _speech.popitem(last=False)
                _speech_samples -= old.audio.size
    return speech
