"""Run a gallery entry through the call loop, headless, on the virtual clock.

The caller's scripted actions are tied to the agent's words ("when the agent
finishes word 14 of its first turn, minus 0.2 s"). Word times are only known once
the agent speaks, so each action is placed by a dry run of the example with the
actions before it already scheduled; the call is deterministic (same scenario,
tendencies and seed give the same timings), so the times hold for the real run,
on the virtual clock or in real time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from controls.tendencies import Tendencies
from replay.gallery.model import ActionSpec, GalleryEntry, GalleryError
from replay.gallery.timeline import CallerWords, Timeline, TimelineBuilder, build_timeline
from sessions.call.commands import BackchannelNow, Command, InterruptNow
from sessions.call.config import CallConfig
from sessions.call.far_ends.simulated import SimulatedFarEnd
from sessions.call.setup.simulated_call import SimulatedCall
from sessions.log.models import AgentWords, Event, UserTurn, WordTiming
from sessions.plan import CallPlan
from sessions.plan.build import build_call, call_config
from sessions.scenarios import Scenario, load_scenario
from sessions.speech.speech_clock import plan

DEFAULT_BACKCHANNEL_TOKEN = "mm-hmm"
CALLER_SEED_STRIDE = 7919
"""The call loop seeds caller turn n's text clock with seed * 7919 + n."""


@dataclass(frozen=True)
class ScheduledAction:
    """An action placed on the call clock."""

    index: int
    """Position in the entry's ``actions`` list."""
    t: float
    spec: ActionSpec
    command: Command


@dataclass
class GalleryRun:
    """One run of an entry: the events the call loop reported, and its drawing."""

    entry: GalleryEntry
    config: CallConfig
    actions: list[ScheduledAction]
    events: list[Event] = field(default_factory=list)

    @property
    def timeline(self) -> Timeline:
        return build_timeline(
            self.events,
            backchannel_s=self.config.backchannel_s,
            caller_words=caller_word_timer(self.config),
        )


def caller_word_timer(config: CallConfig) -> CallerWords:
    """Re-time a caller turn's words on the text clock the call used.

    The log keeps only a caller turn's start and end. The text clock is
    deterministic, so planning the rendered text again with the call's speaking
    style and the loop's per-turn seed gives the same words; the result is used only
    if it ends exactly where the log says the turn ended (else the turn is drawn as
    one block).
    """

    def timer(event: UserTurn) -> list[WordTiming] | None:
        seed = config.seed * CALLER_SEED_STRIDE + event.turn
        words = plan(event.rendered, config.style, seed, start=event.t)
        if not words or event.end_t is None or abs(words[-1].end - event.end_t) > 0.001:
            return None
        return [
            WordTiming(word=w.word, start=round(w.start, 4), end=round(w.end, 4)) for w in words
        ]

    return timer


def timeline_builder(config: CallConfig) -> TimelineBuilder:
    """A builder for a live run of ``config`` (the same drawing as :attr:`GalleryRun.timeline`)."""
    return TimelineBuilder(
        backchannel_s=config.backchannel_s, caller_words=caller_word_timer(config)
    )


def scenario_of(entry: GalleryEntry) -> Scenario:
    """The entry's scenario (a fresh copy: a run must not change the entry)."""
    if isinstance(entry.scenario, Scenario):
        return entry.scenario.model_copy(deep=True)
    return load_scenario(entry.scenario)


def entry_plan(entry: GalleryEntry) -> CallPlan:
    """The entry's call: the scenario's scripted agent and caller (interruptions carry the
    bare opener), on the virtual clock, not recorded."""
    tend = entry.tendencies
    scenario = scenario_of(entry)
    return CallPlan(
        scenario=scenario.name,
        tendencies=Tendencies(tend.alpha, tend.beta, tend.gamma),
        seed=entry.seed,
        user="scripted",
        scripted_barge_in=False,
        virtual=True,
        max_seconds=entry.max_seconds,
        scenario_model=scenario,
    )


def config_of(entry: GalleryEntry) -> CallConfig:
    return call_config(entry_plan(entry), scenario_of(entry))


def make_loop(
    entry: GalleryEntry,
    actions: Iterable[ScheduledAction],
    listeners: Iterable[Callable[[Event], None]] = (),
) -> SimulatedCall:
    """A ready call for the entry with its actions scheduled (not started)."""
    loop = build_call(entry_plan(entry), listeners=listeners).loop
    assert isinstance(loop.far, SimulatedFarEnd)  # a scripted agent, never a line
    for action in actions:
        loop.schedule(action.t, action.command)
    return loop


def _command(spec: ActionSpec) -> Command:
    if spec.do == "interrupt":
        return InterruptNow(text=spec.text)
    return BackchannelNow(token=spec.token or DEFAULT_BACKCHANNEL_TOKEN)


def _agent_words(events: list[Event], turn: int) -> list[WordTiming]:
    words: list[WordTiming] = []
    for ev in events:
        if isinstance(ev, AgentWords) and ev.turn == turn:
            words.extend(ev.words)
    return words


def _place(entry: GalleryEntry, index: int, spec: ActionSpec, events: list[Event]) -> float:
    field_name = f"actions.{index}"
    words = _agent_words(events, spec.agent_turn - 1)
    if not words:
        raise GalleryError(
            f"{entry.source}: field '{field_name}.agent_turn': the agent never speaks a turn "
            f"{spec.agent_turn} in this example"
        )
    if spec.at_word == "last":
        word = words[-1]
    else:
        if spec.at_word > len(words):
            raise GalleryError(
                f"{entry.source}: field '{field_name}.at_word': agent turn {spec.agent_turn} "
                f"has {len(words)} spoken words here, not {spec.at_word}"
            )
        word = words[spec.at_word - 1]
    anchor = word.start if spec.word_edge == "start" else word.end
    t = round(anchor + spec.offset_s, 4)
    if t < 0:
        raise GalleryError(f"{entry.source}: field '{field_name}.offset_s': lands before 0 s")
    return t


def place_actions(entry: GalleryEntry) -> list[ScheduledAction]:
    """Place every scripted action on the call clock (one dry run per action)."""
    placed: list[ScheduledAction] = []
    for index, spec in enumerate(entry.actions):
        events: list[Event] = []
        make_loop(entry, placed, [events.append]).run_virtual()
        t = _place(entry, index, spec, events)
        if placed and t < placed[-1].t:
            raise GalleryError(
                f"{entry.source}: field 'actions.{index}': comes before the action above it; "
                "list actions in the order they happen"
            )
        placed.append(ScheduledAction(index, t, spec, _command(spec)))
    return placed


def run_entry(entry: GalleryEntry) -> GalleryRun:
    """Run the example on the virtual clock and keep every event."""
    actions = place_actions(entry)
    run = GalleryRun(entry, config_of(entry), actions)
    make_loop(entry, actions, [run.events.append]).run_virtual()
    return run
