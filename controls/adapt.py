"""Rules that adapt to an agent's rhythm (``--adapt``): calibrate the short-pause rule.

The paper's thresholds (patience 10 − 8.5β s, ≥ 12 words, backchannels at 6 words
then every 25 − 17γ words) were tuned on one agent. On a faster agent, or one that
pauses more often, the same dial value acts more often: a dial then measures the
agent's rhythm as much as the caller. Calibration fixes the *outcome* instead: for
a dial value it picks thresholds such that the rule, replayed over the agent turns
observed so far, acts at the reference rate per agent turn (:func:`reference_rate`,
anchored on the paper's Table 2).

How: one scale per rule multiplies the paper's thresholds for the dial (interruption:
patience and word minimum; backchannel: first-word minimum and spacing). Larger
thresholds never make the rule act more, so the replayed rate falls as the scale
grows and a bisection on the scale finds where it crosses the target. The
interruption scale is found first (an interruption ends the turn for the
backchannel rule), then the backchannel scale with it in place. The short-pause
threshold itself (200 ms) is kept: it is what the audit calls an opportunity.

A cut changes what the agent says next (a scripted agent re-offers the sentence it
was cut in, so its next turn is longer and easier to cut again). Turns observed live
already show that; a sample spoken before the call cannot, so its source may pass a
``follow`` that says the next turn as the agent would after a cut, and the replay
goes through each sample call turn by turn, cutting and following as the call would.

Pure and deterministic: no clock, no I/O; the same turns give the same thresholds.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from controls.questions import question_or_request
from controls.tendencies import Tendencies
from controls.turn_taking import (
    BACKCHANNEL_FIRST_WORDS,
    INTERRUPT_MIN_WORDS,
    RuleParams,
    backchannel_spacing_words,
    interruption_patience_seconds,
)

SHORT_PAUSE_S = 0.2
"""A silence this long mid-turn is a short pause (where the rule is consulted)."""
FRAME_S = 0.032
"""The pause detector's frame (:class:`controls.pauses.PauseDetector`)."""
BACKCHANNEL_S = 0.45
"""How long the caller's backchannel token lasts; no pause is consulted meanwhile."""
MIN_TURNS = 3
"""Turns needed before calibrating; until then the paper's constants apply."""
SCALE_RANGE = (1 / 8, 8.0)
"""Thresholds move at most 8× down or up from the paper's."""
_BISECTIONS = 40

# The paper's Table 2 (actions / agent turns, 20 paired scenarios per condition).
# Its 0.5 column is missing: the reference is linear between the anchors, and 0 at 0.
PAPER_ANCHORS: dict[str, tuple[tuple[float, float], ...]] = {
    "interrupt": ((0.0, 0.0), (0.3, 36 / 153), (0.7, 44 / 153), (1.0, 57 / 106)),
    "backchannel": ((0.0, 0.0), (0.3, 78 / 143), (0.7, 94 / 154), (1.0, 103 / 122)),
}


