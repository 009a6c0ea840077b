"""The far ends' parts, each on its own, on a call context made by hand (no engine, no
line, no STT): the caller's mouth on a line, the line's caller acts and yields, the
barge-in part, and the simulated caller over the floor. Their inputs are known by
construction (a synthesized "speech" of a tone between two silences, exact to the
sample), and the far ends are checked to be made of parts, not of base classes."""

from __future__ import annotations

import ast
import random
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from controls.pauses import PauseDetector
from controls.tendencies import Tendencies
from sessions.agents.base import Message
from sessions.call.commands import (
    CallerSpeechStart,
    CallerUtterance,
    Command,
    EndCall,
    SubmitText,
)
from sessions.call.config import CallConfig
from sessions.call.context import CallClock, CallContext, Dials
from sessions.call.far_ends.agent_ears import DEFAULT_WORDS_PER_S, AgentEars
from sessions.call.far_ends.line import LineFarEnd
from sessions.call.far_ends.line_yields import (
    RESPONSE_WINDOW_S,
    SELECTIVITY_WINDOW_S,
    BargeIns,
    LineYields,
)
from sessions.call.far_ends.simulated import SimulatedFarEnd
from sessions.call.far_ends.simulated_caller import CallState, Floor, SimulatedCaller
from sessions.call.far_ends.simulated_turn import SimulatedTurn
from sessions.call.far_ends.yield_watches import YieldWatches
from sessions.call.line_parts import LineTurn, RemoteConfig
from sessions.call.near_end.caller import Caller
from sessions.call.near_end.caller_line import Audio, SoundKind, Synthesizer
from sessions.call.near_end.line_caller import CallerMouth
from sessions.call.response_clock import ResponseClock
from sessions.call.sound_tape import SoundTape
from sessions.call.voice.voice import TextVoice
from sessions.callers.users import CallerReply
from sessions.lines.base import PlayoutBuffer
from sessions.log.models import (
    AgentYield,
    Backchannel,
    CallerSound,
    ErrorEvent,
    Event,
    Interruption,
    UserTurn,
)
from sessions.scenarios import load_scenario
from sessions.scenarios.model import KeypadStep
from sessions.speech import FRAME_SAMPLES, SAMPLE_RATE
from sessions.speech.tts import Speech
from sessions.speech.vad import load_vad

ROOT = Path(__file__).resolve().parents[2]
FRAME_S = FRAME_SAMPLES / SAMPLE_RATE
E = TypeVar("E", bound=Event)


def _sound(lead_s: float, sound_s: float, tail_s: float = 0.2) -> Audio:
    """Silence, then a 220 Hz tone kept over the sound level for exactly ``sound_s``,
    then silence: its sound spans [lead_s, lead_s + sound_s) to the sample."""
    n_lead, n_sound = round(lead_s * SAMPLE_RATE), round(sound_s * SAMPLE_RATE)
    t = np.arange(n_sound) / SAMPLE_RATE
    tone = 0.3 * np.sin(2 * np.pi * 220 * t)
    tone = np.where(np.abs(tone) < 0.05, 0.05, tone)
    tail = np.zeros(round(tail_s * SAMPLE_RATE))
    return np.concatenate([np.zeros(n_lead), tone, tail]).astype(np.float32)


def _speak(text: str) -> Speech:
    """The caller's "TTS": every text sounds from 0.1 s to 0.6 s of an 0.8 s clip."""
    return Speech(_sound(0.1, 0.5), text)


@dataclass
class _Call:
    """What the engine would hand a part, and what the part did with it."""

    events: list[Event] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    scheduled: list[tuple[float, Command]] = field(default_factory=list)
    interrupted: list[tuple[float, float | None]] = field(default_factory=list)
    config: CallConfig = field(
        default_factory=lambda: CallConfig(scenario=load_scenario("retail-order-change"))
    )

    def context(self) -> CallContext:
        dials = Tendencies(0.0, 1.0, 0.0)

        def schedule(at: float, command: Command) -> None:
            self.scheduled.append((at, command))

        def interrupt(t: float, at: float | None) -> None:
            self.interrupted.append((t, at))

        return CallContext(
            config=self.config,
            clock=CallClock(
                now=lambda: 0.0, ended=lambda: False, monotonic_at=lambda t: t, virtual=True
            ),
            dials=Dials(
                read=lambda: dials,
                effective=lambda: dials,
                adapter=lambda: None,
                emit=self.events.append,
            ),
            history=[],
            rng=random.Random(0),
            pauses=PauseDetector(),
            emit=self.events.append,
            schedule=schedule,
            end=self.ended.append,
            interrupt=interrupt,
        )

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]


