"""The rule judge: deterministic findings from timing and text, no network.

Per agent turn:

* **yield** — after each tester interruption: seconds until the agent fell silent
  (yield latency) and seconds it talked over the tester. ``pass`` when it stopped
  within :data:`YIELD_WINDOW_S` (τ-Voice's no-yield window), else ``fail``.
* **backchannel** — after each backchannel during the turn: did the agent treat it
  as a turn? ``fail`` when it stopped within :data:`BACKCHANNEL_WINDOW_S` *and*
  answered (spoke again before the tester took a turn); ``warn`` when it only
  stopped (τ-Voice scores that as a selectivity error); ``pass`` when it talked on.
  In a cutin log, "stopped" means the turn was cut short (``interrupted``): a turn
  that said all it planned finished, even just after a backchannel. Tick imports
  have no plan, so there the τ-Voice reading holds: silent within the window.
* **presumes_unspoken** — the agent turn right after a truncated one: ``fail``
  when it uses content words that only the unspoken part held (the tester never
  heard them, and nobody said them since); ``warn`` when it only refers back
  ("as I mentioned") to a turn whose end was never heard; else ``pass``.
* **response_latency** — after each tester turn the agent answers: seconds from
  the tester's end to the agent's start. ``pass`` up to :data:`RESPONSE_LATENCY_S`
  (τ2's rubric default), ``fail`` above it, and ``fail`` when the agent began
  before the tester finished. A tester turn followed by another tester turn gets a
  ``fail`` on itself (no response).

Per call, when the caller passes success criteria (phrases that must appear in
what the agent actually said — spoken parts only): one ``success`` verdict per
phrase and one overall. Matching ignores case, punctuation and spacing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from replay.model import (
    BACKCHANNELS,
    FAIL,
    INTERRUPTIONS,
    PASS,
    WARN,
    InlineEvent,
    JudgeVerdict,
    Trial,
    Turn,
)
from replay.plural import plural

JUDGE = "rules"
YIELD_WINDOW_S = 2.0
BACKCHANNEL_WINDOW_S = 1.0
RESPONSE_LATENCY_S = 3.0

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'@.-]*[A-Za-z0-9]|[A-Za-z0-9]")
_BACK_REFERENCE = re.compile(
    r"\b(as i (just )?(said|mentioned|explained|noted)|like i (just )?said|as mentioned|"
    r"as i was saying)\b",
    re.IGNORECASE,
)
_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing down during each few
for from further had has have having he her here hers him his how i if in into is it its
just let me more most my no nor not now of off on once only or other our ours out over
own same she should so some such than that the their them then there these they this
those through to too under until up very was we were what when where which while who
whom why will with would you your yours yes okay ok sure well right oh um uh like get
got go going one two see know think want need make take give tell say said thing things
way
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _words(text: str) -> list[str]:
    return [w.lower().strip(".'-") for w in _WORD.findall(text)]


def _content_words(text: str) -> set[str]:
    return {
        w
        for w in _words(text)
        if (len(w) >= 3 and w not in _STOPWORDS) or any(c.isdigit() for c in w)
    }


def _normalize(text: str) -> str:
    return " ".join(_words(text))


def _fmt(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.2f} s"


def judge_trial(trial: Trial, success_phrases: Sequence[str] | None = None) -> list[JudgeVerdict]:
    """Every rule verdict for ``trial``, in turn order, call verdicts last."""
    out: list[JudgeVerdict] = []
    turns = trial.turns
    known: set[str] = set()  # content words heard from the agent or said by the tester so far
    last_agent: Turn | None = None
    for pos, turn in enumerate(turns):
        if turn.speaker == "agent":
            out.extend(_yield_verdicts(turn))
            out.extend(_backchannel_verdicts(turn, turns, pos))
            out.extend(_presumption_verdict(last_agent, turn, known))
            last_agent = turn
            known |= _content_words(turn.spoken)
        else:
            known |= _content_words(f"{turn.original or turn.text} {turn.spoken}")
        out.extend(_latency_verdicts(turns, pos))
    if success_phrases:
        out.extend(success_verdicts(trial, success_phrases))
    return out


def _yield_verdicts(turn: Turn) -> list[JudgeVerdict]:
    out = []
    events = turn.events_of(*INTERRUPTIONS)
    for n, event in enumerate(events):
        latency = event.data.get("yield_latency_s")
        talk_over = event.data.get("talk_over_s")
        yielded = bool(event.data.get("yielded")) and latency is not None
        ok = yielded and latency is not None and latency <= YIELD_WINDOW_S + 1e-9
        if ok:
            why = (
                f"stopped {_fmt(latency)} after the tester cut in at {event.t:.2f} s; "
                f"talked over the tester for {_fmt(talk_over)}"
            )
        else:
            why = (
                f"did not stop within {YIELD_WINDOW_S:g} s of the tester cutting in at "
                f"{event.t:.2f} s (stopped after {_fmt(latency)}); talked over the tester "
                f"for {_fmt(talk_over)}"
            )
        out.append(
            _turn_verdict(
                PASS if ok else FAIL,
                _nth("yield", n),
                turn.index,
                why,
                t=event.t,
                score=latency,
                extra={"yield_latency_s": latency, "talk_over_s": talk_over},
            )
        )
    return out


def _turn_verdict(
    label: str,
    name: str,
    turn: int,
    why: str,
    *,
    t: float | None,
    score: float | None = None,
    extra: dict[str, Any] | None = None,
) -> JudgeVerdict:
    """A turn-scope verdict of this judge on turn ``turn``."""
    return JudgeVerdict(
        JUDGE,
        label,
        name,
        scope="turn",
        turn=turn,
        rationale=why,
        score=score,
        t=t,
        extra=extra if extra is not None else {},
    )


def _nth(name: str, n: int) -> str:
    """The verdict name of the ``n``-th (0-based) finding of a kind in one turn: the
    first is plain ``name``, later ones are numbered from 2."""
    return name if n == 0 else f"{name} {n + 1}"


def _next_floor_turn(turns: Sequence[Turn], pos: int) -> Turn | None:
    return turns[pos + 1] if pos + 1 < len(turns) else None


def _backchannel_verdicts(turn: Turn, turns: Sequence[Turn], pos: int) -> list[JudgeVerdict]:
    out = []
    for n, event in enumerate(turn.events_of(*BACKCHANNELS)):
        stopped, answered, latency = _reaction(event, turn, turns, pos)
        if stopped and answered:
            label, why = (
                FAIL,
                (
                    f"treated the backchannel {event.label!r} at {event.t:.2f} s as a "
                    f"turn: stopped after {_fmt(latency)} and answered it"
                ),
            )
        elif stopped:
            label, why = (
                WARN,
                (
                    f"stopped {_fmt(latency)} after the backchannel {event.label!r} "
                    f"at {event.t:.2f} s (did not answer it)"
                ),
            )
        else:
            label, why = (
                PASS,
                f"talked on through the backchannel {event.label!r} at {event.t:.2f} s",
            )
        out.append(
            _turn_verdict(
                label,
                _nth("backchannel", n),
                turn.index,
                why,
                t=event.t,
                score=latency,
                extra={"stopped": stopped, "answered": answered},
            )
        )
    return out


def _reaction(
    event: InlineEvent, turn: Turn, turns: Sequence[Turn], pos: int
) -> tuple[bool, bool, float | None]:
    """(stopped, answered, seconds to stop) for a backchannel inside ``turn``."""
    if "yielded" in event.data:  # tick imports measured it on the tick grid
        latency = event.data.get("yield_latency_s")
        return bool(event.data["yielded"]), bool(event.data.get("answered")), latency
    if turn.end is None:
        return False, False, None
    latency = max(0.0, turn.end - event.t)
    # A cutin log knows the plan: a turn that said everything it meant to say ended,
    # it did not stop, however close to its end the backchannel came.
    stopped = turn.interrupted and latency <= BACKCHANNEL_WINDOW_S
    nxt = _next_floor_turn(turns, pos)
    answered = stopped and nxt is not None and nxt.speaker == "agent"
    return stopped, answered, latency


def _presumption_verdict(prev: Turn | None, turn: Turn, known: set[str]) -> list[JudgeVerdict]:
    """``prev``: the agent's previous turn; ``known``: words heard or said before ``turn``."""
    if prev is None or not prev.interrupted or not prev.unspoken.strip():
        return []
    leaked = _content_words(prev.unspoken) - known
    used = sorted(leaked & _content_words(turn.spoken))
    back_ref = _BACK_REFERENCE.search(turn.spoken)
    if used:
        label = FAIL
        why = (
            f"uses {', '.join(repr(w) for w in used[:6])} from the part of turn {prev.index} "
            f"the tester never heard (cut at word {prev.cut_word})"
        )
    elif back_ref:
        label = WARN
        why = (
            f"refers back ({back_ref.group(0)!r}) right after turn {prev.index} was cut; "
            f"the tester never heard its end"
        )
    else:
        label = PASS
        why = f"does not rely on the unheard end of turn {prev.index}"
    return [
        _turn_verdict(
            label, "presumes_unspoken", turn.index, why, t=turn.start, extra={"words": used}
        )
    ]


