"""cutin's agent-side measures against an agent whose behaviour is known by construction.

Each test is one real-time call (`cutin call --agent twilio:...` as built by the plan:
one engine, a Twilio line on loopback, Silero VAD and faster-whisper on the agent's
audio) to examples/known_agent.py, whose truth file says what it heard and did on the
line's own sample clock. The log, read back from disk and through the audit, is
compared with that truth — never with cutin's own view of itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cutin_tui.views.call_view import CallView, NoteEntry
from cutin_tui.widgets.line_status import line_status_text
from replay.audit.agent_measures import call_of_session, call_row
from sessions.call.commands import CallerSoundNow, Command
from sessions.log.reader import read_session
from tests.measures.harness import KnownCall, dial
from tests.support.known_agent import running_known_agent

pytestmark = [
    pytest.mark.audio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng"),
]
TOL = 0.020
"""The issue's bound: a measure within 20 ms of the truth."""


def measures(call: KnownCall) -> dict[str, Any]:
    agent = call_of_session(read_session(call.log))
    assert agent is not None
    return call_row(agent)


def truth_near(records: list[dict[str, Any]], key: str, t: float) -> dict[str, Any]:
    """The truth record whose ``key`` time is nearest ``t``."""
    assert records, f"no truth records to match {t}"
    return min(records, key=lambda r: abs(r[key] - t))


def test_an_agent_that_ignores_short_sounds_has_no_false_yields(tmp_path: Path) -> None:
    with running_known_agent("--ignore-shorter-ms", "800") as agent:
        call = dial(agent, tmp_path, gamma=1.0, seconds=32)
    assert not call.truth("stop"), "the agent never stops for a short sound"
    ignored = call.truth("ignored")
    scored = [y for y in call.of("agent_yield") if not y.already_silent]
    assert len(scored) >= 2, "γ = 1 must backchannel in the agent's long reply"
    assert not any(y.yielded for y in scored)
    for y in scored:  # each is a sound the agent heard over its speech and let pass
        heard = truth_near(ignored, "onset_t", y.onset_t)
        assert abs(heard["onset_t"] - y.onset_t) <= TOL
    # A backchannel in the silence after a finished answer is no false yield.
    done = [call.on_line(r["t"]) for r in call.truth("done")]
    for y in call.of("agent_yield"):
        if y.already_silent:
            assert y.stop_t is not None and any(abs(d - y.stop_t) <= TOL for d in done)
    m = measures(call)
    assert m["false_yields"] == 0 and m["false_yield_rate"] == 0.0
    assert m["selectivity_backchannel"] == 1.0


def test_an_agent_that_stops_on_any_sound_false_yields_every_time(tmp_path: Path) -> None:
    # The caller waits 3 s before its next line, so the agent's answer to the
    # backchannel comes first: its latency is timed from the backchannel.
    with running_known_agent("--yield-after-ms", "300", "--answer-after-ms", "800") as agent:
        call = dial(agent, tmp_path, gamma=1.0, seconds=34, user_wait_s=3.0)
    stops = call.truth("stop")
    scored = [y for y in call.of("agent_yield") if not y.already_silent]
    assert len(scored) >= 2 and all(y.yielded for y in scored)
    for y in scored:
        truth = truth_near(stops, "onset_t", y.onset_t)
        stop = call.on_line(truth["t"])  # where its last sound played
        assert y.latency_s is not None and y.stop_t is not None
        assert abs(y.stop_t - stop) <= TOL, (y, truth, stop)
        assert abs(y.latency_s - (stop - truth["onset_t"])) <= TOL, (y, truth, stop)
    m = measures(call)
    assert m["false_yield_rate"] == 1.0 and m["selectivity_backchannel"] == 0.0
    # Response latency after a backchannel: from the backchannel's end, not 13 s back.
    after_bc = [s for s in call.of("agent_turn_start") if s.response_to == "backchannel"]
    assert after_bc
    ends = call.truth("sound_end")
    answers = [r for r in call.truth("speak") if r["why"] == "answer"]
    for s in after_bc:
        spoke = truth_near(answers, "sound_t", s.t)
        heard_end = max(r["t"] for r in ends if r["t"] <= spoke["t"])
        onset = call.on_line(spoke["sound_t"], before=False)
        assert abs(s.response_latency_s - (onset - heard_end)) <= TOL, (s, spoke, onset)
    assert m["backchannel_response_latency_mean"] < 1.0
    assert all(v < 5.0 for v in [s.response_latency_s for s in call.of("agent_turn_start")] if v)


