"""Audio for the replay screen: where a call's recording is, and playing one turn of it.

A call's recording is a WAV beside its log with the same name
(``20250101-120000-demo-ab12cd.jsonl`` → ``…-ab12cd.wav``), sample 0 at t = 0 of
the call clock; a voice call writes the agent and the caller on two channels. A
turn plays from its start to its end. Nothing here imports sounddevice until
something is actually played.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from replay.model import Trial, Turn


@dataclass(frozen=True, slots=True)
class RecordingClip:
    """One stretch of a recording."""

    path: Path
    start: float
    end: float | None


def recording_for(trial: Trial) -> Path:
    """Where the recording of ``trial`` would be (it may not exist)."""
    source = Path(trial.source)
    return source.with_suffix(".wav") if source.suffix else source / f"{trial.id}.wav"


def turn_clip(trial: Trial, turn: Turn) -> RecordingClip | str:
    """The clip of ``turn``, or a sentence saying why there is none."""
    if trial.kind != "cutin":
        return "τ2 results hold no audio to play"
    wav = recording_for(trial)
    if not wav.is_file():
        return f"no recording for this call (looked for {wav.name} beside the log)"
    if turn.start is None:
        return "this turn has no start time"
    return RecordingClip(wav, turn.start, turn.end)


def clip_audio(clip: RecordingClip) -> npt.NDArray[np.float32]:
    """The clip's samples, mono at 16 kHz. A call's recording has the agent and the
    caller on two channels; they are summed (not averaged), so each side plays at the
    level it was recorded. Raises :class:`~sessions.speech.wav.WavError`."""
    import wave

    from sessions.speech import SAMPLE_RATE
    from sessions.speech.wav import read_wav

    audio = read_wav(clip.path)  # the mean of the channels
    try:
        with wave.open(str(clip.path), "rb") as w:
            channels = w.getnchannels()
    except (wave.Error, EOFError, OSError):
        channels = 1
    if channels > 1:
        audio = np.clip(audio * channels, -1.0, 1.0).astype(np.float32)
    first = max(0, int(clip.start * SAMPLE_RATE))
    last = len(audio) if clip.end is None else min(len(audio), int(clip.end * SAMPLE_RATE))
    return audio[first:last]


def play_clip(clip: RecordingClip, stop: threading.Event) -> None:
    """Play ``clip`` on the default output device; returns when done or ``stop`` is set.
    Raises :class:`~sessions.speech.devices.AudioUnavailable` or
    :class:`~sessions.speech.wav.WavError` with a readable message."""
    from sessions.speech.audio import Player

    audio = clip_audio(clip)
    with Player() as player:
        player.play(audio)
        while not player.wait_idle(timeout=0.1):
            if stop.is_set():
                player.stop()
                return


__all__ = ["RecordingClip", "clip_audio", "play_clip", "recording_for", "turn_clip"]
