"""The tester's microphone as the loop sees it: an onset, then the words (STT), on the
virtual clock. The onset cuts a speaking agent there; the floor stays with the tester
until the words arrive."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions.call.commands import CallerSpeechStart, CallerUtterance
from tests.call.helpers import run_call
from tests.voice_call.helpers import make_scenario, rms, run_voice_call

LONG = (
    "I have your order open here. It is packed at our warehouse and it has not gone out "
    "yet. The address on file is the Elm Street one from last year. We can still change "
    "it today at no cost."
)
SAID = "I need to change my address."
WORDS = (("I", 2.5, 2.6), ("need", 2.6, 2.9), ("to", 2.9, 3.0), ("change", 3.0, 3.4))


def mic_schedule(onset: float = 2.5, seen: float = 2.6, words_at: float = 5.0) -> list:
    return [
        (seen, CallerSpeechStart(at=onset)),
        (words_at, CallerUtterance(SAID, onset, 4.0, WORDS)),
    ]


@pytest.mark.usefixtures("espeak_ok")
def test_speaking_over_the_agent_cuts_it_at_the_onset(tmp_path: Path) -> None:
    call = run_voice_call(
        make_scenario(LONG, "Sure, what is the new address?"),
        tmp_path,
        headless_user=False,
        schedule=mic_schedule(),
        max_seconds=20.0,
    )
    interruption = call.of("interruption")[0]
    cut = next(e for e in call.of("agent_turn_end") if e.turn == 0)
    assert interruption.trigger == "manual" and interruption.text == ""
    assert interruption.model_extra == {"source": "mic"}
    assert interruption.cut_t == cut.cut_t == 2.5
    assert interruption.t == pytest.approx(2.624)  # the first frame after it was seen
    assert cut.talk_over_s == pytest.approx(0.124, abs=1e-3)
    words = [w for e in call.of("agent_words") if e.turn == 0 for w in e.words]
    assert cut.spoken == " ".join(w.word for w in words if w.end <= 2.5)
    # Nothing happens on the agent's side while the tester holds the floor.
    held = [e for e in call.events if 2.624 < e.t < 5.0 and e.type != "user_turn"]
    assert held == []
    user = call.of("user_turn")[0]
    assert (user.source, user.original, user.rendered) == ("mic", SAID, SAID)
    assert (user.t, user.end_t) == (2.5, 4.0)
    assert [(w.word, w.start, w.end) for w in user.words] == [tuple(w) for w in WORDS]
    reply = next(e for e in call.of("agent_turn_start") if e.turn == 1)
    assert reply.t >= 5.0 + 0.5  # after the words, plus the agent's latency
    assert [m.content for m in call.loop.history if m.role == "user"] == [SAID]
    agent, _caller = call.recording()
    assert rms(agent, 2.0, 2.5) > 0.01 and rms(agent, 2.64, 5.0) == 0.0


def test_the_text_clock_takes_microphone_commands_too() -> None:
    _loop, events, spy = run_call(
        make_scenario(LONG, "Sure, what is the new address?"),
        headless_user=False,
        schedule=mic_schedule(),
        max_seconds=20.0,
    )
    cut = next(e for e in events if e.type == "agent_turn_end")
    assert cut.cut_t == 2.5 and cut.talk_over_s == pytest.approx(0.124, abs=1e-3)
    # The agent's next reply saw the truncated turn and the tester's words.
    last = spy.seen[-1]
    assert last[-2].truncated and last[-1].content == SAID


def test_an_onset_when_the_floor_is_free_makes_the_agent_wait() -> None:
    schedule = [
        (8.0, CallerSpeechStart(at=7.9)),
        (14.0, CallerUtterance(SAID, 7.9, 13.0)),
    ]
    _loop, events, _spy = run_call(
        make_scenario("Hello.", "Sure."), headless_user=False, schedule=schedule, max_seconds=20
    )
    assert not [e for e in events if e.type == "interruption"]
    reply = next(e for e in events if e.type == "agent_turn_start" and e.turn == 1)
    assert reply.t >= 14.0


def test_noise_that_stt_makes_nothing_of_gives_the_floor_back() -> None:
    schedule = [(8.0, CallerSpeechStart(at=7.9)), (9.0, CallerUtterance("  ", 7.9, 8.5))]
    loop, events, _spy = run_call(
        make_scenario("Hello.", "Sure."), headless_user=False, schedule=schedule, max_seconds=12
    )
    assert not [e for e in events if e.type in ("user_turn", "interruption")]
    # The agent does not answer a silence: the floor waits for the tester again.
    assert not [e for e in events if e.type == "agent_turn_start" and e.turn == 1]
    assert loop.end_reason == "time_limit"


def test_an_agent_that_does_not_yield_hears_the_words_after_its_turn() -> None:
    _loop, events, spy = run_call(
        make_scenario(LONG, "Sure.", yields=False),
        headless_user=False,
        schedule=mic_schedule(),
        max_seconds=40.0,
    )
    interruption = next(e for e in events if e.type == "interruption")
    end = next(e for e in events if e.type == "agent_turn_end" and e.turn == 0)
    assert interruption.cut_t == 2.5 and end.spoken == LONG
    assert end.talk_over_s > 5.0
    # The words were held until the agent finished, then came after its turn.
    roles = [(m.role, m.content) for m in spy.seen[-1]]
    assert roles[-2:] == [("assistant", LONG), ("user", SAID)]