class _Barges:
    """The far end's barge-in part, as the mouth sees it: it is told, and remembers."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, float, str, str, float, dict[str, str]]] = []

    def __call__(
        self, turn: LineTurn, onset: float, trigger: str, text: str, decided_t: float, **extra: str
    ) -> None:
        self.calls.append((turn.index, onset, trigger, text, decided_t, extra))


class _Keypad:
    """A line that carries DTMF: the keys it was given."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def send_dtmf(self, keys: str) -> None:
        self.keys.append(keys)


class _Steps:
    """A headless caller that does these steps in order, then hangs up."""

    def __init__(self, *steps: CallerReply) -> None:
        self.steps = list(steps)

    def next_turn(self, history: list[Message]) -> CallerReply:
        return self.steps.pop(0) if self.steps else None


@dataclass
class _Mouth:
    call: _Call
    ctx: CallContext
    mouth: CallerMouth
    barges: _Barges
    responses: ResponseClock
    turn: list[LineTurn | None]
    """The agent turn in progress, as the far end would report it."""


def _mouth(user: _Steps | None = None, line: object | None = None) -> _Mouth:
    call = _Call()
    ctx = call.context()
    turn: list[LineTurn | None] = [None]
    barges = _Barges()
    responses = ResponseClock(5.0, ctx.emit)
    mouth = CallerMouth(
        ctx,
        Caller(ctx, user, None),
        line if line is not None else _Keypad(),  # type: ignore[arg-type]
        Synthesizer(_speak, inline=True),
        RemoteConfig(),
        "scenario",
        responses=responses,
        current_turn=lambda: turn[0],
        agent_turns=lambda: 0,
        barge_in=barges,
    )
    return _Mouth(call, ctx, mouth, barges, responses, turn)


def _frames(m: _Mouth, t: float, until: float, sent: list[Audio] | None = None) -> float:
    """Run the mouth's frames from ``t`` to ``until`` as the far end does: the frame is
    taken and sent, then the caller's part of the frame."""
    while t < until - 1e-9:
        t1 = round(t + FRAME_S, 9)
        audio, finished = m.mouth.take(FRAME_SAMPLES)
        if sent is not None:
            sent.append(audio)
        m.mouth.sent(t1, finished)
        m.mouth.frame(t1)
        t = t1
    return t


# ---- the caller's mouth on a line -----------------------------------------------------


def test_the_mouth_says_a_typed_turn_and_times_its_end_to_the_sample() -> None:
    m = _mouth()
    m.mouth.apply(SubmitText("I want to change my order"), 0.0)
    assert m.call.of(UserTurn) == []  # said at the caller's part of the frame
    sent: list[Audio] = []
    _frames(m, 0.0, 1.024, sent)
    (turn,) = m.call.of(UserTurn)
    assert turn.t == pytest.approx(0.132, abs=1e-9) and turn.end_t == pytest.approx(0.632)
    assert turn.source == "typed" and turn.original == "I want to change my order"
    # What went on the line is the speech, from the frame after it was decided.
    line = np.concatenate(sent)
    assert np.array_equal(line[FRAME_SAMPLES : FRAME_SAMPLES + 12800], _speak("").audio)
    # Its end is where its last sound left, not where the clip's trailing silence did.
    assert m.responses.caller_end == pytest.approx(0.632) and m.responses.owed()
    assert not m.mouth.caller_active and m.mouth.ready_to_act()
    assert m.ctx.history == [Message("user", "I want to change my order")]


