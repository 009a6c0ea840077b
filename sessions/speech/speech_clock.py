"""Text-clocked speech: text "spoken" word by word at a speaking rate.

No audio: each word gets a start and an end on the call clock, with pauses at
punctuation. Sentence ends pause 300–450 ms (long enough to be a 200 ms short
pause, short of a 500 ms turn end); commas and dashes pause 60–150 ms (below the
short-pause trigger). Durations carry a small seeded jitter, so the same text and
seed always give the same timings.

A style may instead carry quantile tables (an agent profile,
:mod:`sessions.scenarios.profile`): then each track draws its speaking rate from
``rate_q`` and every sentence-end and comma pause from ``sentence_pause_q`` /
``comma_pause_q``, on the same seeded generator.

A style with ``hesitations`` (the caller in the human disfluency style) times a
broken-off word ("the—") and a pause token with the silence a person leaves before a
repair, and a filler as a filled pause and its silence (:mod:`sessions.speech.hesitation`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from sessions.speech.hesitation import (
    BREAK_OFF_S,
    FILLED_PAUSE_S,
    FILLER_SILENCE_S,
    filler_of,
    is_break_off,
)
from sessions.speech.words import TimedWord  # the one timed word (TTS, STT and this clock)

SENTENCE_END = (".", "!", "?", '."', '?"', '!"')
SHORT_BREAK = (",", ";", ":", "—", "–", "-")


@dataclass(frozen=True, slots=True)
class SpeakingStyle:
    words_per_minute: float = 165.0
    sentence_pause: tuple[float, float] = (0.30, 0.45)
    comma_pause: tuple[float, float] = (0.06, 0.15)
    dash_pause: tuple[float, float] = (0.12, 0.18)
    jitter: float = 0.10
    rate_q: tuple[float, ...] = ()
    """Quantiles of the words per minute, drawn once per track (empty: ``words_per_minute``)."""
    sentence_pause_q: tuple[float, ...] = ()
    """Quantiles of the pause after a sentence end (empty: uniform in ``sentence_pause``)."""
    comma_pause_q: tuple[float, ...] = ()
    """Quantiles of the pause after a comma (empty: uniform in ``comma_pause``)."""
    hesitations: bool = False
    """Human-length silences at break-offs and pause tokens, filled pauses for fillers."""

    def __post_init__(self) -> None:
        if not 60.0 <= self.words_per_minute <= 400.0:
            raise ValueError(f"words per minute must be 60..400, got {self.words_per_minute}")


def _pause_after(word: str, style: SpeakingStyle, rng: random.Random) -> float:
    if style.hesitations:
        # Drawn anyway, so the jitter of the words after stays what it would be.
        drawn = _plain_pause_after(word, style, rng)
        if word == "—" or is_break_off(word):
            return BREAK_OFF_S
        filler = filler_of(word)
        return FILLER_SILENCE_S[filler] if filler else drawn
    return _plain_pause_after(word, style, rng)


def _plain_pause_after(word: str, style: SpeakingStyle, rng: random.Random) -> float:
    if word == "—":
        return rng.uniform(*style.dash_pause)
    if word.endswith(SENTENCE_END):
        if style.sentence_pause_q:
            return draw_quantile(style.sentence_pause_q, rng)
        return rng.uniform(*style.sentence_pause)
    if word.endswith(SHORT_BREAK):
        if style.comma_pause_q:
            return draw_quantile(style.comma_pause_q, rng)
        return rng.uniform(*style.comma_pause)
    return 0.0


def draw_quantile(quantiles: tuple[float, ...] | list[float], rng: random.Random) -> float:
    """A value from the distribution a quantile table describes (values at evenly
    spaced probabilities 0 .. 1), by linear interpolation at a uniform draw."""
    if len(quantiles) == 1:
        return float(quantiles[0])
    pos = rng.random() * (len(quantiles) - 1)
    i = int(pos)
    return float(quantiles[i] + (pos - i) * (quantiles[i + 1] - quantiles[i]))


def word_duration(word: str, style: SpeakingStyle, rng: random.Random) -> float:
    """Longer words take longer; the average word takes 60/wpm seconds."""
    per_word = 60.0 / style.words_per_minute
    letters = sum(ch.isalnum() for ch in word)
    if word == "—":
        return 0.0
    if style.hesitations and (filler := filler_of(word)):
        rng.uniform(-style.jitter, style.jitter)  # keeps the generator in step
        return FILLED_PAUSE_S[filler]
    base = per_word * min(2.2, max(0.5, 0.55 + 0.45 * letters / 4.7))
    return base * (1.0 + rng.uniform(-style.jitter, style.jitter))


@dataclass
class SpeechTrack:
    """The planned words of one speaker's turn, growing as text arrives."""

    style: SpeakingStyle
    seed: int
    words: list[TimedWord] = field(default_factory=list)
    _next_start: float | None = None
    _pending: str = ""
    stream_done: bool = False
    stopped_at: float | None = None

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        if self.style.rate_q:
            wpm = round(draw_quantile(self.style.rate_q, self._rng), 1)
            self.style = replace(self.style, words_per_minute=wpm, rate_q=())

    def add_text(self, text: str, now: float, *, final: bool = False) -> list[TimedWord]:
        """Plan the complete words in ``text`` (a streamed chunk) after what is planned."""
        self._pending += text
        if final:
            chunk, self._pending = self._pending, ""
            self.stream_done = True
        else:
            cut = max(self._pending.rfind(" "), self._pending.rfind("\n"))
            if cut < 0:
                return []
            chunk, self._pending = self._pending[:cut], self._pending[cut + 1 :]
        added: list[TimedWord] = []
        for word in chunk.split():
            start = now if self._next_start is None else max(self._next_start, now)
            if word == "—":
                # A pause token is silence, not a word.
                self._next_start = start + _pause_after(word, self.style, self._rng)
                continue
            end = start + word_duration(word, self.style, self._rng)
            tw = TimedWord(word, start, end)
            self.words.append(tw)
            added.append(tw)
            self._next_start = end + _pause_after(word, self.style, self._rng)
        return added

    def finish(self, now: float) -> list[TimedWord]:
        return self.add_text("", now, final=True)

    @property
    def onset(self) -> float | None:
        return self.words[0].start if self.words else None

    @property
    def end(self) -> float:
        if self.stopped_at is not None:
            return self.stopped_at
        return self.words[-1].end if self.words else 0.0

    def speaking_at(self, t0: float, t1: float) -> bool:
        """True if any word overlaps [t0, t1) (and playback has not been stopped)."""
        if self.stopped_at is not None and t0 >= self.stopped_at:
            return False
        # Words are in time order; scan from the end (the frame is near "now").
        for w in reversed(self.words):
            if w.end <= t0:
                return False
            if w.start < t1:
                return True
        return False

    def heard(self, t: float) -> int:
        """Number of words whose playback ended by ``t``."""
        return words_heard(self.words, t)

    def finished(self, t: float) -> bool:
        return self.stream_done and not self._pending and t >= self.end

    def stop(self, t: float) -> None:
        self.stopped_at = t


def words_heard(words: list[TimedWord], t: float) -> int:
    """How many of ``words`` (in time order) had finished playing by ``t``."""
    n = 0
    for w in words:
        if w.end <= t + 1e-9:
            n += 1
        else:
            break
    return n


def plan(text: str, style: SpeakingStyle, seed: int, start: float = 0.0) -> list[TimedWord]:
    track = SpeechTrack(style, seed)
    track.add_text(text, start, final=True)
    return track.words
