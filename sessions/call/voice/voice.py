"""What the call loop speaks with: a :class:`Voice` that makes one :class:`VoiceTrack`
per turn, for the agent and for the caller, on the call clock.

The loop only asks a track for timed words and, per 32 ms frame, how likely the
agent is speaking (``speech_prob``, fed to the pause detector). Two voices
implement it:

- :class:`TextVoice` (here): the text clock of :mod:`sessions.speech.speech_clock`, words
  timed at a speaking rate, probability 1.0 inside a word and 0.0 between words;
- :class:`sessions.call.voice.audio_voice.AudioVoice`: synthesized audio, word times from
  the TTS estimates, probabilities from Silero VAD on that very audio.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, Protocol

from sessions.call.commands import Command
from sessions.clock import Clock, RealClock
from sessions.speech.speech_clock import SpeakingStyle, SpeechTrack
from sessions.speech.words import TimedWord

if TYPE_CHECKING:
    from sessions.call.voice.audio_out import LeadClock
    from sessions.call.voice.recording import CallRecording

Speaker = Literal["agent", "caller"]


class Microphone(Protocol):
    """The tester's microphone as a voice and the driver use it (the near end's
    :class:`~sessions.call.near_end.mic.MicInput`; the voice does not import it)."""

    push_to_talk: bool

    def start(self, clock: LeadClock, submit: Callable[[Command], None]) -> None:
        """Start feeding ``submit`` on the call's clock."""

    def toggle_talk(self) -> bool:
        """Push-to-talk: start or end an utterance; whether the tester is talking now."""

    def finish(self, timeout: float = 10.0) -> list[Command]:
        """The call is ending: the commands of what the tester said before it (their
        words, once transcribed), for the call to apply before its end."""

    def close(self) -> None: ...


class VoiceTrack(Protocol):
    """The planned speech of one turn, growing as text arrives (call-clock seconds)."""

    @property
    def words(self) -> list[TimedWord]:
        """Words placed so far, in time order."""

    @property
    def stream_done(self) -> bool:
        """The whole text has been given (``final`` or :meth:`finish`)."""

    @property
    def stopped_at(self) -> float | None:
        """Where playback was stopped, if it was."""

    @property
    def onset(self) -> float | None: ...

    @property
    def end(self) -> float:
        """End of the last word (or the stop time)."""

    @property
    def pending_text(self) -> str:
        """Text given but not yet placed as words (it would have been said next)."""

    def add_text(self, text: str, now: float, *, final: bool = False) -> list[TimedWord]:
        """Plan ``text`` (a streamed chunk) after what is planned; returns the words placed."""

    def finish(self, now: float) -> list[TimedWord]: ...

    def tick(self, now: float) -> None:
        """Take in work finished elsewhere (speech synthesized on a worker thread)."""

    def speech_prob(self, t0: float, t1: float) -> float:
        """Probability that this speaker is speaking in the frame [t0, t1)."""

    def heard(self, t: float) -> int:
        """Number of words whose playback ended by ``t``."""

    def finished(self, t: float) -> bool:
        """Everything is said and played by ``t``."""

    def stop(self, t: float) -> float:
        """Stop playback now (loop time ``t``); returns where the audio really ended."""

    def talk_over(self, cut_t: float) -> float:
        """Seconds of speech at or after ``cut_t`` (an agent that went on after a cut)."""


class Voice(Protocol):
    """Makes the tracks of one call and owns whatever they share (devices, models)."""

    name: str
    """text | espeak | openai (the header's ``speech.tts``)."""
    caller_hesitations: bool
    """The caller's break-offs, pause tokens and fillers get human timing (the human
    disfluency style; the call loop sets it from its profile)."""

    @property
    def recording(self) -> CallRecording | None:
        """Where the call's audio is written (None: not recorded, or no audio)."""

    @property
    def mic(self) -> Microphone | None:
        """The tester's microphone (None: they type)."""

    def track(self, speaker: Speaker, index: int, seed: int) -> VoiceTrack:
        """A new, empty track for turn ``index`` of ``speaker``."""

    def tick(self, t: float) -> None:
        """Once per frame, before the frame is processed."""

    def backchannel(self, token: str, t: float) -> float | None:
        """Say a listener token at ``t``; returns its duration (None: the text clock's)."""

    def start(self, submit: Callable[[Command], None]) -> Clock:
        """Real time: start devices (a microphone sends ``submit`` commands); returns the
        clock the loop must follow."""

    def close(self) -> None:
        """Release devices and finish any recording (idempotent)."""


class TextTrack:
    """A :class:`SpeechTrack` seen through the :class:`VoiceTrack` protocol."""

    def __init__(self, style: SpeakingStyle, seed: int) -> None:
        self.plan = SpeechTrack(style, seed=seed)

    @property
    def words(self) -> list[TimedWord]:
        return self.plan.words

    @property
    def stream_done(self) -> bool:
        return self.plan.stream_done

    @property
    def stopped_at(self) -> float | None:
        return self.plan.stopped_at

    @property
    def onset(self) -> float | None:
        return self.plan.onset

    @property
    def end(self) -> float:
        return self.plan.end

    @property
    def pending_text(self) -> str:
        return self.plan._pending

    def add_text(self, text: str, now: float, *, final: bool = False) -> list[TimedWord]:
        return self.plan.add_text(text, now, final=final)

    def finish(self, now: float) -> list[TimedWord]:
        return self.plan.finish(now)

    def tick(self, now: float) -> None:
        return None

    def speech_prob(self, t0: float, t1: float) -> float:
        return 1.0 if self.plan.speaking_at(t0, t1) else 0.0

    def heard(self, t: float) -> int:
        return self.plan.heard(t)

    def finished(self, t: float) -> bool:
        return self.plan.finished(t)

    def stop(self, t: float) -> float:
        self.plan.stop(t)
        return t

    def talk_over(self, cut_t: float) -> float:
        return max(0.0, self.plan.end - cut_t)


class TextVoice:
    """The text clock: no audio, words timed at the style's speaking rate (the agent's
    at ``agent_style`` when given: an agent profile's rate and pauses)."""

    name = "text"

    def __init__(self, style: SpeakingStyle, *, agent_style: SpeakingStyle | None = None) -> None:
        self.style = style
        self.agent_style = agent_style
        self.caller_hesitations = False
        self.recording: CallRecording | None = None
        self.mic: Microphone | None = None

    def track(self, speaker: Speaker, index: int, seed: int) -> TextTrack:
        if speaker == "agent" and self.agent_style is not None:
            return TextTrack(self.agent_style, seed)
        if speaker == "caller" and self.caller_hesitations:
            return TextTrack(replace(self.style, hesitations=True), seed)
        return TextTrack(self.style, seed)

    def tick(self, t: float) -> None:
        return None

    def backchannel(self, token: str, t: float) -> float | None:
        return None

    def start(self, submit: Callable[[Command], None]) -> Clock:
        return RealClock()

    def close(self) -> None:
        return None