def test_a_caller_turn_waits_for_the_agent_and_an_interruption_barges_in() -> None:
    m = _mouth()
    m.turn[0] = LineTurn(index=3, onset=0.0)
    m.mouth.apply(SubmitText("hello"), 0.0)
    t = _frames(m, 0.0, 0.64)
    assert m.call.of(UserTurn) == []  # the agent is speaking: the turn waits
    assert m.mouth.may_interrupt()
    m.mouth.say(SoundKind.INTERRUPTION, "sorry, wait", "interruption", t, "rule")
    onset = round(t + 0.1, 6)  # its sound starts 0.1 s into the next frame's clip
    assert m.barges.calls == [(3, onset, "rule", "sorry, wait", t, {})]
    (cut,) = m.call.of(UserTurn)
    assert cut.t == onset and cut.source == "interruption"
    assert not m.mouth.ready_to_act()  # its audio is playing
    m.turn[0] = None  # the agent yielded; its turn closed
    t = _frames(m, t, t + 1.6)
    assert [e.original for e in m.call.of(UserTurn)] == ["sorry, wait", "hello"]


def test_the_testers_microphone_over_the_agent_is_a_barge_in_at_its_first_sound() -> None:
    m = _mouth()
    m.turn[0] = LineTurn(index=0, onset=0.0)
    mic = m.mouth.mic_audio = PlayoutBuffer(max_seconds=5.0)
    t = _frames(m, 0.0, 1.024)
    m.mouth.apply(CallerSpeechStart(at=1.0), t)
    assert m.mouth.caller_active  # the tester holds the floor from their onset
    mic.push(_sound(0.1, 0.5))  # plays from the next frame: its sound from 1.124 s
    t = _frames(m, t, 1.7)
    assert m.barges.calls == [(0, 1.124, "manual", "", 1.0, {"source": "mic"})]
    m.mouth.apply(CallerUtterance("stop there", 1.0, 1.624), t)
    (said,) = m.call.of(UserTurn)
    assert said.source == "mic" and said.end_t == 1.624
    assert m.responses.caller_end == 1.624 and not m.mouth.caller_active


def test_a_keypad_step_goes_out_as_dtmf_and_the_caller_goes_on_after_its_patience() -> None:
    keypad = _Keypad()
    m = _mouth(_Steps(KeypadStep(dtmf="1#"), "my order number is 42"), keypad)
    remote = RemoteConfig()
    t = _frames(m, 0.0, remote.caller_first_s - 0.1)
    assert keypad.keys == []  # the agent may speak first
    while not keypad.keys:
        t = _frames(m, t, t + FRAME_S)
    pressed = t  # the caller speaks first when the agent has not by then
    assert keypad.keys == ["1#"] and remote.caller_first_s <= pressed < remote.caller_first_s + 0.04
    t = _frames(m, t, pressed + remote.caller_patience_s - 0.1)
    assert m.call.of(UserTurn) == []  # waiting for the agent's answer to the keys
    t = _frames(m, t, pressed + remote.caller_patience_s + 0.2)
    (said,) = m.call.of(UserTurn)
    assert said.original == "my order number is 42"
    assert said.t == pytest.approx(pressed + remote.caller_patience_s + 0.1, abs=0.033)
    _frames(m, t, t + 0.1)
    assert m.call.ended == [] and m.call.scheduled == []


def test_a_line_without_dtmf_logs_the_keys_not_pressed_and_the_caller_hangs_up() -> None:
    m = _mouth(_Steps(KeypadStep(dtmf="9")), line=object())
    _frames(m, 0.0, 4.1)
    (err,) = m.call.of(ErrorEvent)
    assert err.where == "dtmf" and "keys 9 not pressed" in err.message
    # Nothing else to say: the caller hangs up a moment later.
    ((at, command),) = m.call.scheduled
    assert command == EndCall("user_hangup")
    assert at - 4.0 == pytest.approx(RemoteConfig().user_hangup_s, abs=0.07)


# ---- the caller's acts and the agent's yields -----------------------------------------


@dataclass
class _Yields:
    m: _Mouth
    yields: LineYields
    watches: YieldWatches
    ears: AgentEars
    tape: SoundTape


