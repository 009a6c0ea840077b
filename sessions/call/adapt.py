"""``--adapt`` in a call: where the agent turns come from, and when to recalibrate.

The calibration itself is pure (:mod:`controls.adapt`); this keeps the turns a call
has seen and turns each calibration into a ``calibration`` log event. Two sources:

* ``sample``: before the call, the scenario's agent script spoken by the agent's own
  voice style (its profile's rate and pauses) a few times with seeds of its own:
  how this agent speaks, measured without looking at the call to come. Used when
  the agent is scripted and speaks on the text clock; the calibration is made once.
  The sample knows what a cut does to the next turn (the scripted agent's re-offer of
  the sentence it was cut in, :func:`sessions.agents.scripted.after_cut`): the replay
  cuts the sample's calls as the call would and speaks each re-offer in the same voice.
* ``live``: the agent turns of this call as they end (a cut turn whole, as the agent
  planned it and its voice timed it: cut short, it would end at the very pause the rule
  fired at). The paper's constants apply until :data:`controls.adapt.MIN_TURNS` turns
  have ended; then every ended turn recalibrates, over the last ``window`` turns.

A change of dials recalibrates too (the thresholds belong to one dial setting).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from controls.adapt import (
    BACKCHANNEL_S,
    FRAME_S,
    MIN_TURNS,
    Calibration,
    Follow,
    PauseSeen,
    TurnSeen,
    calibrate,
    turn_from_words,
)
from controls.questions import question_or_request
from controls.tendencies import Tendencies
from controls.turn_taking import RuleParams
from sessions.agents.scripted import after_cut, with_extra
from sessions.call.config import CallConfig
from sessions.log.models import RuleCalibration, TendencyValues
from sessions.scenarios.model import Scenario
from sessions.speech.speech_clock import SpeakingStyle, SpeechTrack, draw_quantile
from sessions.speech.words import TimedWord

SAMPLE_PASSES = 10
"""Times the script is spoken for a sample (7 turns × 10: steps of 1/70 per turn)."""
LIVE_WINDOW = 12


def words_seen(index: int, words: Sequence[TimedWord], *, ended: bool = True) -> TurnSeen:
    return turn_from_words(index, [(w.word, w.start, w.end) for w in words], ended=ended)


def _spoken(index: int, text: str, style: SpeakingStyle, seed: int) -> TurnSeen:
    track = SpeechTrack(style, seed=seed)
    track.add_text(text, 0.0, final=True)
    return words_seen(index, track.words)


@dataclass
class ScriptSample:
    """A scripted agent's turns spoken before the call, and how it goes on after a cut."""

    turns: list[TurnSeen]
    style: SpeakingStyle
    texts: list[str]
    """Each turn's planned text (by position in ``turns``)."""
    seeds: list[int]
    """Each turn's voice seed (a re-offer is spoken on the seed of the turn it leads)."""
    reoffers: bool = True
    """The script re-offers what a cut left unsaid (``after_cut = "reoffer"``)."""
    _said: dict[tuple[int, str], TurnSeen] = field(default_factory=dict, repr=False)

    def follow(self, position: int, cut: TurnSeen, heard: int) -> TurnSeen:
        """The turn at ``position`` as the scripted agent says it after ``cut`` was cut
        after ``heard`` words (:data:`controls.adapt.Follow`)."""
        planned = self.turns[position]
        if not self.reoffers:
            return planned
        spoken = " ".join(cut.text.split()[:heard])
        text = after_cut(self.texts[position], cut.text, spoken)
        if text == self.texts[position]:
            return planned
        key = (position, text)
        if key not in self._said:
            self._said[key] = _spoken(planned.index, text, self.style, self.seeds[position])
        return self._said[key]


def script_sample(
    scenario: Scenario,
    style: SpeakingStyle,
    *,
    turn_words: Sequence[float] = (),
    seed: int = 0,
    passes: int = SAMPLE_PASSES,
) -> ScriptSample:
    """The scenario's agent turns (then its closing), spoken ``passes`` times with
    ``style`` on the text clock; turn lengths drawn from ``turn_words`` as the scripted
    agent draws them, on seeds of the sample's own."""
    script = scenario.agent
    base = [t.text for t in script.turns] + ([script.closing] if script.closing else [])
    sample = ScriptSample([], style, [], [], reoffers=script.after_cut == "reoffer")
    for p in range(passes):
        for index, text in enumerate(base):
            if turn_words and index < len(script.turns) and script.turns[index].extra:
                rng = random.Random(f"cutin.adapt-sample|{seed}|{p}|{index}")
                target = draw_quantile(tuple(turn_words), rng)
                text = with_extra(text, script.turns[index].extra, target)
            voice_seed = (seed * 31 + p) * 1009 + index
            sample.turns.append(_spoken(index, text, style, voice_seed))
            sample.texts.append(text)
            sample.seeds.append(voice_seed)
    return sample