def _latency_verdicts(turns: Sequence[Turn], pos: int) -> list[JudgeVerdict]:
    turn = turns[pos]
    if turn.speaker != "user" or pos + 1 >= len(turns):
        return []
    nxt = turns[pos + 1]
    user_end = turn.end if turn.end is not None else turn.start
    if nxt.speaker == "user":
        return [
            _turn_verdict(
                FAIL,
                "response_latency",
                turn.index,
                "no agent response before the tester spoke again",
                t=user_end,
            )
        ]
    if user_end is None or nxt.start is None:
        return []
    gap = nxt.start - user_end
    if gap < 0:
        label, why = FAIL, f"agent began {_fmt(-gap)} before the tester finished"
    elif gap <= RESPONSE_LATENCY_S:
        label, why = PASS, f"answered {_fmt(gap)} after the tester finished"
    else:
        label, why = (
            FAIL,
            f"answered {_fmt(gap)} after the tester finished (over {RESPONSE_LATENCY_S:g} s)",
        )
    return [
        _turn_verdict(label, "response_latency", nxt.index, why, t=nxt.start, score=round(gap, 6))
    ]


def success_verdicts(trial: Trial, phrases: Sequence[str]) -> list[JudgeVerdict]:
    """Scenario success criteria: each phrase must occur in the agent's spoken words."""
    spoken = f" {_normalize(' '.join(t.spoken for t in trial.agent_turns()))} "
    out = []
    missing = []
    for phrase in phrases:
        needle = _normalize(phrase)
        if not needle:
            continue
        ok = f" {needle} " in spoken
        if not ok:
            missing.append(phrase)
        where = ""
        if ok:
            hit = next(
                (t for t in trial.agent_turns() if f" {needle} " in f" {_normalize(t.spoken)} "),
                None,
            )
            where = f" (turn {hit.index})" if hit is not None else " (across turns)"
        out.append(
            JudgeVerdict(
                JUDGE,
                PASS if ok else FAIL,
                f"success: {phrase}",
                rationale=f"the agent said {phrase!r}{where}"
                if ok
                else f"the agent never said {phrase!r}",
                t=trial.duration,
            )
        )
    if out:
        ok = not missing
        out.append(
            JudgeVerdict(
                JUDGE,
                PASS if ok else FAIL,
                "success",
                rationale=(
                    f"all {len(out)} success phrases" if len(out) > 1 else "the success phrase"
                )
                + " spoken"
                if ok
                else f"{len(missing)} of {plural(len(out), 'success phrase')} never spoken",
                score=(len(out) - len(missing)) / len(out),
                t=trial.duration,
            )
        )
    return out


__all__ = [
    "BACKCHANNEL_WINDOW_S",
    "JUDGE",
    "RESPONSE_LATENCY_S",
    "YIELD_WINDOW_S",
    "judge_trial",
    "success_verdicts",
]
