"""Crafted cutin session logs for replay tests, written with the real SessionWriter
(:func:`header` and :func:`write_log` are tests/support/logs.py's, here for the tests
that import them with the turns)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    Backchannel,
    EndEvent,
    Event,
    InsertionRecord,
    Interruption,
    Opportunity,
    ShortPause,
    UserTurn,
    WordTiming,
)
from tests.support.logs import header as header
from tests.support.logs import write_log as write_log

WORD_S = 0.4
"""Seconds per word in crafted agent turns (0.35 s of speech, 0.05 s gap)."""

TAU2_NAMES = ("text_airline_results.json", "voice_full_duplex")


def agent_turn(
    n: int,
    start: float,
    text: str,
    *,
    cut_word: int | None = None,
    talk_over_s: float | None = None,
    end_t: float | None = None,
) -> list[Event]:
    """Start, words as heard, and end of agent turn ``n``; cut before ``cut_word`` if given."""
    words = text.split()
    timings = [
        WordTiming(
            word=w, start=round(start + i * WORD_S, 4), end=round(start + i * WORD_S + 0.35, 4)
        )
        for i, w in enumerate(words)
    ]
    heard = timings if cut_word is None else timings[:cut_word]
    if talk_over_s:
        extra = round(talk_over_s / WORD_S)
        heard = timings[: (cut_word or 0) + extra]
    events: list[Event] = [AgentTurnStart(t=start, turn=n, text=text)]
    if heard:
        events.append(AgentWords(t=heard[-1].end, turn=n, words=heard))
    if cut_word is None:
        end = end_t if end_t is not None else timings[-1].end + 0.5
        events.append(AgentTurnEnd(t=end, turn=n, text=text, spoken=text))
    else:
        cut_t = round(start + cut_word * WORD_S, 4)
        stop = cut_t + (talk_over_s or 0.0)
        events.append(
            AgentTurnEnd(
                t=end_t if end_t is not None else round(stop, 4),
                turn=n,
                text=text,
                spoken=" ".join(words[:cut_word]),
                unspoken=" ".join(words[cut_word:]),
                interrupted=True,
                cut_t=cut_t,
                cut_word=cut_word,
                talk_over_s=talk_over_s if talk_over_s is not None else 0.0,
            )
        )
    return events


def cut_time(start: float, cut_word: int) -> float:
    return round(start + cut_word * WORD_S, 4)


def interruption(n: int, start: float, cut_word: int, line: str, user_turn: int) -> list[Event]:
    """The tester cutting in on agent turn ``n`` at word ``cut_word`` (events at the cut)."""
    t = cut_time(start, cut_word)
    return [
        Interruption(t=t, turn=n, trigger="auto", cut_t=t, cut_word=cut_word, text=line),
        user(user_turn, t, line, source="interruption"),
    ]


def user(
    n: int,
    t: float,
    text: str,
    *,
    rendered: str | None = None,
    insertions: Sequence[tuple[int, str, str]] = (),
    source: str = "typed",
    seconds: float = 1.5,
) -> UserTurn:
    return UserTurn(
        t=t,
        turn=n,
        source=source,
        original=text,
        rendered=rendered if rendered is not None else text,
        insertions=[InsertionRecord(index=i, kind=k, token=tok) for i, k, tok in insertions],
        alpha=0.5,
        end_t=round(t + seconds, 4),
    )


def backchannel(n: int, t: float, token: str = "mm-hmm") -> list[Event]:
    return [
        ShortPause(t=t, index=0, silence_start=round(t - 0.2, 4), turn=n),
        Opportunity(t=t, index=0, pause_index=0, turn=n, decision="BACKCHANNEL", executed=True),
        Backchannel(t=t, turn=n, trigger="auto", token=token, words_heard=8),
    ]


A0 = "Thanks for calling Riverside Outfitters. How can I help you today?"
A1 = (
    "I have your order open and I can see the address we have on file which is the "
    "Elm Street one from last year and it ships on Friday"
)
A2 = "Of course, go ahead with the new address."


def standard_call(path: Path) -> Path:
    """Greeting, a user turn with disfluencies, an agent turn cut at word 14 (after
    "file"), the interrupting tester turn, a reply, a backchannel, the end."""
    start1 = 6.0
    events: list[Event] = [
        *agent_turn(0, 0.0, A0),
        user(
            0,
            4.0,
            "I want to change my address",
            rendered="uh, I want to change my- my address",
            insertions=[(0, "filler", "uh,"), (4, "repetition", "my-")],
        ),
        *agent_turn(1, start1, A1, cut_word=14),
        *interruption(1, start1, 14, "sorry, can I just give you the new one?", 1),
        *agent_turn(2, 14.5, A2 + " I will update it now and send you a confirmation email."),
        *backchannel(2, 16.0),
        EndEvent(t=25.0, reason="hangup"),
    ]
    return write_log(path, events)
