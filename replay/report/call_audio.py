"""Stretches of a call's recording for the HTML report: both channels, embedded.

A call's recording is ``<log>.wav`` beside its log (two channels, agent then caller,
sample 0 at t = 0 of the call clock; :mod:`sessions.call.voice.recording`). Each agent
turn with a cut, a backchannel or a yield gets one stretch: from
:data:`BEFORE_S` before its first such moment (not before the turn's start) to
:data:`AFTER_S` after its last (not after the turn's end plus :data:`TAIL_S`), at most
:data:`LONGEST_S`. The stretch is cut out of the file as it is (both channels, its
rate, 16-bit) and embedded as a ``data:audio/wav`` URI, so the page stands alone.

A page embeds at most :data:`PAGE_CAP_BYTES` of WAV (before base64, which adds a
third): 8 MB, about 2 minutes of a 16 kHz two-channel call. Past it a stretch gets a
note saying so instead of an ``<audio>`` element. A recording that is not a WAV this
reads (a hostile or broken file) gets one line saying so, never a traceback.
"""

from __future__ import annotations

import base64
import io
import math
import wave
from dataclasses import dataclass, field
from pathlib import Path

from replay.model import Trial, Turn
from sessions.log.models import AgentYield, Backchannel, Interruption

BEFORE_S = 2.0
AFTER_S = 2.5
TAIL_S = 0.5
LONGEST_S = 20.0
PAGE_CAP_BYTES = 8 * 1024 * 1024
"""Most WAV bytes one page embeds (before base64)."""
MOMENTS = (Backchannel, Interruption, AgentYield)
"""The inline events that give a turn a stretch to listen to (a cut is an interruption)."""


@dataclass
class AudioBudget:
    """What one page has left to embed; shared by every call on it."""

    left: int = PAGE_CAP_BYTES
    skipped: int = 0
    """Stretches left out because the page was full."""
    cap: int = field(default=PAGE_CAP_BYTES, init=False)

    def __post_init__(self) -> None:
        self.cap = self.left


@dataclass(frozen=True, slots=True)
class Stretch:
    turn: int
    """Index of the turn in the trial."""
    start: float
    end: float
    what: str
    """What happens in it, in words (``cut, stop +0.25 s``)."""


@dataclass(frozen=True, slots=True)
class TurnClip:
    stretch: Stretch
    uri: str | None
    """``data:audio/wav;base64,...``; None when not embedded (see ``note``)."""
    seconds: float
    note: str = ""


def recording_of(trial: Trial) -> Path | None:
    """The WAV beside a cutin log, when there is one."""
    if trial.kind != "cutin" or not trial.source:
        return None
    source = Path(trial.source)
    if not source.suffix:
        return None
    wav = source.with_suffix(".wav")
    return wav if wav.is_file() else None


def _finite(v: object) -> float | None:
    if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    return None


def _what(turn: Turn) -> str:
    parts: list[str] = []
    for e in turn.events_of(*MOMENTS):
        if isinstance(e.source, AgentYield):
            parts.append(e.label)
        elif isinstance(e.source, Interruption):
            parts.append("▌cut: the caller comes in")
        else:
            parts.append(f"backchannel “{e.label}”")
    return "; ".join(dict.fromkeys(parts))


def stretches(trial: Trial) -> list[Stretch]:
    """The stretch of every agent turn with a cut, a backchannel or a yield."""
    out: list[Stretch] = []
    for turn in trial.turns:
        start = _finite(turn.start)
        if turn.speaker != "agent" or start is None:
            continue
        moments = turn.events_of(*MOMENTS)
        times = [t for e in moments if (t := _finite(e.t)) is not None]
        for e in turn.events_of(AgentYield):
            if (stop := _finite(e.data.get("stop_t"))) is not None:
                times.append(stop)
        cut = _finite(turn.cut_t)
        if turn.interrupted and cut is not None:
            times.append(cut)
        if not times:
            continue
        end = _finite(turn.end)
        lo = max(start, min(times) - BEFORE_S, 0.0)
        hi = max(times) + AFTER_S
        if end is not None:
            hi = min(hi, max(end, max(times)) + TAIL_S)
        hi = min(hi, lo + LONGEST_S)
        if hi > lo:
            out.append(Stretch(turn.index, round(lo, 3), round(hi, 3), _what(turn)))
    return out


