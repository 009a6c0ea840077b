"""The human style's hesitations in the caller's audio: real espeak-ng, Silero VAD and the
pause detector meet a silence of human length where the speaker broke off, fillers are
filled pauses, and the paper style's audio is what it always was."""

from __future__ import annotations

import html

import numpy as np
import pytest

from controls import inject_disfluency
from controls.disfluency import HUMAN_PROFILE, InsertionKind
from controls.disfluency_human import inject_human
from controls.pauses import PauseEventKind
from sessions.speech.hesitation import (
    BREAK_OFF_S,
    FILLED_PAUSE_S,
    FILLER_SILENCE_S,
    filler_of,
    hesitant_pieces,
)
from sessions.speech.speech_clock import SpeakingStyle, plan
from sessions.speech.timing import voiced_spans
from sessions.speech.tts import EspeakTts, hesitant_ssml, speak_caller
from sessions.speech.vad import SileroOnnxVad, detect_pauses
from tests.speech.signals import inner_silences

TOLERANCE_S = 0.060
TEXT = "I would like to change the flight to Denver for my daughter and me please"


def _restart_turn() -> tuple[str, int]:
    """A human-style rendering of TEXT with exactly one self-correction, a restart, and no
    other break or pause token; and the index of its broken-off word in the rendered text."""
    for seed in range(500):
        result = inject_human(TEXT, 0.9, seed=seed)
        kinds = {i.kind for i in result.insertions}
        if kinds & {InsertionKind.RESTART} and not kinds & {
            InsertionKind.REPAIR,
            InsertionKind.PAUSE,
        }:
            words = result.rendered.split()
            broken = [k for k, w in enumerate(words) if w.endswith("—")]
            if len(broken) == 1:
                return result.rendered, broken[0]
    raise AssertionError("no seed gives a lone restart")


def test_hesitant_ssml_escapes_hostile_caller_text() -> None:
    ssml, _ = hesitant_ssml('um, <break time="9s"/> & <speak>— the—')
    assert "&lt;break" in ssml and "&amp;" in ssml and "&lt;speak&gt;" in ssml
    # Only our own markup remains: the filler's prosody, its silence and the silences
    # after the two broken-off words ("<speak>—" is one, said as text).
    assert ssml.count("<break") == 3 and ssml.count("<prosody") == 1
    assert ssml.count("<speak>") == 1
    assert f'<break time="{round(BREAK_OFF_S * 1000)}ms"/>' in ssml


def test_pieces_give_break_offs_and_fillers_their_timing() -> None:
    pieces = hesitant_pieces("Um, I want the— I need the — blue one")
    said = [(p.word, p.filler, p.silence_after) for p in pieces]
    assert said[0] == ("Um", "um", FILLER_SILENCE_S["um"])
    assert ("the", "", BREAK_OFF_S) in said
    assert ("", "", BREAK_OFF_S) in said  # the standalone pause token
    assert [p.written for p in pieces if p.word][-1] == "one"


def test_a_restart_is_heard_as_a_pause_at_the_break_off(
    espeak: EspeakTts, onnx_vad: SileroOnnxVad
) -> None:
    rendered, broken = _restart_turn()
    speech = speak_caller(espeak, rendered, hesitations=True)
    # Where the broken-off word ends, by the timing estimate of the synthesized audio.
    cut = speech.words[broken].end
    gaps = [(a, b) for a, b in inner_silences(speech.audio, min_s=0.1) if abs(a - cut) < 0.15]
    assert len(gaps) == 1, (rendered, cut, inner_silences(speech.audio, min_s=0.1))
    onset, end = gaps[0]
    assert end - onset >= BREAK_OFF_S - TOLERANCE_S
    # Silero + the pause detector: a short pause fires in that silence, which starts
    # there and lasts the documented length.
    events = detect_pauses(speech.audio, onnx_vad).events
    fired = [
        e
        for e in events
        if e.kind is PauseEventKind.SHORT_PAUSE and e.silence_start is not None
        if onset - TOLERANCE_S <= e.silence_start <= onset + TOLERANCE_S
    ]
    assert len(fired) == 1, [e.as_dict() for e in events]
    resumed = [
        e.t for e in events if e.kind is PauseEventKind.SPEECH_START and e.t > fired[0].t
    ] or [end]
    heard = min(resumed) - fired[0].silence_start  # type: ignore[operator]
    assert heard >= BREAK_OFF_S - TOLERANCE_S, heard
    # Said as written (the paper path), the dash is only espeak's clause pause.
    plain = espeak.synthesize(rendered)
    plain_gaps = [g for g in inner_silences(plain.audio, min_s=0.1) if abs(g[0] - cut) < 0.3]
    assert all(b - a < BREAK_OFF_S - TOLERANCE_S for a, b in plain_gaps), plain_gaps