def test_a_short_resumption_after_a_pause_is_part_of_the_yield(tmp_path: Path) -> None:
    # It stops 300 ms after the caller's onset, then makes a 50 ms sound 100 ms later:
    # the stop is the end of that sound (the VAD does not call 50 ms speech), not of
    # its speech before.
    args = ("--yield-after-ms", "300", "--resume-ms", "50", "--resume-gap-ms", "100")
    with running_known_agent(*args) as agent:
        call = dial(agent, tmp_path, beta=1.0, seconds=30)
    stops = call.truth("stop")
    cuts = [y for y in call.of("agent_yield") if y.after == "interruption"]
    assert cuts and stops
    for y in cuts:
        truth = truth_near(stops, "onset_t", y.onset_t)
        assert y.yielded and not y.already_silent
        latency = call.on_line(truth["t"]) - truth["onset_t"]  # to the burst's end
        assert y.latency_s is not None and latency > 0.4
        assert abs(y.latency_s - latency) <= TOL, (y, truth, latency)


SHORT = [
    "I would like to change my delivery address please.",
    "Sorry, one moment.",
    "Hello, are you still there?",
]
"""The second line is the barge-in: short, so the silence after it is the agent's."""


def test_an_agent_that_goes_silent_after_a_barge_in_is_a_no_response(tmp_path: Path) -> None:
    with running_known_agent("--yield-after-ms", "300", "--answers", "1") as agent:
        call = dial(agent, tmp_path, beta=1.0, seconds=36, user_wait_s=10.0, user_turns=SHORT)
    assert call.truth("stop"), "β = 1 must barge in on its one answer"
    missed = [e for e in call.of("line") if e.kind == "no_response"]
    assert missed, "no no_response in the log"
    first = missed[0]
    assert first.data["after"] == "interruption"
    heard_end = truth_near(call.truth("sound_end"), "t", first.data["caller_end_t"])
    assert abs(first.data["caller_end_t"] - heard_end["t"]) <= TOL
    assert first.t - first.data["caller_end_t"] == pytest.approx(5.0, abs=0.05)
    # On the call screen as it happens: a note and the line's status.
    view = CallView()
    view.apply(call.events)
    notes = [e.text for e in view.entries if isinstance(e, NoteEntry)]
    assert f"no response: {first.detail}" in notes
    assert view.line is not None and "no response ×" in line_status_text(view.line)
    # Counted in the audit.
    m = measures(call)
    assert m["no_responses"] == len(missed) and m["response_rate"] is not None
    assert m["response_rate"] < 1.0


HESITANT = [
    "I would like to change — the delivery address on my order please.",
    "It is the order — ending in four eight two one three.",
    "Thank you, that is — all I needed today.",
]


@pytest.mark.parametrize(("talks_into_pauses", "expect"), [(True, True), (False, False)])
def test_talking_into_the_callers_hesitation_is_an_agent_interruption(
    tmp_path: Path, talks_into_pauses: bool, expect: bool
) -> None:
    # The caller's "—" is a 400 ms silence inside its turn: the bait.
    args = ["--gap-ms", "150", "--answer-after-ms", "1000"]
    if talks_into_pauses:
        args += ["--talk-into-pauses-after-ms", "300"]
    with running_known_agent(*args) as agent:
        call = dial(agent, tmp_path, seconds=30, user_turns=HESITANT)
    barged = [r for r in call.truth("speak") if r["why"] == "talk_into_pause"]
    over = [s for s in call.of("agent_turn_start") if s.over_caller]
    assert bool(barged) is expect and bool(over) is expect
    for s in over:
        spoke = truth_near(barged, "sound_t", s.t)
        assert abs(call.on_line(spoke["sound_t"], before=False) - s.t) <= TOL
    m = measures(call)
    assert (m["agent_interruption_rate"] or 0.0) > 0.0 if expect else m["agent_interruptions"] == 0