def _yields(side_talk: Future[Speech] | None = None) -> _Yields:
    m = _mouth()
    ctx = m.ctx
    ears = AgentEars(load_vad("onnx"), None, inline=True)
    tape = SoundTape()

    def current() -> LineTurn | None:
        return m.turn[0]

    watches = YieldWatches(ctx, tape, ears.words, lambda since, until: None, current)
    if side_talk is None:
        side_talk = Future()
        # Loud enough that, 12 dB down, it still sounds from 0.1 s to 0.6 s exactly.
        side_talk.set_result(Speech(_sound(0.1, 0.5) * 4.0, "aside"))
    yields = LineYields(
        ctx,
        m.mouth,
        ears,
        tape,
        watches,
        m.responses,
        backchannels=lambda token: _sound(0.05, 0.3),
        side_talk=side_talk,
        current_turn=current,
        backchannel_window_s=1.0,
    )
    return _Yields(m, yields, watches, ears, tape)


def _agent_spoke(y: _Yields, seconds: float) -> LineTurn:
    """An agent turn opened at 0 with ``seconds`` of speech heard (none transcribed)."""
    turn = LineTurn(index=0, onset=0.0)
    y.m.turn[0] = turn
    y.ears.start_turn(0.0)
    for _ in range(round(seconds / FRAME_S)):
        y.ears.push(np.zeros(FRAME_SAMPLES, np.float32), speaking=True, frame_s=FRAME_S)
    return turn


def test_a_backchannel_plays_over_the_agent_and_is_watched_for_a_false_yield() -> None:
    y = _yields()
    y.yields.backchannel(0.5, trigger="rule", token="mm-hmm")
    assert y.m.call.of(Backchannel) == []  # no agent turn: nothing to back-channel
    turn = _agent_spoke(y, 0.8)
    t = _frames(y.m, 0.0, 1.024)
    y.yields.backchannel(t, trigger="rule", token="mm-hmm")
    (bc,) = y.m.call.of(Backchannel)
    words = round(0.8 * DEFAULT_WORDS_PER_S)  # the ears' estimate of what was said
    assert bc.t == round(t + 0.05, 6) and bc.words_heard == words
    assert turn.backchannels == 1 and turn.words_at_last_backchannel == words
    (watch,) = y.watches.watches
    assert (watch.after, watch.onset_t, watch.window_s) == ("backchannel", bc.t, 1.0)
    y.yields.backchannel(t, trigger="rule", token="yeah")  # the token is still playing
    assert len(y.m.call.of(Backchannel)) == 1
    _frames(y.m, t, t + 0.6)
    # The agent's next turn is timed from the token's last sound (but owes it nothing).
    assert y.m.responses.caller_end == round(bc.t + 0.3, 6)
    assert y.m.responses.caller_end_kind == "backchannel" and not y.m.responses.owed()


def test_a_tic_in_the_agents_silence_is_watched_for_an_answer() -> None:
    y = _yields()
    t = _frames(y.m, 0.0, 0.64)
    y.yields.caller_sound(t, "vocal_tic")
    (tic,) = y.m.call.of(CallerSound)
    assert tic.turn is None and tic.t >= t
    answer = round(tic.end_t + 1.0, 6)
    y.yields.answered_sound(answer, answer)  # an agent turn began 1 s after it
    (ev,) = y.m.call.of(AgentYield)
    assert ev.responded and ev.turn == -1
    assert (ev.after, ev.onset_t, ev.window_s) == ("vocal_tic", tic.t, RESPONSE_WINDOW_S)


def test_a_tic_no_one_answers_is_reported_when_its_window_has_passed() -> None:
    y = _yields()
    y.yields.caller_sound(0.0, "vocal_tic")
    (tic,) = y.m.call.of(CallerSound)
    t = 0.0
    while not y.m.call.of(AgentYield):
        y.yields.frame(t, t + FRAME_S, speaking=False, caller_active=False)
        t = round(t + FRAME_S, 9)
        assert t < 5.0
    (ev,) = y.m.call.of(AgentYield)
    deadline = tic.end_t + RESPONSE_WINDOW_S
    assert not ev.responded
    assert deadline <= ev.t < deadline + FRAME_S