class RuleAdapter:
    """The turns a call has seen and its current calibration."""

    def __init__(
        self,
        *,
        sample: ScriptSample | Sequence[TurnSeen] = (),
        min_turns: int = MIN_TURNS,
        window: int = LIVE_WINDOW,
        frame_s: float = FRAME_S,
        busy_s: float = BACKCHANNEL_S,
        enabled: bool = True,
    ) -> None:
        self.enabled = enabled
        """Off: turns are still taken in (so switching on mid-call has them to calibrate
        on), but no calibration is made and the paper's constants apply."""
        # The call's pause detector frame and backchannel length: the replay consults
        # pauses as the loop does (controls.adapt.replay).
        self.frame_s, self.busy_s = frame_s, busy_s
        self._follow: Follow | None = None
        if isinstance(sample, ScriptSample):
            self._follow = sample.follow
            sample = sample.turns
        self.source = "sample" if sample else "live"
        self._sample = list(sample)
        self._live: list[TurnSeen] = []
        self.min_turns = min_turns
        self.window = window
        self.current: Calibration | None = None

    @property
    def params(self) -> RuleParams | None:
        if not self.enabled or self.current is None:
            return None
        return self.current.params

    def _turns(self) -> list[TurnSeen]:
        return self._sample if self._sample else self._live[-self.window :]

    def observe(self, turn: TurnSeen) -> bool:
        """Take in an agent turn that ended; True if the calibration should be redone."""
        if self._sample:
            return False
        self._live.append(turn)
        return self.enabled

    def needs(self, tendencies: Tendencies) -> bool:
        """No calibration yet, or one made for other dials (never while off)."""
        if not self.enabled:
            return False
        if self.current is None:
            return True
        done = self.current.tendencies
        return (done.beta, done.gamma) != (tendencies.beta, tendencies.gamma)

    def recalibrate(self, tendencies: Tendencies, t: float, reason: str) -> RuleCalibration:
        # Live turns already show how the agent goes on after a cut: no ``follow``.
        follow = self._follow if self._sample else None
        self.current = calibrate(
            self._turns(),
            tendencies,
            min_turns=self.min_turns,
            follow=follow,
            frame_s=self.frame_s,
            busy_s=self.busy_s,
        )
        return calibration_event(self.current, t, source=self.source, reason=reason)


def line_adapter(config: CallConfig, *, enabled: bool = True) -> RuleAdapter:
    """``--adapt`` on a black-box agent's line: live, from the turns the line carries.
    Their pauses are the ones the VAD reported, at the moments it reported them, so the
    replay models no detector frames (``frame_s`` 0)."""
    return RuleAdapter(frame_s=0.0, busy_s=config.backchannel_s, enabled=enabled)


def line_turn_seen(
    index: int,
    onset: float,
    words: Sequence[tuple[str, float]],
    pauses: Sequence[tuple[float, float]],
    *,
    cut_t: float | None,
    end_t: float,
    pause_s: float,
) -> TurnSeen:
    """A black-box agent's turn as the line gave it: ``words`` (word, end) from STT,
    ``pauses`` (reported at, silence began) from the VAD, call-clock seconds.

    Each reported pause is placed so that the replay consults it when the call did
    (``pause_s`` after ``at_s``), with the words STT heard ended by its silence. A cut
    turn keeps its pauses up to the cut and has no end (what it would have said after
    is not known). An uncut turn's last reported pause is the silence that ended it
    (the VAD reports a short pause on the way to every turn end): its length is
    endless."""
    seen: list[PauseSeen] = []
    for reported, silence in pauses:
        if cut_t is not None and reported > cut_t + 1e-9:
            break
        heard = [w for w, end in words if end <= silence + 1e-9]
        at = max(0.0, reported - pause_s - onset)
        seen.append(PauseSeen(at, len(heard), pause_s, question_or_request(" ".join(heard))))
    if cut_t is None and seen and seen[-1].words == len(words):
        last = seen[-1]
        seen[-1] = PauseSeen(last.at_s, last.words, math.inf, last.asking)
    text = " ".join(w for w, _ in words)
    return TurnSeen(index, len(words), max(0.0, end_t - onset), tuple(seen), text)


def calibration_event(cal: Calibration, t: float, *, source: str, reason: str) -> RuleCalibration:
    d = cal.as_dict()
    params = d["params"]
    return RuleCalibration(
        t=round(t, 6),
        source=source,
        reason=reason,
        tendencies=TendencyValues(**cal.tendencies.as_dict()),
        calibrated=cal.calibrated,
        params=dict(params) if isinstance(params, dict) else None,
        scales=_floats(d["scales"]),
        target=_floats(d["target"]),
        replayed=_floats(d["replayed"]),
        reached=cal.reached,
        rhythm=_floats(d["rhythm"]),
        turns=list(cal.turns),
        summary=cal.describe(),
    )


def _floats(value: object) -> dict[str, float]:
    assert isinstance(value, dict)
    return {str(k): float(v) for k, v in value.items()}
