"""Session logs for the replay screen's tests, written with the real SessionWriter.

:func:`write_demo_log` writes a short call that has everything the screen draws:
word timings, short pauses, a shadow opportunity, a backchannel, tester turns with
real disfluency insertions, two cuts (one the agent talked over), rule verdicts
from the real rule judge and hand-written LLM verdicts.
"""

from __future__ import annotations

from pathlib import Path

from controls import inject_disfluency
from replay.cutin_log.session_import import log_verdict
from replay.judges.rules import judge_trial
from replay.load import load_log
from sessions.log import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    Backchannel,
    EndEvent,
    Event,
    Header,
    Interruption,
    Opportunity,
    ShortPause,
    TurnEnd,
    UserTurn,
    WordTiming,
)
from sessions.log.models import Verdict as LogVerdict
from sessions.log.writer import append_events
from tests.support.logs import header, tendencies, write_log

WORD_S = 0.36
AGENT = (
    "Thanks for calling Acme support, this is Sam. I can help with orders, returns and "
    "billing today. What can I do for you?",
    "Sure, I can change that. I just need the new street address, the apartment number "
    "if there is one, and a phone number the courier can call on delivery day.",
    "Got it, 42 Elm Street. And the courier can call the phone number on your account?",
    "Done. Your order now ships to 42 Elm Street and arrives Thursday between nine and "
    "noon, and I have also sent a confirmation email with the tracking link.",
    "You're welcome. Have a great day!",
)
USER = (
    "I need to change the shipping address on my order please",
    "Sorry, it's 42 Elm Street, apartment 3B",
    "Yes that works, thank you so much",
)


class _Call:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.pause = 0
        self.opportunity = 0

    def agent(
        self,
        turn: int,
        t: float,
        *,
        cut_word: int | None = None,
        talk_over: float = 0.0,
        backchannel_at: int | None = None,
        pause_every: int = 9,
        text: str | None = None,
    ) -> float:
        """An agent turn from ``t`` (text: ``AGENT[turn]``); returns when it ended."""
        text = AGENT[turn] if text is None else text
        words = text.split()
        self.events.append(AgentTurnStart(t=t, turn=turn, text=text))
        heard = len(words) if cut_word is None else cut_word
        cut_t = t + heard * WORD_S if cut_word is not None else None
        kept = round(talk_over / WORD_S) if cut_word is not None else 0
        played = min(len(words), heard + kept)
        timings = [
            WordTiming(word=w, start=t + i * WORD_S, end=t + i * WORD_S + 0.3)
            for i, w in enumerate(words[:played])
        ]
        for first in range(0, played, 4):
            chunk = timings[first : first + 4]
            self.events.append(
                AgentWords(t=chunk[-1].end, turn=turn, words=chunk, first_index=first)
            )
            if first and first % pause_every < 4 and first < heard:
                at = chunk[0].start - 0.05
                self.events.append(
                    ShortPause(t=at + 0.2, index=self.pause, silence_start=at, turn=turn)
                )
                self.events.append(
                    Opportunity(
                        t=at + 0.2,
                        index=self.opportunity,
                        pause_index=self.pause,
                        turn=turn,
                        decision="INTERRUPT" if turn == 3 else "NOTHING",
                        mode="shadow" if turn == 3 else "auto",
                    )
                )
                self.pause += 1
                self.opportunity += 1
        if backchannel_at is not None:
            at = timings[backchannel_at].start - 0.02
            self.events.append(
                Backchannel(t=at, turn=turn, token="mm-hmm", words_heard=backchannel_at)
            )
        end = timings[-1].end if timings else t
        if cut_word is not None and cut_t is not None:
            self.events.append(
                Interruption(t=cut_t, turn=turn, trigger="auto", cut_t=cut_t, cut_word=cut_word)
            )
            self.events.append(
                AgentTurnEnd(
                    t=end,
                    turn=turn,
                    text=text,
                    spoken=" ".join(words[:cut_word]),
                    unspoken=" ".join(words[cut_word:]),
                    interrupted=True,
                    cut_t=cut_t,
                    cut_word=cut_word,
                    talk_over_s=max(0.0, end - cut_t),
                )
            )
        else:
            self.events.append(TurnEnd(t=end + 0.5, silence_start=end, turn=turn))
            self.events.append(AgentTurnEnd(t=end + 0.5, turn=turn, text=text, spoken=text))
        return end

    def user(
        self,
        turn: int,
        t: float,
        *,
        source: str = "typed",
        alpha: float = 1.0,
        text: str | None = None,
    ) -> float:
        said = inject_disfluency(USER[turn] if text is None else text, alpha)
        end = t + len(said.rendered.split()) * 0.3
        self.events.append(
            UserTurn(
                t=t,
                turn=turn,
                source=source,
                original=said.original,
                rendered=said.rendered,
                insertions=[
                    {"index": i.index, "kind": str(i.kind), "token": i.token}
                    for i in said.insertions
                ],
                alpha=alpha,
                end_t=end,
            )
        )
        return end