def test_side_talk_over_the_agent_is_watched_and_unready_side_talk_is_an_error() -> None:
    y = _yields()
    _agent_spoke(y, 0.5)
    t = _frames(y.m, 0.0, 1.0)
    y.yields.caller_sound(t, "non_directed")
    (aside,) = y.m.call.of(CallerSound)
    assert aside.turn == 0 and aside.level_db < 0
    assert (aside.t, aside.end_t) == (round(t + 0.1, 6), round(t + 0.6, 6))
    (watch,) = y.watches.watches
    assert (watch.after, watch.window_s) == ("non_directed", SELECTIVITY_WINDOW_S)
    late = _yields(side_talk=Future())  # still being synthesized
    late.yields.caller_sound(1.0, "non_directed")
    late.yields.caller_sound(1.0, "whistle")
    assert [e.where for e in late.m.call.of(ErrorEvent)] == ["caller_sound", "caller_sound"]
    assert late.m.call.of(CallerSound) == []


def test_a_barge_in_marks_the_turn_cut_logs_it_and_watches_for_a_yield() -> None:
    y = _yields()
    turn = _agent_spoke(y, 1.6)
    barge = BargeIns(y.m.ctx, y.ears, y.watches, 2.0)
    barge(turn, 1.7, "rule", "sorry", 1.5)
    (cut,) = y.m.call.of(Interruption)
    assert (cut.t, cut.cut_t) == (1.7, 1.7)
    assert cut.model_extra == {"decided_t": 1.5, "reaction_s": 0.2}  # a line's extras
    assert cut.cut_word == round(1.6 * DEFAULT_WORDS_PER_S)
    assert turn.interrupted and turn.cut_t == 1.7
    (watch,) = y.watches.watches
    assert (watch.after, watch.onset_t, watch.window_s) == ("interruption", 1.7, 2.0)


# ---- the simulated caller over the floor ----------------------------------------------


def _simulated(
    user: _Steps | None = None,
) -> tuple[_Call, SimulatedCaller, Floor, list[Message]]:
    call = _Call()
    ctx = call.context()
    floor = Floor()
    part = SimulatedCaller(
        ctx, Caller(ctx, user, None), TextVoice(call.config.style), floor, agent_done=lambda: True
    )
    return call, part, floor, ctx.history


def _state(floor: Floor) -> CallState:
    """Who holds the floor now (read after a part moved it)."""
    return floor.state


def test_a_typed_turn_takes_the_floor_and_gives_it_back_when_it_ends() -> None:
    call, part, floor, history = _simulated()
    floor.state = CallState.WAIT_USER
    part.submit_text(SubmitText("I would like to change my order"), 1.0)
    (said,) = call.of(UserTurn)
    end = floor.user_busy_until  # its last word's end on the text clock
    assert said.t == 1.0 and said.end_t == round(end, 4) and end > 1.5
    assert floor.state is CallState.USER_SPEAKING
    assert history == [Message("user", "I would like to change my order")]
    part.frame(end - 0.01)
    assert floor.state is CallState.USER_SPEAKING and part.caller_busy(end - 0.01)
    part.frame(end)
    latency = call.config.scenario.agent.response_latency_s
    assert _state(floor) is CallState.AGENT_PENDING and floor.agent_due == end + latency


def test_text_typed_over_the_agent_waits_and_talk_over_follows_its_turn() -> None:
    call, part, floor, history = _simulated()
    floor.state = CallState.AGENT_SPEAKING
    part.submit_text(SubmitText("one more thing"), 2.0)
    assert call.of(UserTurn) == [] and part.near.queued == [("one more thing", "typed")]
    part.after_agent_turn(3.0)
    (said,) = call.of(UserTurn)
    assert said.t == 3.0 and floor.state is CallState.USER_SPEAKING
    # The caller talks over an agent that does not yield: their words follow its turn.
    floor.state = CallState.AGENT_SPEAKING
    part.start_user_turn("excuse me", 5.0, source="interruption", hold=True)
    assert [m.content for m in history] == ["one more thing"]
    part.after_agent_turn(6.0)
    assert [m.content for m in history] == ["one more thing", "excuse me"]
    assert floor.held_user_message is None and _state(floor) is CallState.AGENT_PENDING
    latency = call.config.scenario.agent.response_latency_s
    assert floor.agent_due == max(6.0, floor.user_busy_until) + latency


