"""Sound for a live gallery play: the example's two lanes voiced with espeak-ng.

Every stretch of speech on the timeline (agent and caller) is synthesized up front,
in two voices, and fitted to the stretch's length on the text clock (re-spoken
faster when espeak's reading is longer, then trimmed). During play each clip
starts when its stretch starts: the agent's as the player's main voice, the
caller's mixed on top, so an overlap is heard exactly where it is drawn. The call
is deterministic, so the live loop's timings are the ones the clips were cut to.
A short sound written in parentheses, like "(cough)", is a noise burst, not a word.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from replay.gallery.runner import GalleryRun

if TYPE_CHECKING:
    from replay.gallery.live import ScaledClock

Audio = npt.NDArray[np.float32]
RATE = 16_000
BASE_WPM = 165
MAX_WPM = 400
FADE_S = 0.015


@dataclass(frozen=True)
class Cue:
    t: float
    lane: Literal["agent", "caller"]
    audio: Audio
    text: str


def _trim_silence(audio: Audio, floor: float = 0.01) -> Audio:
    loud = np.flatnonzero(np.abs(audio) > floor)
    return audio[loud[0] : loud[-1] + 1] if loud.size else audio[:0]


def fit(audio: Audio, seconds: float) -> Audio:
    """``audio`` cut (with a short fade) or padded with silence to ``seconds``."""
    n = max(0, round(seconds * RATE))
    out = np.zeros(n, dtype=np.float32)
    take = min(n, audio.size)
    out[:take] = audio[:take]
    if audio.size > n and n:
        fade = min(n, int(FADE_S * RATE))
        out[n - fade :] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
    return out


def noise_burst(seconds: float, seed: int = 7) -> Audio:
    """A cough-like burst: smoothed noise under a fast-attack, slow-decay envelope."""
    n = max(1, int(seconds * RATE))
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(n).astype(np.float32)
    smooth = np.convolve(noise, np.ones(6, dtype=np.float32) / 6, mode="same")
    env = np.minimum(1.0, np.arange(n) / (0.01 * RATE)) * np.exp(-np.arange(n) / (0.08 * RATE))
    out: Audio = (0.5 * smooth * env).astype(np.float32)
    return out


def _speak_fitted(make: Any, text: str, seconds: float) -> Audio:
    audio = _trim_silence(make(BASE_WPM).synthesize(text).audio)
    if audio.size > seconds * RATE * 1.05 and seconds > 0:
        wpm = min(MAX_WPM, int(BASE_WPM * audio.size / (seconds * RATE)) + 5)
        audio = _trim_silence(make(wpm).synthesize(text).audio)
    return fit(audio, seconds)


def build_cues(run: GalleryRun, agent: Any, caller: Any) -> list[Cue]:
    """One fitted clip per drawn stretch. ``agent``/``caller``: wpm -> synthesizer."""
    cues: list[Cue] = []
    for span in run.timeline.spans:
        seconds = span.end - span.start
        if seconds <= 0.02:
            continue
        if span.text.startswith("(") and span.text.endswith(")"):
            audio = noise_burst(min(seconds, 0.35))
        else:
            audio = _speak_fitted(agent if span.lane == "agent" else caller, span.text, seconds)
        cues.append(Cue(round(span.start, 4), span.lane, audio, span.text))
    return sorted(cues, key=lambda c: c.t)


@dataclass
class EspeakVoice:
    """Plays a run's cues on ``player`` (a started ``sessions.speech.audio.Player``)."""

    player: Any
    agent_voice: str = "en-us"
    caller_voice: str = "en-us+f3"
    cues: list[Cue] = field(default_factory=list)
    _thread: threading.Thread | None = None

    def _synth(self, voice: str) -> Any:
        from sessions.speech.tts import EspeakTts

        return lambda wpm: EspeakTts(voice=voice, words_per_minute=wpm)

    def prepare(self, run: GalleryRun) -> None:
        self.cues = build_cues(run, self._synth(self.agent_voice), self._synth(self.caller_voice))

    def start(self, clock: ScaledClock, stop: threading.Event) -> None:
        self._thread = threading.Thread(
            target=play_cues, args=(self.cues, self.player, clock, stop), daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.player.stop()
        self.player.mixer.stop_overlays()

    def shutdown(self) -> None:
        self.close()
        self.player.close()


def play_cues(cues: list[Cue], player: Any, clock: Any, stop: threading.Event) -> None:
    """Start each cue when ``clock`` reaches it: agent clips as the main voice, caller mixed."""
    for cue in cues:
        while not stop.is_set():
            wait = cue.t - clock.now()
            if wait <= 0:
                break
            stop.wait(min(wait, 0.02))
        if stop.is_set():
            return
        if cue.lane == "agent":
            player.play(cue.audio)
        else:
            player.mix(cue.audio, cue.text)


def open_voice() -> tuple[EspeakVoice | None, str]:
    """Sound if espeak-ng and an output device are there; else None and the reason."""
    if shutil.which("espeak-ng") is None:
        return None, "text clock only (no sound: espeak-ng is not installed)"
    from sessions.speech.audio import Player
    from sessions.speech.devices import AudioUnavailable

    try:
        player = Player().start()
    except AudioUnavailable as exc:
        return None, f"text clock only (no sound: {exc})"
    return EspeakVoice(player), "sound: espeak-ng (agent and caller in two voices)"
