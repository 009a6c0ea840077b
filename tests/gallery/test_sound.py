"""Sound for live play: the drawn stretches voiced by real espeak-ng, cut to fit."""

from __future__ import annotations

import shutil
import threading

import numpy as np
import numpy.typing as npt
import pytest

from replay.gallery import load_gallery, run_entry
from replay.gallery.sound import RATE, EspeakVoice, fit, noise_burst, play_cues
from sessions.clock import VirtualClock
from sessions.speech.mixer import Mixer

pytestmark = [
    pytest.mark.audio,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed"),
]


class MixerOut:
    """The device-free mixer behind the real Player, under the Player's two method names."""

    def __init__(self) -> None:
        self.mixer = Mixer()
        self.calls: list[str] = []

    def play(self, audio: npt.NDArray[np.float32], *, more_coming: bool = False) -> None:
        self.calls.append("agent")
        self.mixer.play(audio, more_coming=more_coming)

    def mix(self, audio: npt.NDArray[np.float32], token: str = "") -> None:
        self.calls.append("caller")
        self.mixer.overlay(audio, token)

    def stop(self) -> float:
        return self.mixer.stop()


def test_every_drawn_stretch_gets_a_clip_of_its_length() -> None:
    run = run_entry(load_gallery().get("talk-over"))
    voice = EspeakVoice(player=MixerOut())
    voice.prepare(run)
    spans = [s for s in run.timeline.spans if s.end - s.start > 0.02]
    assert len(voice.cues) == len(spans)
    for cue, span in zip(voice.cues, sorted(spans, key=lambda s: s.start), strict=True):
        assert cue.lane == span.lane and cue.t == round(span.start, 4)
        assert abs(cue.audio.size / RATE - (span.end - span.start)) < 0.002
        assert np.abs(cue.audio).max() > 0.05, f"espeak said nothing for {span.text!r}"


def test_a_cough_is_a_noise_not_the_word() -> None:
    run = run_entry(load_gallery().get("false-interruption"))
    voice = EspeakVoice(player=MixerOut())
    voice.prepare(run)
    (cough,) = [c for c in voice.cues if c.text == "(cough)"]
    assert cough.lane == "caller"
    assert np.array_equal(cough.audio[: RATE // 10], fit(noise_burst(0.35), 0.45)[: RATE // 10])


def test_cues_go_to_the_agent_voice_or_are_mixed_over_it() -> None:
    run = run_entry(load_gallery().get("talk-over"))
    out = MixerOut()
    voice = EspeakVoice(player=out)
    voice.prepare(run)
    clock = VirtualClock(t=1000.0)  # past every cue: all start at once, in order
    play_cues(voice.cues, out, clock, threading.Event())
    assert out.calls == [c.lane for c in voice.cues]
    assert "caller" in out.calls and "agent" in out.calls
    block = out.mixer.render(RATE // 2)
    assert np.abs(block).max() > 0.0


def test_fit_pads_or_cuts_with_a_fade() -> None:
    tone = np.ones(RATE, dtype=np.float32)
    assert fit(tone, 0.5).size == RATE // 2 and fit(tone, 0.5)[-1] == 0.0
    padded = fit(tone, 2.0)
    assert padded.size == 2 * RATE and padded[RATE:].max() == 0.0