def test_the_microphone_over_a_speaking_agent_is_an_interruption_then_a_held_turn() -> None:
    call, part, floor, history = _simulated()
    floor.state = CallState.AGENT_SPEAKING
    floor.turn = SimulatedTurn(index=0, onset=0.5)
    part.speech_start(2.0, 2.1)
    assert call.interrupted == [(2.1, 2.0)] and floor.mic_cut and part.caller_busy(9.0)
    part.utterance(CallerUtterance("stop please", 2.0, 2.8), 3.0)
    (said,) = call.of(UserTurn)
    assert said.source == "mic" and said.end_t == 2.8
    assert floor.mic_open is None and not floor.mic_cut
    assert history == []  # the agent talks on: its turn goes in first
    assert floor.held_user_message == Message("user", "stop please")


def test_a_headless_caller_skips_keys_it_cannot_press_and_hangs_up_at_the_end() -> None:
    call, part, floor, _ = _simulated(_Steps(KeypadStep(dtmf="1"), "hello"))
    floor.state, floor.user_due = CallState.WAIT_USER, 1.0
    part.frame(0.5)
    assert call.of(UserTurn) == []  # not due yet
    part.frame(1.0)
    assert [e.where for e in call.of(ErrorEvent)] == ["dtmf"]
    (said,) = call.of(UserTurn)
    assert said.original == "hello" and said.source == "simulator"
    floor.state, floor.user_due = CallState.WAIT_USER, 9.0
    part.frame(9.0)
    assert call.ended == ["user_hangup"]


# ---- made of parts --------------------------------------------------------------------

PART_CLASSES: list[type] = [
    LineFarEnd,
    CallerMouth,
    LineYields,
    BargeIns,
    YieldWatches,
    ResponseClock,
    SimulatedFarEnd,
    SimulatedCaller,
    Floor,
]


@pytest.mark.parametrize("cls", PART_CLASSES, ids=lambda c: c.__name__)
def test_the_far_ends_and_their_parts_inherit_nothing(cls: type) -> None:
    assert cls.__mro__ == (cls, object)


ALLOWED_BASES = {"Protocol", "StrEnum", "Exception", "RuntimeError", "AgentTurn"}
"""A Protocol (a type), an enum, an exception, and the agent turn record
(:class:`~sessions.call.context.AgentTurn`, a data type both far ends share)."""


def _scan(source: str, name: str) -> tuple[dict[str, list[str]], list[str]]:
    """(each class's bases not allowed, where ``NotImplementedError`` is raised)."""
    bases: dict[str, list[str]] = {}
    raises: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            wrong = [ast.unparse(b) for b in node.bases if ast.unparse(b) not in ALLOWED_BASES]
            if wrong:
                bases[f"{name}:{node.name}"] = wrong
        if (
            isinstance(node, ast.Raise)
            and node.exc is not None
            and "NotImplementedError" in ast.unparse(node.exc)
        ):
            raises.append(f"{name}:{node.lineno}")
    return bases, raises


def test_no_call_class_inherits_another_and_no_hook_raises_not_implemented() -> None:
    paths = [
        p
        for sub in ("far_ends", "near_end")
        for p in sorted((ROOT / "sessions" / "call" / sub).glob("*.py"))
    ]
    assert len(paths) >= 10, "the far ends moved: point this test at them"
    for path in paths:
        assert _scan(path.read_text(encoding="utf-8"), path.name) == ({}, [])


def test_the_scan_sees_a_chain_and_a_hook() -> None:
    source = (
        "class A(LineCaller, Protocol):\n    def f(self):\n        raise NotImplementedError()\n"
    )
    assert _scan(source, "x.py") == ({"x.py:A": ["LineCaller"]}, ["x.py:3"])
