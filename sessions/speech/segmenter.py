"""Cutting the tester's microphone stream into utterances for STT.

- Hands-free: :class:`UtteranceSegmenter` runs VAD + pause detector on the mic
  stream; an utterance opens at ``speech_start`` (with a little pre-roll so the
  first phoneme is not clipped) and closes at ``turn_end``. Its ``start`` is also
  what an interruption uses as the cut time (the onset of the tester's speech).
- Push-to-talk: :class:`PushToTalk` keeps what is recorded between ``press`` and
  ``release``.

Both are pure over sample blocks (no device, no threads): the recorder's queue
feeds them from whatever thread drains it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from controls import PauseEvent, PauseEventKind
from sessions.speech import FRAME_SAMPLES, SAMPLE_RATE
from sessions.speech.vad import FrameVad, PauseSettings, StreamingPauses

Audio = npt.NDArray[np.float32]


@dataclass
class SpeechSegment:
    audio: Audio
    start: float
    """Seconds on the stream clock where ``audio`` begins (pre-roll included)."""
    speech_start: float
    """When speech was detected to start (the cut time for an interruption)."""
    end: float

    @property
    def duration(self) -> float:
        return self.audio.size / SAMPLE_RATE


class _Tape:
    """The recent stream, addressable by stream time."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.data = np.zeros(0, dtype=np.float32)

    def append(self, samples: Audio) -> None:
        self.data = np.concatenate([self.data, samples])

    def slice(self, start: float, end: float) -> Audio:
        a = max(0, round((start - self.t0) * SAMPLE_RATE))
        b = max(a, round((end - self.t0) * SAMPLE_RATE))
        return self.data[a:b].copy()

    def forget_before(self, t: float) -> None:
        drop = round((t - self.t0) * SAMPLE_RATE)
        if drop > 0:
            self.data = self.data[drop:]
            self.t0 += drop / SAMPLE_RATE


class UtteranceSegmenter:
    """VAD-segmented hands-free utterances from a live mic stream."""

    def __init__(
        self,
        vad: FrameVad | None = None,
        settings: PauseSettings | None = None,
        *,
        t0: float = 0.0,
        pre_roll_s: float = 0.25,
        tail_s: float = 0.15,
        max_utterance_s: float = 30.0,
    ) -> None:
        self.pauses = StreamingPauses(vad, settings or PauseSettings(), t0=t0)
        self.pre_roll_s = pre_roll_s
        self.tail_s = tail_s
        self.max_utterance_s = max_utterance_s
        self._tape = _Tape(t0)
        self._open: float | None = None  # speech_start of the utterance being recorded
        self._continued = False  # the open utterance continues one cut at the maximum
        self.events: list[PauseEvent] = []

    @property
    def speaking(self) -> bool:
        """True between a speech start and its turn end (the tester holds the floor)."""
        return self._open is not None

    def push(self, samples: npt.NDArray[Any]) -> list[SpeechSegment]:
        """Add mic samples; returns utterances that ended in them."""
        block = np.asarray(samples, dtype=np.float32).reshape(-1)
        self._tape.append(block)
        out: list[SpeechSegment] = []
        # Frame-sized steps, so the length limit is checked every 32 ms whatever the block size.
        for i in range(0, block.size, FRAME_SAMPLES):
            out += self._handle(self.pauses.push(block[i : i + FRAME_SAMPLES]))
        return out

    def flush(self) -> list[SpeechSegment]:
        """End of stream: close an open utterance with what was recorded."""
        out = self._handle(self.pauses.flush())
        if self._open is not None:
            out.append(self._close(self.pauses.time))
        return out

    def _handle(self, events: list[PauseEvent]) -> list[SpeechSegment]:
        out: list[SpeechSegment] = []
        for ev in events:
            self.events.append(ev)
            if ev.kind is PauseEventKind.SPEECH_START:
                self._open = ev.t
            elif ev.kind is PauseEventKind.TURN_END and self._open is not None:
                end = (ev.silence_start if ev.silence_start is not None else ev.t) + self.tail_s
                out.append(self._close(end))
        if self._open is not None and self.pauses.time - self._open >= self.max_utterance_s:
            out.append(self._close(self.pauses.time))
            # Still speaking: the next part opens now, without pre-roll (no overlap).
            self._open = self.pauses.time
            self._continued = True
        if self._open is None:
            self._tape.forget_before(self.pauses.time - self.pre_roll_s)
        return out

    def _close(self, end: float) -> SpeechSegment:
        assert self._open is not None
        pre_roll = 0.0 if self._continued else self.pre_roll_s
        start = max(self._tape.t0, self._open - pre_roll)
        utt = SpeechSegment(self._tape.slice(start, end), start, self._open, end)
        self._open = None
        self._continued = False
        return utt


class PushToTalk:
    """Collects mic blocks while the talk key is held."""

    def __init__(self) -> None:
        self._blocks: list[Audio] = []
        self._start: float | None = None

    @property
    def held(self) -> bool:
        return self._start is not None

    def press(self, t: float) -> None:
        """Start recording; ``t`` is when (call clock) the key went down."""
        self._blocks = []
        self._start = t

    def push(self, samples: npt.NDArray[Any]) -> None:
        if self._start is not None:
            self._blocks.append(np.asarray(samples, dtype=np.float32).reshape(-1).copy())

    def release(self, t: float) -> SpeechSegment | None:
        """Stop; returns what was said (None if the key was not down or nothing came)."""
        if self._start is None:
            return None
        start, self._start = self._start, None
        audio = np.concatenate(self._blocks) if self._blocks else np.zeros(0, np.float32)
        self._blocks = []
        if audio.size == 0:
            return None
        return SpeechSegment(audio, start, start, t)
