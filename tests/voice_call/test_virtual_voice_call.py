"""Voice calls on the virtual clock: real espeak-ng audio, real Silero VAD, no device.

The agent's pauses, the cut word, the talk-over and the recording are all checked
against the audio itself (the 2-channel WAV the call writes), not against the
timings the code under test reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sessions.call.commands import InterruptNow
from sessions.call.voice.audio_voice import AudioSpeechTrack
from sessions.speech import SAMPLE_RATE
from sessions.speech.backchannel_cache import BackchannelCache
from sessions.speech.tts import EspeakTts
from sessions.speech.vad import talk_over_from_audio
from tests.voice_call.helpers import VoiceCall, make_scenario, rms, run_voice_call
from tests.voice_call.measure import envelope, locate

pytestmark = pytest.mark.usefixtures("espeak_ok")

# Commas (espeak pauses 170-220 ms there by itself) and sentence ends; no SSML.
PAUSES_TURN = (
    "Thanks for calling. I can see the address on file, the one on Elm Street, from last "
    "year. It ships tomorrow, from Dallas, by truck. The refund was approved this morning, "
    "and it should reach you within a few days. Is there anything else?"
)
LONG_TURN = (
    "I have your order open here. It is packed at our warehouse and it has not gone out "
    "yet. The address on file is the Elm Street one from last year. We can still change "
    "it today at no cost. The parcel should arrive on Thursday as planned. I will send you "
    "an email with the details once it is done."
)
FIRST = "Hello, this is the order line. What can I do for you?"


def agent_words(call: VoiceCall, turn: int) -> list[Any]:
    return [w for e in call.of("agent_words") if e.turn == turn for w in e.words]


def keep_tracks(call_voice: Any) -> list[AudioSpeechTrack]:
    """Remember every track the voice makes (the test reads their planned words)."""
    made: list[AudioSpeechTrack] = []
    make = call_voice.track

    def track(*args: Any) -> AudioSpeechTrack:
        made.append(make(*args))
        return made[-1]

    call_voice.track = track
    return made


def test_short_pauses_come_from_vad_on_the_agents_audio(tmp_path: Path) -> None:
    call = run_voice_call(make_scenario(PAUSES_TURN), tmp_path)
    words = agent_words(call, 0)
    assert " ".join(w.word for w in words) == PAUSES_TURN
    pauses = [e for e in call.of("short_pause") if e.turn == 0]
    sentence_ends = [w for w in words[:-1] if w.word.endswith((".", "?"))]
    comma_words = [w for w in words if w.word.endswith(",")]
    assert len(comma_words) == 5 and len(sentence_ends) == 4
    # Every sentence end pauses; no comma does.
    for w in sentence_ends:
        near = [p for p in pauses if w.end - 0.15 <= p.silence_start <= w.end + 0.25]
        assert len(near) == 1, (w, [p.silence_start for p in pauses])
    for p in pauses:
        assert any(
            w.end - 0.15 <= p.silence_start <= w.end + 0.25 for w in words[-1:] + sentence_ends
        )
    agent, _caller = call.recording()
    env = envelope(agent)
    # The detector saw silence because there was silence: the agent channel is quiet
    # from the detected silence start (plus the VAD's own latency) until the pause fired.
    for p in pauses:
        a, b = round((p.silence_start + 0.04) * 1000), round(p.t * 1000)
        assert env[a:b].max() < 0.01, (p.silence_start, p.t)
    # The commas do pause in the audio (the 80 ms breaks) -- too short to be an opportunity.
    for w in comma_words:
        a, b = round((w.end - 0.05) * 1000), round((w.end + 0.3) * 1000)
        quiet = np.flatnonzero(env[a:b] < 0.003)
        assert quiet.size >= 40, w  # at least 40 ms of silence there
        assert quiet.size < 200, w


def test_an_interruption_cuts_at_the_played_position(tmp_path: Path) -> None:
    sc = make_scenario(LONG_TURN)
    call = run_voice_call(sc, tmp_path, schedule=[(3.0, InterruptNow("Sorry, one moment."))])
    cut = next(e for e in call.of("agent_turn_end") if e.turn == 0)
    interruption = call.of("interruption")[0]
    assert cut.interrupted and cut.cut_t == interruption.cut_t == pytest.approx(3.008)
    assert cut.talk_over_s == 0.0
    reported = agent_words(call, 0)
    # Spoken = exactly the words whose audio had ended by the cut.
    assert cut.cut_word == len(reported) == interruption.cut_word
    assert all(w.end <= cut.cut_t for w in reported)
    assert cut.spoken == " ".join(w.word for w in reported)
    assert (cut.spoken + " " + cut.unspoken).split() == LONG_TURN.split()
    agent, caller = call.recording()
    assert rms(agent, cut.cut_t - 0.5, cut.cut_t) > 0.01  # it was speaking
    next_turn = next(e for e in call.of("agent_turn_start") if e.turn == 1)
    assert (
        np.abs(agent[round(cut.cut_t * SAMPLE_RATE) : round(next_turn.t * SAMPLE_RATE)]).max()
        == 0.0
    )
    # The caller's line starts on the caller channel at the cut.
    user = call.of("user_turn")[0]
    assert user.source == "interruption" and user.t == cut.cut_t
    assert rms(caller, user.t, user.t + 0.5) > 0.01


def test_interrupt_at_an_earlier_onset_logs_the_talk_over(tmp_path: Path) -> None:
    sc = make_scenario(LONG_TURN)
    call = run_voice_call(
        sc, tmp_path, schedule=[(3.0, InterruptNow("Sorry, one moment.", at=2.5))]
    )
    cut = next(e for e in call.of("agent_turn_end") if e.turn == 0)
    interruption = call.of("interruption")[0]
    assert interruption.t == pytest.approx(3.008) and interruption.cut_t == 2.5
    assert cut.cut_t == 2.5
    # The agent went on from the caller's onset until the cut was executed.
    assert cut.talk_over_s == pytest.approx(0.508, abs=1e-3)
    reported = agent_words(call, 0)
    spoken = [w for w in reported if w.end <= 2.5]
    assert cut.cut_word == len(spoken) and cut.spoken == " ".join(w.word for w in spoken)
    agent, _caller = call.recording()
    assert rms(agent, 2.5, 3.0) > 0.01  # the talk-over is in the recording
    assert np.abs(agent[round(3.01 * SAMPLE_RATE) : round(4.0 * SAMPLE_RATE)]).max() == 0.0


def test_an_agent_that_does_not_yield_talks_over_and_it_is_measured(tmp_path: Path) -> None:
    sc = make_scenario(LONG_TURN, yields=False)
    call = run_voice_call(sc, tmp_path, schedule=[(3.0, InterruptNow("Sorry, one moment."))])
    end = next(e for e in call.of("agent_turn_end") if e.turn == 0)
    assert end.interrupted and end.cut_t == pytest.approx(3.008)
    assert end.spoken == LONG_TURN  # it said everything
    agent, caller = call.recording()
    turn_end = round(end.t * SAMPLE_RATE)
    independent = talk_over_from_audio(agent[:turn_end], end.cut_t)
    assert end.talk_over_s > 5.0
    assert end.talk_over_s == pytest.approx(independent, abs=0.15)
    # Both talk at once: the caller's line overlaps the agent in the recording.
    user = call.of("user_turn")[0]
    assert rms(agent, user.t, user.t + 1.0) > 0.01 and rms(caller, user.t, user.t + 1.0) > 0.01


def test_recording_has_both_sides_on_the_call_clock(tmp_path: Path, voice_cache: Path) -> None:
    sc = make_scenario(FIRST, LONG_TURN, user_turns=("I would like to change my address.",))
    call = run_voice_call(sc, tmp_path, gamma=1.0, alpha=0.5)
    agent, caller = call.recording()
    end = call.of("end")[0]
    seconds = agent.size / SAMPLE_RATE
    assert end.t <= seconds <= end.t + 1.0
    # Agent energy where the agent's words are.
    words = [w for e in call.of("agent_words") for w in e.words]
    loud = [rms(agent, w.start, w.end) > 0.005 for w in words]
    assert sum(loud) >= 0.9 * len(words)
    # Each backchannel token is on the caller channel where the event says.
    tokens = BackchannelCache(EspeakTts(voice="en-gb+f3"), voice_cache).load()
    backchannels = call.of("backchannel")
    assert len(backchannels) >= 2
    for b in backchannels:
        token = tokens.get(b.token)
        a = round(b.t * SAMPLE_RATE)
        found, score = locate(
            caller[a - SAMPLE_RATE // 10 : a + token.size + SAMPLE_RATE // 10], token
        )
        assert score > 0.99 and abs(found - SAMPLE_RATE // 10) <= 2, (b.token, found, score)
        assert rms(agent, b.t - 0.2, b.t + 0.03) < 0.005  # it starts in the agent's pause
    # The caller's typed line, spoken: its audio fills [t, end_t] on the caller channel.
    user = call.of("user_turn")[0]
    env = envelope(caller)
    sound = np.flatnonzero(env[round(user.t * 1000) : round((user.end_t + 0.5) * 1000)] > 0.01)
    first, last = user.t + sound[0] / 1000, user.t + sound[-1] / 1000
    assert first == pytest.approx(user.t, abs=0.05)
    assert last == pytest.approx(user.end_t, abs=0.1)


def test_the_caller_holds_the_floor_for_their_audio(tmp_path: Path) -> None:
    line = "I would like to change the delivery address on my order, please."
    sc = make_scenario(FIRST, "Sure.", user_turns=(line,))
    call = run_voice_call(sc, tmp_path)
    user = call.of("user_turn")[0]
    duration = user.end_t - user.t
    assert duration > 2.5  # espeak at 165 wpm: about 3.5 s
    start = next(e for e in call.of("agent_turn_start") if e.turn == 1)
    assert start.t >= user.end_t + 0.5  # the agent's latency after the caller's audio


def test_the_same_call_twice_is_the_same_call(tmp_path: Path) -> None:
    sc = make_scenario(FIRST, LONG_TURN, user_turns=("Change my address, please.",))
    a = run_voice_call(sc, tmp_path / "a", gamma=1.0, beta=1.0, alpha=1.0, seed=3)
    b = run_voice_call(sc, tmp_path / "b", gamma=1.0, beta=1.0, alpha=1.0, seed=3)
    assert [e.model_dump() for e in a.events] == [e.model_dump() for e in b.events]
    assert a.wav.read_bytes() == b.wav.read_bytes()


def test_planned_words_of_a_cut_turn_are_the_tracks(tmp_path: Path) -> None:
    # The cut word is the index of the first word not fully played, from the track's timings.
    from sessions.call.setup.voice import VoiceSpec, build_audio_voice

    voice = build_audio_voice(VoiceSpec(speech="espeak"), realtime=False)
    tracks = keep_tracks(voice)
    track = voice.track("agent", 0, 0)
    track.add_text(LONG_TURN, 0.0, final=True)
    assert tracks == [track]
    cut = 2.0
    n = track.heard(cut)
    assert all(w.end <= cut for w in track.words[:n]) and track.words[n].end > cut
    assert track.stop(cut) == cut
    assert track.speech_prob(2.016, 2.048) == 0.0 and track.end == cut
    voice.close()