def demo_events() -> list[Event]:
    """The events of the demo call, in time order."""
    call = _Call()
    end = call.agent(0, 0.0, backchannel_at=10)
    end = call.user(0, end + 0.8)
    end = call.agent(1, end + 0.6, cut_word=14, talk_over=0.4)
    end = call.user(1, end + 0.1, source="interruption", alpha=0.0)
    end = call.agent(2, end + 0.7)
    end = call.agent(3, end + 1.2, cut_word=14)
    end = call.user(2, end + 0.2, source="interruption")
    end = call.agent(4, end + 0.5)
    call.events.append(EndEvent(t=end + 1.0, reason="hangup"))
    return call.events


def demo_header() -> Header:
    return header(
        "demo01",
        started_at="2025-03-04T10:00:00+00:00",
        cutin_version="test",
        scenario="retail-address-change",
        tendencies=tendencies(1.0, 0.7, 0.5),
    )


def llm_verdicts() -> list[LogVerdict]:
    """What an LLM judge might have said about the demo call (speaker/turn numbers)."""
    return [
        LogVerdict(
            t=40.0,
            judge="llm",
            scope="call",
            name="call",
            label="fail",
            rationale="The agent confirmed a phone number the tester never heard asked for.",
        ),
        LogVerdict(
            t=40.0,
            judge="llm",
            scope="turn",
            speaker="agent",
            turn=1,
            name="turn",
            label="pass",
            rationale="Stopped promptly when the tester cut in with the address.",
        ),
        LogVerdict(
            t=40.0,
            judge="llm",
            scope="turn",
            speaker="agent",
            turn=2,
            name="turn",
            label="fail",
            rationale="Asks about the courier's phone number, which was only in the unheard part.",
        ),
    ]


def write_demo_log(folder: Path, name: str = "demo-call.jsonl") -> Path:
    """Write the demo call to ``folder/name`` with rule and LLM verdicts appended."""
    path = write_log(folder / name, demo_events(), demo_header())
    trial = load_log(path)
    rules = [log_verdict(v, trial) for v in judge_trial(trial)]
    append_events(path, [*rules, *llm_verdicts()])
    return path


def write_plain_log(folder: Path, name: str, session_id: str, *, cut: bool = False) -> Path:
    """A two-turn call without verdicts (for listing folders)."""
    head = header(
        session_id, started_at="2025-03-04T11:00:00+00:00", scenario="short", tendencies=None
    )
    call = _Call()
    end = call.agent(0, 0.0, cut_word=6 if cut else None)
    end = call.user(0, end + 0.5, alpha=0.0)
    call.events.append(EndEvent(t=end + 0.5))
    return write_log(folder / name, call.events, head)


def write_long_log(path: Path, *, minutes: float) -> Path:
    """A call of about ``minutes`` minutes: the demo's turns over and over, every
    third agent turn cut (for scrolling tests)."""
    call = _Call()
    t = 0.0
    turn = 0
    while t < minutes * 60:
        cut = 10 if turn % 3 == 1 else None
        t = call.agent(turn, t, text=AGENT[turn % len(AGENT)], cut_word=cut) + 0.6
        t = call.user(turn, t, text=USER[turn % len(USER)], alpha=0.6) + 0.6
        turn += 1
    call.events.append(EndEvent(t=t))
    head = header("long", started_at="2025-03-04T12:00:00+00:00", scenario="long", tendencies=None)
    return write_log(path, call.events, head)