def test_fillers_are_filled_pauses_um_longer_than_uh(espeak: EspeakTts) -> None:
    lengths = {}
    for filler in ("um", "uh"):
        audio = speak_caller(espeak, f"{filler}, I need the blue one", hesitations=True).audio
        first, second = voiced_spans(audio)[:2]
        lengths[filler] = first[1] - first[0]
        assert abs(lengths[filler] - FILLED_PAUSE_S[filler]) <= TOLERANCE_S, lengths
        assert second[0] - first[1] >= FILLER_SILENCE_S[filler] - TOLERANCE_S
        plain = voiced_spans(espeak.synthesize(f"{filler}, I need the blue one").audio)[0]
        assert plain[1] - plain[0] < lengths[filler] - 0.1  # as written it is a short syllable
    assert lengths["um"] > lengths["uh"]


def test_paper_style_audio_is_unchanged(espeak: EspeakTts) -> None:
    rendered = next(
        r.rendered
        for a in (0.6, 0.8, 1.0)
        if (r := inject_disfluency(TEXT, a)).insertions and "—" not in r.rendered
    )
    assert "um," in rendered or "uh," in rendered or "-" in rendered
    before = espeak.synthesize_ssml(
        "<speak>" + " ".join(html.escape(w, quote=False) for w in rendered.split()) + "</speak>"
    )
    now = speak_caller(espeak, rendered).audio
    assert np.array_equal(before, now)


def test_text_clock_gives_the_same_timing() -> None:
    rendered, broken = _restart_turn()
    human = SpeakingStyle(hesitations=True)
    words = plan(rendered, human, seed=3)
    assert words[broken + 1].start - words[broken].end == pytest.approx(BREAK_OFF_S)
    filled = plan("uh, um, fine", human, seed=3)
    assert filled[0].end - filled[0].start == pytest.approx(FILLED_PAUSE_S["uh"])
    assert filled[1].start - filled[0].end == pytest.approx(FILLER_SILENCE_S["uh"])
    assert filled[2].start - filled[1].end == pytest.approx(FILLER_SILENCE_S["um"])
    # Without hesitations (the paper style) the clock is what it was: a comma pause.
    paper = plan(rendered, SpeakingStyle(), seed=3)
    assert paper[broken + 1].start - paper[broken].end < 0.16
    # Words other than fillers keep their exact duration draws.
    assert [round(w.end - w.start, 9) for w in paper if not filler_of(w.word)] == [
        round(w.end - w.start, 9) for w in words if not filler_of(w.word)
    ]


LINES = (
    TEXT,
    "I would like to know if I can get a window seat on the later flight",
    "could you tell me what the change fee would be for the return leg",
    "we were hoping to travel together so can you put us in the same row",
    "and I need the receipt sent to the email address that is on my account",
)


def test_a_human_style_call_times_its_caller_hesitations() -> None:
    """A whole call on the text clock: every break-off in the logged user turns is
    followed by the break-off silence; a paper-style call has no hesitations."""
    from controls import Tendencies
    from sessions.agents.scripted import ScriptedAgent
    from sessions.call.config import CallConfig
    from sessions.call.setup.simulated_call import simulated_call
    from sessions.callers.users import ScriptedUser
    from sessions.log.models import UserTurn
    from sessions.scenarios import load_scenario

    def broken_off(text: str) -> int:
        return sum(len(w) > 1 and w.endswith("—") for w in text.split())

    turns = [t for t in LINES if broken_off(inject_human(t, 1.0).rendered)]
    assert turns, "no line breaks off at α = 1"
    shipped = load_scenario("retail-order-change")
    scenario = shipped.model_copy(update={"user": shipped.user.model_copy(update={"turns": turns})})
    events: list[object] = []
    config = CallConfig(scenario, Tendencies(1.0, 0.0, 0.0), profile=HUMAN_PROFILE)
    loop = simulated_call(
        config, ScriptedAgent(scenario), user=ScriptedUser(scenario), listeners=[events.append]
    )
    assert loop.voice.caller_hesitations
    loop.run_virtual(max_seconds=300)
    gaps = [
        b.start - a.end
        for turn in events
        if isinstance(turn, UserTurn)
        for a, b in zip(turn.words or [], (turn.words or [])[1:], strict=False)
        if broken_off(a.word)
    ]
    assert len(gaps) == sum(broken_off(inject_human(t, 1.0).rendered) for t in turns)
    assert all(g == pytest.approx(BREAK_OFF_S, abs=1e-3) for g in gaps), gaps
    paper = simulated_call(
        CallConfig(scenario), ScriptedAgent(scenario), user=ScriptedUser(scenario)
    )
    assert not paper.voice.caller_hesitations
