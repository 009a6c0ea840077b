"""controls.adapt: calibration against synthetic rhythms whose answer is known."""

from __future__ import annotations

import math

import pytest

from controls.adapt import (
    MIN_TURNS,
    TurnSeen,
    calibrate,
    heard_pause_s,
    measure,
    reference_rate,
    replay,
    scaled_params,
    turn_from_words,
)
from controls.tendencies import Tendencies
from controls.turn_taking import Action, RuleParams, Situation, decide


def rhythm(
    *, wpm: float, every: int, pause_s: float, words: list[int], start: int = 0
) -> list[TurnSeen]:
    """Turns of ``words[i]`` words at ``wpm``, a ``pause_s`` silence after every
    ``every``-th word (no question anywhere)."""
    per_word = 60.0 / wpm
    out = []
    for i, n in enumerate(words):
        t = 0.0
        timed = []
        for w in range(n):
            timed.append((f"w{w}", t, t + per_word))
            t += per_word + (pause_s if (w + 1) % every == 0 else 0.0)
        out.append(turn_from_words(start + i, timed))
    return out


# Turn lengths spread from 5 to 100 words, so per-turn rates can take many values.
LENGTHS = [5 + (i * 37) % 96 for i in range(60)]


def test_reference_is_the_papers_table_and_interpolates_half() -> None:
    assert reference_rate("interrupt", 0.3) == pytest.approx(36 / 153)
    assert reference_rate("interrupt", 1.0) == pytest.approx(57 / 106)
    assert reference_rate("interrupt", 0.5) == pytest.approx((36 / 153 + 44 / 153) / 2)
    assert reference_rate("backchannel", 0.5) == pytest.approx((78 / 143 + 94 / 154) / 2)
    assert reference_rate("backchannel", 0.0) == 0.0


def test_turn_from_words_gaps_and_final_pause() -> None:
    turn = rhythm(wpm=120, every=4, pause_s=0.3, words=[10])[0]
    # Pauses after words 4 and 8, then the turn's end.
    assert [p.words for p in turn.pauses] == [4, 8, 10]
    assert turn.pauses[0].at_s == pytest.approx(2.0)
    assert turn.pauses[0].length_s == pytest.approx(0.3)
    assert math.isinf(turn.pauses[-1].length_s)
    cut = turn_from_words(0, [("a", 0.0, 0.5), ("b", 0.5, 1.0)], ended=False)
    assert cut.pauses == ()


def test_measure_reads_rate_and_pause_density() -> None:
    turns = rhythm(wpm=180, every=6, pause_s=0.3, words=[60] * 4)
    r = measure(turns)
    assert r.words_per_minute == pytest.approx(180, rel=1e-6)
    # 9 inner pauses per 60 words = 9 per 20 s of voiced speech.
    assert r.pauses_per_minute == pytest.approx(27, rel=1e-6)
    assert r.median_pause_s == pytest.approx(0.3)


def test_replay_matches_decide_pause_by_pause() -> None:
    """The replay takes the same decisions as the rule at each pause."""
    turns = rhythm(wpm=150, every=5, pause_s=0.25, words=LENGTHS[:20], start=1)
    tend = Tendencies(beta=0.0, gamma=0.7)
    params = scaled_params(tend, 1.0, 0.8)
    expected = 0
    for turn in turns:
        count = last = 0
        for p in turn.pauses:
            s = Situation(p.at_s + heard_pause_s(), p.words, "", turn.index, False, count, last)
            if decide(s, tend, params).action is Action.BACKCHANNEL:
                count, last = count + 1, p.words
        expected += count
    assert replay(turns, tend, params)[1] == pytest.approx(expected / len(turns))


@pytest.mark.parametrize("level", [0.3, 0.5, 0.7, 1.0])
@pytest.mark.parametrize(("wpm", "every"), [(120, 9), (170, 6), (230, 4)])
def test_calibration_hits_the_reference(level: float, wpm: float, every: int) -> None:
    turns = rhythm(wpm=wpm, every=every, pause_s=0.3, words=LENGTHS, start=1)
    for tend, rule, index in (
        (Tendencies(beta=level), "interrupt", 0),
        (Tendencies(gamma=level), "backchannel", 1),
    ):
        cal = calibrate(turns, tend)
        assert cal.params is not None and cal.reached
        got = replay(turns, tend, cal.params)[index]
        assert got == pytest.approx(reference_rate(rule, level), rel=0.15)


def test_calibrated_rates_are_monotone_in_the_dial() -> None:
    turns = rhythm(wpm=200, every=5, pause_s=0.3, words=LENGTHS, start=1)
    rates = []
    for level in (0.3, 0.5, 0.7, 1.0):
        tend = Tendencies(beta=level)
        cal = calibrate(turns, tend)
        assert cal.params is not None
        rates.append(replay(turns, tend, cal.params)[0])
    assert rates == sorted(rates)
    assert rates[-1] > rates[0]


def test_a_fast_rhythm_gets_a_larger_word_threshold() -> None:
    """Turns of the same length in seconds: the fast agent says twice the words in them,
    so the same realized rate needs twice the words."""
    seconds = [4 + (i * 7) % 30 for i in range(60)]
    slow = rhythm(wpm=120, every=6, pause_s=0.3, words=[2 * s for s in seconds], start=1)
    fast = rhythm(wpm=240, every=6, pause_s=0.3, words=[4 * s for s in seconds], start=1)
    tend = Tendencies(beta=1.0)
    slow_cal, fast_cal = calibrate(slow, tend), calibrate(fast, tend)
    assert slow_cal.params is not None and fast_cal.params is not None
    assert fast_cal.params.interrupt_min_words > slow_cal.params.interrupt_min_words


