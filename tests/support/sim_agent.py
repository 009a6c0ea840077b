"""A far-end voice agent simulated in-process, on the virtual clock, behind the Line protocol.

It speaks real espeak-ng audio (SSML with exact pauses), hears the caller's audio by
energy, and reacts like a simple voice bot: after ``react_s`` of caller sound over its
speech it stops (``yields``), then answers once the caller has been quiet for
``answer_after_s``. Deterministic, so the remote loop's measurements can be checked
sample by sample against the 2-channel recording. The real-agent tests dial Pipecat.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sessions.lines.base import LineNotice, LineState, NoticeKind, PlayoutBuffer
from sessions.speech import SAMPLE_RATE
from sessions.speech.tts import EspeakTts

LEVEL = 0.02


def long_answer(sentences: int = 5, pause_ms: int = 300) -> str:
    """SSML for an answer with no question and ``pause_ms`` breaks between phrases."""
    phrases = [
        "I have your order open here",
        "and I can see the address we have on file",
        "which is the one on Elm Street from last year",
        "the parcel left our warehouse on Monday morning",
        "and the courier expects to deliver it by Thursday",
        "the tracking number is in the email we sent you",
        "and the driver will leave it with a neighbour if needed",
    ]
    body = f'<break time="{pause_ms}ms"/>'.join(phrases[:sentences])
    return f"<speak>{body}.</speak>"


@dataclass
class SimAgent:
    """What the simulated agent says and how it reacts."""

    turns: list[str] = field(default_factory=lambda: [long_answer(3), long_answer(6)])
    yields: bool = True
    """Stops speaking when the caller talks over it (else talks on)."""
    react_s: float = 0.25
    """Caller sound needed before it reacts (its own VAD's start time)."""
    answer_after_s: float = 0.8
    """Caller silence after which it answers with its next turn."""
    start_s: float = 0.3


class SimAgentLine:
    """The Line protocol, served by a :class:`SimAgent` on the caller's own frames."""

    name = "sim"
    target = "sim://agent"
    audio_format = "audio/pcm;rate=16000"

    def __init__(self, agent: SimAgent, tts: EspeakTts | None = None) -> None:
        self.agent = agent
        tts = tts or EspeakTts()
        self._audio = [tts.synthesize_ssml(s) for s in agent.turns]
        self._turn = -1
        self._pos = 0
        self._playing = False
        self.playout = PlayoutBuffer()
        self._state = LineState.CLOSED
        self._notices: list[LineNotice] = []
        self._n = 0
        """Samples exchanged so far (the line's clock)."""
        self._caller_sound = 0
        self._caller_quiet = 0
        self._heard_caller = False
        self.stops: list[float] = []
        """Line times where it stopped because of the caller."""

    @property
    def state(self) -> LineState:
        return self._state

    def open(self, timeout_s: float = 10.0) -> None:
        self._state = LineState.OPEN
        self._notices.append(LineNotice(NoticeKind.OPEN, "sim agent"))

    def notices(self) -> list[LineNotice]:
        out, self._notices = self._notices, []
        return out

    def close(self) -> None:
        self._state = LineState.CLOSED

    def send(self, samples: np.ndarray) -> None:
        n = samples.size
        loud = bool(np.abs(samples).max(initial=0.0) >= LEVEL)
        if loud:
            self._caller_sound += n
            self._caller_quiet = 0
            self._heard_caller = True
        else:
            self._caller_quiet += n
            self._caller_sound = 0
        if (
            self._playing
            and self.agent.yields
            and self._caller_sound >= self.agent.react_s * SAMPLE_RATE
        ):
            self._playing = False
            self.stops.append(self._n / SAMPLE_RATE)
            self._notices.append(LineNotice(NoticeKind.CLEAR, "sim agent stopped"))
        if (
            not self._playing
            and self._heard_caller
            and self._caller_quiet >= self.agent.answer_after_s * SAMPLE_RATE
        ):
            self._heard_caller = False
            self._next_turn()

    def _next_turn(self) -> None:
        if self._turn + 1 < len(self._audio):
            self._turn += 1
            self._pos = 0
            self._playing = True

    def take(self, n: int) -> np.ndarray:
        if self._turn < 0 and self._n >= self.agent.start_s * SAMPLE_RATE:
            self._next_turn()
        out = np.zeros(n, dtype=np.float32)
        if self._playing:
            audio = self._audio[self._turn]
            k = min(n, audio.size - self._pos)
            out[:k] = audio[self._pos : self._pos + k]
            self._pos += k
            if self._pos >= audio.size:
                self._playing = False
        self._n += n
        return out