def test_dead_air_is_the_known_silences(tmp_path: Path) -> None:
    with running_known_agent("--gap-ms", "700", "--answer-after-ms", "900") as agent:
        call = dial(agent, tmp_path, seconds=24)
    m = measures(call)
    # The truth's floor: each agent turn from its first to its last sound, each caller
    # sound (merged over its gaps under 700 ms) from its start to its end.
    spans: list[tuple[float, float]] = []
    starts = call.truth("speak")
    ends = [r["t"] for r in call.records if r["event"] in ("done", "stop")]
    onsets = []
    for start in starts:
        after = [e for e in ends if e > start["sound_t"]]
        onset = call.on_line(start["sound_t"], before=False)
        onsets.append(onset)
        try:
            end = call.on_line(min(after)) if after else m["duration_s"]
        except AssertionError:  # it was still talking when the call ended
            end = m["duration_s"]
        spans.append((onset, end))
    on = None
    for r in call.records:
        if r["event"] == "sound_start":
            on = r["t"]
        elif r["event"] == "sound_end" and on is not None:
            spans.append((on, r["t"]))
            on = None
    spans.sort()
    covered, at = 0.0, 0.0
    for a, b in spans:
        b = min(b, m["duration_s"])
        if b > at:
            covered += b - max(a, at)
            at = b
    truth_dead_air = m["duration_s"] - covered
    assert truth_dead_air > 2.0
    assert abs(m["dead_air_s"] - truth_dead_air) <= 0.1, (m["dead_air_s"], truth_dead_air)
    # Agent-side times to the sample: each agent turn's onset against its first sound.
    for s in call.of("agent_turn_start"):
        assert min(abs(o - s.t) for o in onsets) <= 0.005, (s, onsets)


SOUNDS = [
    (3.6, "vocal_tic"),
    (8.0, "non_directed"),
    (11.0, "vocal_tic"),
    (14.0, "non_directed"),
    (20.0, "vocal_tic"),
]
"""A tic in the silence after the greeting, then side talk and tics later on: which fall
in the agent's speech or silence depends on the agent; one while the caller speaks or
waits for an answer is not scored (an answer could be to the caller)."""


@pytest.mark.parametrize("selective", [True, False])
def test_vocal_tics_and_side_talk_selectivity(tmp_path: Path, selective: bool) -> None:
    # Selective: it needs 400 ms of sound that begins louder than side talk at −12 dB
    # (side talk peaks near −24 dBFS in 20 ms frames, the caller's speech near −12), to stop or
    # answer; the other stops 300 ms into any sound and answers any sound.
    args = ["--ignore-shorter-ms", "400", "--level-db", "-20"] if selective else []
    commands: list[tuple[float, Command]] = [(t, CallerSoundNow(k)) for t, k in SOUNDS]
    with running_known_agent(*args, "--yield-after-ms", "300") as agent:
        call = dial(agent, tmp_path, seconds=30, user_wait_s=3.0, commands=commands)
    sounds = call.of("caller_sound")
    assert [s.kind for s in sounds] == [k for _, k in SOUNDS]
    heard = call.truth("sound_start")
    scored = [
        y
        for y in call.of("agent_yield")
        if y.after in ("vocal_tic", "non_directed") and not y.already_silent
    ]
    assert len(scored) >= 2 and {y.after for y in scored} == {"vocal_tic", "non_directed"}
    errors = [y for y in scored if y.yielded or y.responded]
    m = measures(call)
    if selective:
        assert not errors and not call.truth("stop")
        assert m["selectivity_vocal_tic"] == 1.0 and m["selectivity_non_directed"] == 1.0
    else:
        assert len(errors) == len(scored)
        assert m["selectivity_vocal_tic"] == 0.0 and m["selectivity_non_directed"] == 0.0
        first = sounds[0]  # in silence: it heard it where cutin says it played
        assert abs(truth_near(heard, "t", first.t)["t"] - first.t) <= TOL
