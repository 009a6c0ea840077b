"""``--adapt`` in a call: where the agent turns come from, and when to recalibrate.

The calibration itself is pure (:mod:`controls.adapt`); this keeps the turns a call
has seen and turns each calibration into a ``calibration`` log event. Two sources:

* ``sample``: before the call, the scenario's agent script spoken by the agent's own
  voice style (its profile's rate and pauses) a few times with seeds of its own:
  how this agent speaks, measured without looking at the call to come. Used when
  the agent is scripted and speaks on the text clock; the calibration is made once.
* ``live``: the agent turns of this call as they end (a cut turn whole, as the agent
  planned it and its voice timed it: cut short, it would end at the very pause the rule
  fired at). The paper's constants apply until :data:`controls.adapt.MIN_TURNS` turns
  have ended; then every ended turn recalibrates, over the last ``window`` turns.

A change of dials recalibrates too (the thresholds belong to one dial setting).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from controls.adapt import MIN_TURNS, Calibration, TurnSeen, calibrate, turn_from_words
from controls.tendencies import Tendencies
from controls.turn_taking import RuleParams
from sessions.agents.scripted import with_extra
from sessions.log.models import RuleCalibration, TendencyValues
from sessions.scenarios.model import Scenario
from sessions.speech_clock import SpeakingStyle, SpeechTrack, TimedWord, draw_quantile

SAMPLE_PASSES = 10
"""Times the script is spoken for a sample (7 turns × 10: steps of 1/70 per turn)."""
LIVE_WINDOW = 12


def words_seen(index: int, words: Sequence[TimedWord], *, ended: bool = True) -> TurnSeen:
    return turn_from_words(index, [(w.word, w.start, w.end) for w in words], ended=ended)


def script_sample(
    scenario: Scenario,
    style: SpeakingStyle,
    *,
    turn_words: Sequence[float] = (),
    seed: int = 0,
    passes: int = SAMPLE_PASSES,
) -> list[TurnSeen]:
    """The scenario's agent turns (then its closing), spoken ``passes`` times with
    ``style`` on the text clock; turn lengths drawn from ``turn_words`` as the scripted
    agent draws them, on seeds of the sample's own."""
    script = scenario.agent
    texts = [t.text for t in script.turns] + ([script.closing] if script.closing else [])
    out: list[TurnSeen] = []
    for p in range(passes):
        for index, text in enumerate(texts):
            if turn_words and index < len(script.turns) and script.turns[index].extra:
                rng = random.Random(f"cutin.adapt-sample|{seed}|{p}|{index}")
                target = draw_quantile(tuple(turn_words), rng)
                text = with_extra(text, script.turns[index].extra, target)
            track = SpeechTrack(style, seed=(seed * 31 + p) * 1009 + index)
            track.add_text(text, 0.0, final=True)
            out.append(words_seen(index, track.words))
    return out


class RuleAdapter:
    """The turns a call has seen and its current calibration."""

    def __init__(
        self,
        *,
        sample: Sequence[TurnSeen] = (),
        min_turns: int = MIN_TURNS,
        window: int = LIVE_WINDOW,
    ) -> None:
        self.source = "sample" if sample else "live"
        self._sample = list(sample)
        self._live: list[TurnSeen] = []
        self.min_turns = min_turns
        self.window = window
        self.current: Calibration | None = None

    @property
    def params(self) -> RuleParams | None:
        return None if self.current is None else self.current.params

    def _turns(self) -> list[TurnSeen]:
        return self._sample if self._sample else self._live[-self.window :]

    def observe(self, turn: TurnSeen) -> bool:
        """Take in an agent turn that ended; True if the calibration should be redone."""
        if self._sample:
            return False
        self._live.append(turn)
        return True

    def needs(self, tendencies: Tendencies) -> bool:
        """No calibration yet, or one made for other dials."""
        if self.current is None:
            return True
        done = self.current.tendencies
        return (done.beta, done.gamma) != (tendencies.beta, tendencies.gamma)

    def recalibrate(self, tendencies: Tendencies, t: float, reason: str) -> RuleCalibration:
        self.current = calibrate(self._turns(), tendencies, min_turns=self.min_turns)
        return calibration_event(self.current, t, source=self.source, reason=reason)


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
