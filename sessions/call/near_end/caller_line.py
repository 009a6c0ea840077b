"""The caller's side of a line to a black-box agent: what cutin puts on the wire.

Caller turns (typed or scripted text, α-injected, then synthesized), barge-ins and
backchannel tokens become :class:`Utterance` audio in :class:`CallerChannel`, which the
remote loop drains one frame at a time (zeros when the caller is silent, as a phone
line carries silence). Synthesis runs on a worker thread in real time, so a long
sentence never stalls the frame clock; on the virtual clock it is immediate.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from sessions.call.sound_tape import SOUND_LEVEL, first_sound_offset
from sessions.lines.codec import StreamResampler
from sessions.speech import SAMPLE_RATE
from sessions.speech.tts import Speech

Audio = npt.NDArray[np.float32]
Synthesize = Callable[[str], Speech]


class SoundKind(StrEnum):
    """What a stretch of the caller's audio on the line is."""

    TURN = "turn"
    """A caller turn (typed, scripted, a simulator's)."""
    INTERRUPTION = "interruption"
    """A barge-in over the agent's turn."""
    BACKCHANNEL = "backchannel"
    """A token over the agent ("mm-hmm")."""
    SOUND = "sound"
    """A vocal tic or an aside: no turn."""


@dataclass
class Utterance:
    """One stretch of caller audio and what it is."""

    kind: SoundKind
    audio: Audio
    text: str = ""
    """What is said (the rendered text for a turn; the token for a backchannel)."""
    meta: dict[str, object] = field(default_factory=dict)
    start_index: int | None = None
    """Absolute caller-channel sample where playback began (set when it starts)."""

    @property
    def duration(self) -> float:
        return self.audio.size / SAMPLE_RATE

    @property
    def lead_s(self) -> float:
        """Silence at the start of the audio before the first sound (TTS lead-in)."""
        return first_sound_offset(self.audio)

    def line_span(self, rate: int) -> tuple[float, float]:
        """(first, end of last) sound, in seconds into the audio, as it leaves on a line
        of ``rate`` Hz: what the agent hears, not the 16 kHz source (a final /s/ lies
        above a phone line's 4 kHz and ends earlier there). Computed once per rate."""
        key = f"_line_span_{rate}"
        cached = self.meta.get(key)
        if isinstance(cached, tuple):
            return cached
        span = line_sound_span(self.audio, rate)
        self.meta[key] = span
        return span


def line_sound_span(audio: Audio, rate: int, level: float = SOUND_LEVEL) -> tuple[float, float]:
    """(first, end of last) sample at or over ``level`` of 16 kHz ``audio`` band-limited
    to a line of ``rate`` Hz, in seconds (the line's resampler delay taken off); (0, 0)
    when nothing is that loud."""
    if rate >= SAMPLE_RATE:
        loud = np.flatnonzero(np.abs(audio) >= level)
        if loud.size == 0:
            return 0.0, 0.0
        return float(loud[0]) / SAMPLE_RATE, float(loud[-1] + 1) / SAMPLE_RATE
    down = StreamResampler(SAMPLE_RATE, rate)
    # The zeros flush the filter, so a sound at the very end is not cut short.
    y = np.concatenate([down.process(audio), down.process(np.zeros(256, dtype=np.float32))])
    loud = np.flatnonzero(np.abs(y) >= level)
    if loud.size == 0:
        return 0.0, 0.0
    first = max(0.0, float(loud[0]) / rate - down.delay_s)
    last = max(first, float(loud[-1] + 1) / rate - down.delay_s)
    return first, min(last, audio.size / SAMPLE_RATE)


def line_rate_of(audio_format: str) -> int:
    """The sample rate a line's ``audio_format`` states (``...;rate=8000``); 16 kHz when
    it states none (then the source's own times are used)."""
    for param in audio_format.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip() == "rate":
            digits = value.strip().split(" ")[0]
            if digits.isdigit() and 4000 <= int(digits) <= 192000:
                return int(digits)
    return SAMPLE_RATE


class CallerChannel:
    """Caller audio to send: one utterance at a time, plus overlays (backchannels)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: Utterance | None = None
        self._pos = 0
        self._overlays: deque[tuple[Utterance, int]] = deque()
        self.index = 0
        """Absolute sample index of the next sample to send."""

    @property
    def busy(self) -> bool:
        """An utterance (not counting overlays) is playing."""
        return self._current is not None

    @property
    def active(self) -> bool:
        """Any caller audio is playing (utterance or backchannel)."""
        return self._current is not None or bool(self._overlays)

    @property
    def current(self) -> Utterance | None:
        return self._current

    def play(self, utterance: Utterance) -> None:
        """Start ``utterance`` with the next frame, replacing one in progress."""
        with self._lock:
            utterance.start_index = self.index
            self._current = utterance
            self._pos = 0

    def release(self) -> None:
        """Stop the current utterance now (its sound is over; what is left is silence)."""
        with self._lock:
            self._current = None

    def overlays(self) -> list[Utterance]:
        with self._lock:
            return [utt for utt, _ in self._overlays]

    def overlay(self, utterance: Utterance) -> None:
        with self._lock:
            utterance.start_index = self.index
            self._overlays.append((utterance, 0))

    def take(self, n: int) -> tuple[Audio, list[Utterance]]:
        """The next ``n`` samples and the utterances that finished in them."""
        out = np.zeros(n, dtype=np.float32)
        done: list[Utterance] = []
        with self._lock:
            cur = self._current
            if cur is not None:
                k = min(n, cur.audio.size - self._pos)
                out[:k] += cur.audio[self._pos : self._pos + k]
                self._pos += k
                if self._pos >= cur.audio.size:
                    done.append(cur)
                    self._current = None
            kept: deque[tuple[Utterance, int]] = deque()
            for utt, pos in self._overlays:
                k = min(n, utt.audio.size - pos)
                out[:k] += utt.audio[pos : pos + k]
                if pos + k >= utt.audio.size:
                    done.append(utt)
                else:
                    kept.append((utt, pos + k))
            self._overlays = kept
            self.index += n
        np.clip(out, -1.0, 1.0, out=out)
        return out, done


class Synthesizer:
    """Text → caller speech; a worker thread in real time, inline on the virtual clock."""

    def __init__(self, synthesize: Synthesize, *, inline: bool) -> None:
        self._synthesize = synthesize
        self._inline = inline
        self._pool: ThreadPoolExecutor | None = None
        self._cache: dict[str, Speech] = {}

    def prepare(self, texts: list[str]) -> None:
        """Synthesize lines the caller may need fast (barge-in openers) ahead of time."""
        for text in texts:
            self.submit(text)

    def submit(self, text: str) -> Future[Speech]:
        cached = self._cache.get(text)
        if cached is not None or self._inline:
            done: Future[Speech] = Future()
            try:
                done.set_result(cached if cached is not None else self._remember(text))
            except Exception as exc:  # synthesis failures are reported by the caller
                done.set_exception(exc)
            return done
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="cutin-caller-tts")
        return self._pool.submit(self._remember, text)

    def _remember(self, text: str) -> Speech:
        speech = self._synthesize(text)
        self._cache[text] = speech
        return speech

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