def reference_rate(rule: str, dial: float) -> float:
    """Actions per agent turn the dial should produce on any agent (``rule``:
    ``interrupt`` for β, ``backchannel`` for γ): piecewise linear through the anchors."""
    anchors = PAPER_ANCHORS[rule]
    if dial <= anchors[0][0]:
        return anchors[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(anchors):
        if dial <= x1:
            return y0 + (y1 - y0) * (dial - x0) / (x1 - x0)
    return anchors[-1][1]


@dataclass(frozen=True, slots=True)
class PauseSeen:
    """One silence inside (or at the end of) an observed agent turn."""

    at_s: float
    """When the silence began, in seconds since the turn's onset."""
    words: int
    """Words heard by then."""
    length_s: float
    """How long the silence lasted (``math.inf``: the turn's end)."""
    asking: bool
    """The turn's text so far asks a question or makes a request."""


@dataclass(frozen=True, slots=True)
class TurnSeen:
    """One observed agent turn, as far as it was heard."""

    index: int
    """The agent turn's index in its call (0: the first, where no backchannel goes)."""
    words: int
    speech_s: float
    """Onset to the end of the last word heard."""
    pauses: tuple[PauseSeen, ...]
    text: str = ""
    """The words as said, for a ``follow`` that needs what was cut (not replayed)."""

    def as_dict(self) -> dict[str, object]:
        return {"index": self.index, "words": self.words, "speech_s": round(self.speech_s, 3)}


def turn_from_words(
    index: int, words: Sequence[tuple[str, float, float]], *, ended: bool = True
) -> TurnSeen:
    """A :class:`TurnSeen` from timed words ``(word, start, end)`` in order. ``ended``:
    the turn ended on its own (its final silence is a pause the rule sees); a cut turn's
    last silence is not known."""
    if not words:
        return TurnSeen(index, 0, 0.0, (), "")
    onset = words[0][1]
    pauses: list[PauseSeen] = []
    text: list[str] = []
    for i, (word, _start, end) in enumerate(words):
        text.append(word)
        if i + 1 < len(words):
            gap = words[i + 1][1] - end
            if gap <= 0:
                continue
            length = gap
        elif ended:
            length = math.inf
        else:
            break
        pauses.append(PauseSeen(end - onset, i + 1, length, question_or_request(" ".join(text))))
    return TurnSeen(
        index, len(words), words[-1][2] - onset, tuple(pauses), " ".join(w for w, _, _ in words)
    )


def heard_pause_s(pause_s: float = SHORT_PAUSE_S, frame_s: float = FRAME_S) -> float:
    """How long a silence must last, on average, for the frame-based detector to report
    a ``pause_s`` pause, which is also when the report comes after the silence began.

    The detector counts silence in whole frames from the first frame the silence fills:
    it needs ``ceil(pause_s / frame_s)`` silent frames (7 × 32 ms = 224 ms for 200 ms),
    and the silence began somewhere inside the frame before them. Turn onsets fall
    anywhere on the frame grid, so half a frame is added: 240 ms. Replaying at 200 ms
    counts pauses of 200–240 ms that calls never consult (a rhythm with many of them,
    like ``tau2-voice``, was calibrated on opportunities it would not get).
    ``frame_s`` 0: exactly ``pause_s``."""
    if frame_s <= 0:
        return pause_s
    return math.ceil(pause_s / frame_s - 1e-9) * frame_s + frame_s / 2


Follow = Callable[[int, TurnSeen, int], TurnSeen]
"""``follow(position, cut, heard)``: the turn at ``position`` of the replayed turns as the
agent says it when the turn before it (``cut``, as it was said) was cut after ``heard``
words."""


@dataclass(frozen=True, slots=True)
class Rhythm:
    """What calibration measured about the agent (for the log and the why panel)."""

    turns: int
    words_per_minute: float
    """Words per minute of voiced time (silences of a short pause or more left out)."""
    pauses_per_minute: float
    """Short pauses inside turns per minute of voiced time."""
    median_pause_s: float
    """Median length of the silences of a short pause or more inside turns."""
    median_words_per_turn: float

    def as_dict(self) -> dict[str, object]:
        return {
            "turns": self.turns,
            "words_per_minute": round(self.words_per_minute, 1),
            "pauses_per_minute": round(self.pauses_per_minute, 1),
            "median_pause_s": round(self.median_pause_s, 3),
            "median_words_per_turn": self.median_words_per_turn,
        }

    def describe(self) -> str:
        return (
            f"{self.words_per_minute:.0f} wpm, {self.pauses_per_minute:.0f} pauses/min, "
            f"pauses {1000 * self.median_pause_s:.0f} ms, "
            f"{self.median_words_per_turn:g} words/turn ({self.turns} turns)"
        )


def measure(turns: Sequence[TurnSeen], pause_s: float = SHORT_PAUSE_S) -> Rhythm:
    words = sum(t.words for t in turns)
    inner = [p.length_s for t in turns for p in t.pauses if pause_s <= p.length_s < math.inf]
    voiced = sum(t.speech_s for t in turns) - sum(inner)
    per_min = 60.0 / voiced if voiced > 0 else 0.0
    return Rhythm(
        turns=len(turns),
        words_per_minute=words * per_min,
        pauses_per_minute=len(inner) * per_min,
        median_pause_s=statistics.median(inner) if inner else 0.0,
        median_words_per_turn=statistics.median([t.words for t in turns]) if turns else 0.0,
    )


def scaled_params(
    tendencies: Tendencies, interrupt_scale: float, backchannel_scale: float
) -> RuleParams:
    """The paper's thresholds for these dials, each rule's multiplied by its scale."""
    return RuleParams(
        interrupt_patience_s=round(
            interrupt_scale * interruption_patience_seconds(tendencies.beta), 3
        ),
        interrupt_min_words=max(1, round(INTERRUPT_MIN_WORDS * interrupt_scale)),
        backchannel_first_words=max(1, round(BACKCHANNEL_FIRST_WORDS * backchannel_scale)),
        backchannel_spacing_words=round(
            max(1.0, backchannel_spacing_words(tendencies.gamma) * backchannel_scale), 3
        ),
    )


def replay(
    turns: Sequence[TurnSeen],
    tendencies: Tendencies,
    params: RuleParams,
    pause_s: float = SHORT_PAUSE_S,
    follow: Follow | None = None,
    *,
    frame_s: float = FRAME_S,
    busy_s: float = BACKCHANNEL_S,
) -> tuple[float, float]:
    """Interruptions and backchannels per turn the rule would make over ``turns``.

    The same checks as :func:`controls.turn_taking.decide`, at every silence the
    detector would report as a ``pause_s`` pause (:func:`heard_pause_s` with
    ``frame_s``), consulted when it reports it: at most one interruption per turn,
    which ends it; backchannels spaced by words, and no pause consulted while the
    caller's backchannel (``busy_s``) is still being spoken, as in the call loop.
    With ``follow``, a turn that comes right after a replayed cut in the same call (its
    index one more) is replaced by what ``follow`` says the agent would say then."""
    if not turns:
        return 0.0, 0.0
    beta, gamma = tendencies.beta, tendencies.gamma
    heard = heard_pause_s(pause_s, frame_s)
    interruptions = backchannels = 0
    cut: tuple[TurnSeen, int] | None = None
    for position, planned in enumerate(turns):
        turn = planned
        if cut is not None and follow is not None and planned.index == cut[0].index + 1:
            turn = follow(position, *cut)
        cut = None
        count = last = 0
        busy_until = -math.inf
        for p in turn.pauses:
            fired = p.at_s + heard
            if p.length_s < heard - 1e-9 or p.asking or fired < busy_until - 1e-9:
                continue
            if (
                beta > 0
                and fired >= params.interrupt_patience_s - 1e-9
                and p.words >= params.interrupt_min_words
            ):
                interruptions += 1
                cut = (turn, p.words)
                break
            if gamma > 0 and turn.index > 0:
                needed = (
                    params.backchannel_first_words
                    if count == 0
                    else last + params.backchannel_spacing_words
                )
                if p.words >= needed:
                    count += 1
                    last = p.words
                    busy_until = fired + busy_s
        backchannels += count
    return interruptions / len(turns), backchannels / len(turns)


def _search(rate_at: _RateAt, target: float) -> tuple[float, float, bool]:
    """The scale whose rate is nearest ``target`` (rate falls as the scale grows):
    (scale, rate, reached). ``reached`` is False when the target lies outside what the
    scale range can give."""
    lo, hi = math.log(SCALE_RANGE[0]), math.log(SCALE_RANGE[1])
    rate_lo, rate_hi = rate_at(math.exp(lo)), rate_at(math.exp(hi))
    if rate_lo < target:
        return math.exp(lo), rate_lo, False
    if rate_hi > target:
        return math.exp(hi), rate_hi, False
    # Invariant: rate(lo) >= target >= rate(hi).
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        rate_mid = rate_at(math.exp(mid))
        if rate_mid >= target:
            lo, rate_lo = mid, rate_mid
        else:
            hi, rate_hi = mid, rate_mid
    if abs(rate_lo - target) <= abs(rate_hi - target):
        return math.exp(lo), rate_lo, True
    return math.exp(hi), rate_hi, True


class _RateAt:
    """The replayed rate of one rule as a function of its scale (the other held)."""

    def __init__(
        self,
        turns: Sequence[TurnSeen],
        tendencies: Tendencies,
        rule: str,
        other_scale: float,
        pause_s: float,
        follow: Follow | None,
        frame_s: float,
        busy_s: float,
    ) -> None:
        self.turns, self.tendencies, self.rule = turns, tendencies, rule
        self.other_scale, self.pause_s, self.follow = other_scale, pause_s, follow
        self.frame_s, self.busy_s = frame_s, busy_s

    def params(self, scale: float) -> RuleParams:
        if self.rule == "interrupt":
            return scaled_params(self.tendencies, scale, self.other_scale)
        return scaled_params(self.tendencies, self.other_scale, scale)

    def __call__(self, scale: float) -> float:
        i, b = replay(
            self.turns,
            self.tendencies,
            self.params(scale),
            self.pause_s,
            self.follow,
            frame_s=self.frame_s,
            busy_s=self.busy_s,
        )
        return i if self.rule == "interrupt" else b


@dataclass(frozen=True, slots=True)
class Calibration:
    """Thresholds for one dial setting, and what they were chosen from."""

    tendencies: Tendencies
    params: RuleParams | None
    """None: too few turns seen yet, the paper's constants apply."""
    rhythm: Rhythm
    turns: tuple[int, ...]
    """The agent-turn index of each turn it was calibrated on (a sample of a script
    spoken several times repeats them)."""
    interrupt_scale: float = 1.0
    backchannel_scale: float = 1.0
    target_interruptions: float = 0.0
    target_backchannels: float = 0.0
    replayed_interruptions: float = 0.0
    replayed_backchannels: float = 0.0
    reached: bool = True
    """Both targets were within reach of the scale range."""

    @property
    def calibrated(self) -> bool:
        return self.params is not None

    def as_dict(self) -> dict[str, object]:
        p = self.params
        return {
            "tendencies": self.tendencies.as_dict(),
            "calibrated": self.calibrated,
            "params": None
            if p is None
            else {
                "interrupt_patience_s": p.interrupt_patience_s,
                "interrupt_min_words": p.interrupt_min_words,
                "backchannel_first_words": p.backchannel_first_words,
                "backchannel_spacing_words": p.backchannel_spacing_words,
            },
            "scales": {
                "interrupt": round(self.interrupt_scale, 4),
                "backchannel": round(self.backchannel_scale, 4),
            },
            "target": {
                "interruptions_per_turn": round(self.target_interruptions, 4),
                "backchannels_per_turn": round(self.target_backchannels, 4),
            },
            "replayed": {
                "interruptions_per_turn": round(self.replayed_interruptions, 4),
                "backchannels_per_turn": round(self.replayed_backchannels, 4),
            },
            "reached": self.reached,
            "rhythm": self.rhythm.as_dict(),
            "turns": list(self.turns),
        }

    def describe(self) -> str:
        """One line for a why panel."""
        if self.params is None:
            return (
                f"adapt: paper constants until {MIN_TURNS} agent turns are seen "
                f"({self.rhythm.turns} so far)"
            )
        p = self.params
        miss = "" if self.reached else " (target out of reach)"
        return (
            f"adapt: {self.rhythm.describe()} → patience {p.interrupt_patience_s:g} s, "
            f"≥ {p.interrupt_min_words} words; backchannel ≥ {p.backchannel_first_words} "
            f"then +{p.backchannel_spacing_words:g}; replayed "
            f"{self.replayed_interruptions:.2f}/{self.target_interruptions:.2f} int, "
            f"{self.replayed_backchannels:.2f}/{self.target_backchannels:.2f} bc per turn{miss}"
        )


def calibrate(
    turns: Sequence[TurnSeen],
    tendencies: Tendencies,
    *,
    min_turns: int = MIN_TURNS,
    pause_s: float = SHORT_PAUSE_S,
    follow: Follow | None = None,
    frame_s: float = FRAME_S,
    busy_s: float = BACKCHANNEL_S,
) -> Calibration:
    """Thresholds for ``tendencies`` that make the rule, replayed over ``turns`` (with
    ``follow``: as the agent would go on after each replayed cut), act at
    :func:`reference_rate` per turn (the paper's constants while fewer than ``min_turns``
    turns are known); ``frame_s`` and ``busy_s`` as for :func:`replay`."""
    rhythm = measure(turns, pause_s)
    used = tuple(t.index for t in turns)
    if len(turns) < min_turns:
        return Calibration(tendencies, None, rhythm, used)
    t_int = reference_rate("interrupt", tendencies.beta)
    t_bc = reference_rate("backchannel", tendencies.gamma)
    i_scale, reached_i = 1.0, True
    if tendencies.beta > 0:
        i_scale, _, reached_i = _search(
            _RateAt(turns, tendencies, "interrupt", 1.0, pause_s, follow, frame_s, busy_s), t_int
        )
    b_scale, reached_b = 1.0, True
    if tendencies.gamma > 0:
        b_scale, _, reached_b = _search(
            _RateAt(turns, tendencies, "backchannel", i_scale, pause_s, follow, frame_s, busy_s),
            t_bc,
        )
    params = scaled_params(tendencies, i_scale, b_scale)
    r_int, r_bc = replay(turns, tendencies, params, pause_s, follow, frame_s=frame_s, busy_s=busy_s)
    return Calibration(
        tendencies,
        params,
        rhythm,
        used,
        interrupt_scale=i_scale,
        backchannel_scale=b_scale,
        target_interruptions=t_int,
        target_backchannels=t_bc,
        replayed_interruptions=r_int,
        replayed_backchannels=r_bc,
        reached=reached_i and reached_b,
    )