def test_too_few_turns_keep_the_papers_constants() -> None:
    turns = rhythm(wpm=170, every=6, pause_s=0.3, words=[40] * (MIN_TURNS - 1))
    cal = calibrate(turns, Tendencies(beta=0.7))
    assert cal.params is None and not cal.calibrated
    assert "paper constants" in cal.describe()


def test_out_of_reach_is_reported() -> None:
    # Three-word turns ending in a question: nothing can ever be interrupted.
    turns = [
        turn_from_words(i, [("can", 0.0, 0.3), ("you", 0.3, 0.6), ("help?", 0.6, 0.9)])
        for i in range(5)
    ]
    cal = calibrate(turns, Tendencies(beta=1.0))
    assert not cal.reached
    assert cal.replayed_interruptions == 0.0


def test_default_decide_is_the_papers() -> None:
    s = Situation(4.05, 12, "", 1)
    tend = Tendencies(beta=0.7, gamma=0.3)
    paper = scaled_params(tend, 1.0, 1.0)
    assert decide(s, tend) == decide(s, tend, paper)
    assert decide(s, tend).action is Action.INTERRUPT


def test_a_pause_is_heard_as_the_frame_detector_hears_it() -> None:
    # 7 whole 32 ms frames make the 200 ms, plus half a frame for where the silence
    # began in its first frame.
    assert heard_pause_s(0.2, 0.032) == pytest.approx(0.24)
    assert heard_pause_s(0.2, 0.0) == 0.2
    tend = Tendencies(gamma=1.0)
    params = scaled_params(tend, 1.0, 1.0)
    short = rhythm(wpm=150, every=8, pause_s=0.22, words=[40] * 5, start=1)
    heard = rhythm(wpm=150, every=8, pause_s=0.26, words=[40] * 5, start=1)
    # 220 ms silences reach 200 ms but the detector does not report them: only the
    # turn's end is left (one backchannel a turn instead of five).
    assert replay(short, tend, params)[1] == 1.0
    assert replay(short, tend, params, frame_s=0.0)[1] == 5.0
    assert replay(heard, tend, params)[1] == 5.0


def test_no_pause_is_consulted_while_the_backchannel_is_spoken() -> None:
    # A 250 ms pause after every word at 600 wpm: pauses are reported 0.35 s apart, and
    # the rule would backchannel at each from the second word on. The caller's 0.45 s
    # token hides the next pause, so only every other one is consulted.
    tend = Tendencies(gamma=1.0)
    params = RuleParams(7.45, 12, 2, 1.0)
    turns = rhythm(wpm=600, every=1, pause_s=0.25, words=[20] * 4, start=1)
    assert replay(turns, tend, params, busy_s=0.0)[1] == pytest.approx(19.0)
    assert replay(turns, tend, params)[1] == pytest.approx(10.0)


def test_follow_replays_what_the_agent_says_after_a_cut() -> None:
    """A turn cut in the replay is followed by what ``follow`` says the agent says next
    (a longer turn, as a scripted agent's re-offer): the rate rises, and calibration
    with ``follow`` picks larger thresholds to stay on the reference."""
    # After a cut the agent's next turn has 12 more words (a re-offered sentence).
    turns = rhythm(wpm=170, every=6, pause_s=0.3, words=LENGTHS, start=1)
    longer = {
        t.index: rhythm(wpm=170, every=6, pause_s=0.3, words=[t.words + 12], start=t.index)[0]
        for t in turns
    }
    seen: list[tuple[int, int]] = []

    def follow(position: int, cut: TurnSeen, heard: int) -> TurnSeen:
        seen.append((position, heard))
        return longer[turns[position].index]

    tend = Tendencies(beta=1.0)
    params = scaled_params(tend, 1.0, 1.0)
    plain = replay(turns, tend, params)[0]
    followed = replay(turns, tend, params, follow=follow)[0]
    assert seen and followed > plain
    # Every followed position comes right after a cut turn with one index less.
    assert all(turns[pos].index == turns[pos - 1].index + 1 for pos, _ in seen)
    target = reference_rate("interrupt", 1.0)
    blind, aware = calibrate(turns, tend), calibrate(turns, tend, follow=follow)
    assert blind.params is not None and aware.params is not None
    # Calibrated blind to the re-offer, the calls it stands for overshoot; calibrated
    # with it, larger thresholds land on the reference.
    assert replay(turns, tend, blind.params, follow=follow)[0] > 1.1 * target
    assert aware.interrupt_scale > blind.interrupt_scale
    assert replay(turns, tend, aware.params, follow=follow)[0] == pytest.approx(target, rel=0.05)


def test_a_line_turn_is_read_from_vad_pauses_and_stt_words() -> None:
    from sessions.call.adapt import line_turn_seen

    words = [("one", 10.3), ("two", 10.6), ("three", 11.2), ("four", 11.5), ("five?", 12.0)]
    # (reported, silence began): after "two", after "four", and the final silence.
    pauses = [(10.85, 10.62), (11.75, 11.52), (12.25, 12.02)]
    turn = line_turn_seen(0, 10.0, words, pauses, cut_t=None, end_t=12.0, pause_s=0.2)
    assert [p.words for p in turn.pauses] == [2, 4, 5]
    # Placed so the replay consults each when the call did (0.2 s after at_s).
    assert [round(p.at_s + 0.2, 3) for p in turn.pauses] == [0.85, 1.75, 2.25]
    assert [p.length_s for p in turn.pauses] == [0.2, 0.2, math.inf]
    assert turn.pauses[-1].asking and not turn.pauses[0].asking
    cut = line_turn_seen(0, 10.0, words, pauses, cut_t=11.0, end_t=12.0, pause_s=0.2)
    assert [p.words for p in cut.pauses] == [2]  # nothing after the cut is known
