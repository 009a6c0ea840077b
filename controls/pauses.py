"""A pause detector: a pure state machine over (frame time, speech probability).

Fed one frame at a time (from Silero VAD on audio, or from the text clock), it
emits ``speech_start`` when speech begins, ``short_pause`` the moment a mid-turn
silence reaches ``short_pause_s`` (200 ms), and ``turn_end`` when it reaches
``turn_end_s`` (500 ms). A turn end names the short pause it grew out of, so an
audit can exclude that pause from the per-opportunity denominator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class PauseEventKind(StrEnum):
    SPEECH_START = "speech_start"
    SHORT_PAUSE = "short_pause"
    TURN_END = "turn_end"


@dataclass(slots=True)
class PauseEvent:
    kind: PauseEventKind
    t: float
    """The moment the event fires (seconds, same clock as the frames)."""
    silence_start: float | None = None
    index: int = 0
    """Running index of this kind of event (short pauses: 0, 1, 2, ...)."""
    short_pause_index: int | None = None
    """For a turn end: the short pause that grew into it."""

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"type": str(self.kind), "t": round(self.t, 6)}
        if self.silence_start is not None:
            out["silence_start"] = round(self.silence_start, 6)
        if self.kind is PauseEventKind.SHORT_PAUSE:
            out["index"] = self.index
        if self.short_pause_index is not None:
            out["short_pause_index"] = self.short_pause_index
        return out


@dataclass
class PauseDetector:
    """Hysteresis speech/silence tracking with short-pause and turn-end timers."""

    frame_s: float = 0.032
    speech_threshold: float = 0.5
    silence_threshold: float = 0.35
    short_pause_s: float = 0.2
    turn_end_s: float = 0.5
    in_speech: bool = field(default=False, init=False)
    in_turn: bool = field(default=False, init=False)
    silence_start: float | None = field(default=None, init=False)
    _short_fired: int | None = field(default=None, init=False)
    _short_count: int = field(default=0, init=False)
    _turn_count: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.silence_threshold <= self.speech_threshold <= 1.0:
            raise ValueError("need 0 <= silence_threshold <= speech_threshold <= 1")
        if not 0.0 < self.short_pause_s < self.turn_end_s:
            raise ValueError("need 0 < short_pause_s < turn_end_s")

    def reset(self) -> None:
        self.in_speech = False
        self.in_turn = False
        self.silence_start = None
        self._short_fired = None

    def feed(self, t: float, prob: float) -> list[PauseEvent]:
        """Feed the frame that starts at ``t``; returns the events it completes."""
        events: list[PauseEvent] = []
        end = t + self.frame_s
        if self.in_speech:
            speaking = prob >= self.silence_threshold
        else:
            speaking = prob >= self.speech_threshold
        if speaking:
            if not self.in_turn:
                events.append(PauseEvent(PauseEventKind.SPEECH_START, t))
                self.in_turn = True
            self.in_speech = True
            self.silence_start = None
            self._short_fired = None
            return events
        if self.in_speech:
            self.in_speech = False
            self.silence_start = t
        if not self.in_turn or self.silence_start is None:
            return events
        silence = end - self.silence_start
        # A tiny epsilon so frame arithmetic (0.032 * n) does not miss an exact edge.
        if self._short_fired is None and silence >= self.short_pause_s - 1e-9:
            self._short_fired = self._short_count
            events.append(
                PauseEvent(
                    PauseEventKind.SHORT_PAUSE, end, self.silence_start, index=self._short_count
                )
            )
            self._short_count += 1
        if silence >= self.turn_end_s - 1e-9:
            events.append(
                PauseEvent(
                    PauseEventKind.TURN_END,
                    end,
                    self.silence_start,
                    index=self._turn_count,
                    short_pause_index=self._short_fired,
                )
            )
            self._turn_count += 1
            self.in_turn = False
            self.silence_start = None
            self._short_fired = None
        return events

    def feed_many(self, frames: list[tuple[float, float]]) -> list[PauseEvent]:
        out: list[PauseEvent] = []
        for t, p in frames:
            out.extend(self.feed(t, p))
        return out