def cut_wav(path: Path, start: float, end: float) -> bytes:
    """The frames of [start, end) of a WAV as a WAV of the same format. Raises
    :class:`ValueError` with a readable reason."""
    try:
        with wave.open(str(path), "rb") as w:
            channels, width, rate, frames = (
                w.getnchannels(),
                w.getsampwidth(),
                w.getframerate(),
                w.getnframes(),
            )
            if not (1 <= channels <= 2 and width in (1, 2) and 8000 <= rate <= 48000):
                raise ValueError(f"{channels} channels, {8 * width}-bit at {rate} Hz is not read")
            first = min(frames, max(0, int(start * rate)))
            last = min(frames, max(first, int(end * rate)))
            w.setpos(first)
            data = w.readframes(last - first)
    except (wave.Error, EOFError, OSError) as exc:
        raise ValueError(f"not a readable WAV ({type(exc).__name__})") from None
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(data)
    return buf.getvalue()


def wav_seconds(data: bytes) -> float:
    """How long a WAV is (the tests decode the page's data URIs with it)."""
    with wave.open(io.BytesIO(data), "rb") as w:
        return w.getnframes() / w.getframerate()


def clips(trial: Trial, budget: AudioBudget) -> tuple[list[TurnClip], str]:
    """Each stretch's clip, and a note for the call ('' when nothing to say)."""
    wanted = stretches(trial)
    if not wanted:
        return [], ""
    wav = recording_of(trial)
    if wav is None:
        return [], "no recording beside the log: nothing to listen to"
    out: list[TurnClip] = []
    for s in wanted:
        if budget.left <= 0:
            budget.skipped += 1
            out.append(TurnClip(s, None, s.end - s.start, "not embedded: the page's audio cap"))
            continue
        try:
            data = cut_wav(wav, s.start, s.end)
        except ValueError as exc:
            return [], f"the recording {wav.name}: {exc}"
        if len(data) > budget.left:
            budget.skipped += 1
            budget.left = 0
            out.append(TurnClip(s, None, s.end - s.start, "not embedded: the page's audio cap"))
            continue
        budget.left -= len(data)
        uri = "data:audio/wav;base64," + base64.b64encode(data).decode("ascii")
        out.append(TurnClip(s, uri, wav_seconds(data)))
    return out, ""


SOUND_FRAME_S = 0.05
SOUND_DBFS = -45.0
"""A 50 ms frame of the agent's channel louder than this is its sound."""
SOUND_JOIN_S = 0.25
"""Sound frames this close are one stretch (a word's gap is not silence)."""


def agent_sound(path: Path) -> list[tuple[float, float]]:
    """Where the recording's agent channel (the first) has sound, read a minute at a
    time. Raises :class:`ValueError` for a file this does not read."""
    import numpy as np

    out: list[tuple[float, float]] = []
    try:
        with wave.open(str(path), "rb") as w:
            channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
            if not (1 <= channels <= 2 and width == 2 and 8000 <= rate <= 48000):
                raise ValueError(f"{channels} channels, {8 * width}-bit at {rate} Hz is not read")
            hop = int(rate * SOUND_FRAME_S)
            limit = 10 ** (SOUND_DBFS / 20) * 32768
            at = 0
            while True:
                raw = w.readframes(hop * 1200)
                if not raw:
                    break
                pcm = np.frombuffer(raw, dtype="<i2").reshape(-1, channels)[:, 0]
                n = len(pcm) // hop
                if n:
                    frames = pcm[: n * hop].astype(np.float32).reshape(n, hop)
                    loud = np.sqrt((frames**2).mean(axis=1)) > limit
                    for i in np.flatnonzero(loud):
                        t = (at + int(i) * hop) / rate
                        if out and t - out[-1][1] <= SOUND_JOIN_S:
                            out[-1] = (out[-1][0], t + SOUND_FRAME_S)
                        else:
                            out.append((t, t + SOUND_FRAME_S))
                at += len(pcm)
    except (wave.Error, EOFError, OSError) as exc:
        raise ValueError(f"not a readable WAV ({type(exc).__name__})") from None
    return [(round(a, 3), round(b, 3)) for a, b in out]


__all__ = [
    "PAGE_CAP_BYTES",
    "AudioBudget",
    "Stretch",
    "TurnClip",
    "agent_sound",
    "clips",
    "cut_wav",
    "recording_of",
    "stretches",
    "wav_seconds",
]
