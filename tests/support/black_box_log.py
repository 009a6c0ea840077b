"""A small hand-made log of a call to a black-box agent (``--agent twilio:ws://...``).

Shaped like what the remote loop writes (times taken from a real call against the
simulated far end): the line's events, an agent turn the tester cut that stopped
0.24 s later (one word said over the tester), a backchannel that made the agent stop
(a false yield), a turn where the agent talked on through an interruption, and the
agent hanging up. No audio, so replay tests of it are fast.
"""

from __future__ import annotations

from pathlib import Path

from sessions.log import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    Backchannel,
    EndEvent,
    Event,
    Header,
    Interruption,
    UserTurn,
    WordTiming,
)
from sessions.log.models import (
    AgentInfo,
    AgentYield,
    LineEvent,
    SpeechInfo,
    TurnEnd,
)
from tests.support.logs import header, tendencies, write_log

TURN0 = "I have your order open here and I can see the address we have on file with the"
TURN1 = "The parcel left our warehouse on Monday morning and the courier expects"
TURN2 = "The tracking number is in the email we sent you and the driver will leave it with"
WORD_S = 0.3


def _words(text: str, t0: float, until: float | None = None) -> list[WordTiming]:
    out = []
    for i, word in enumerate(text.split()):
        start = round(t0 + i * WORD_S, 4)
        if until is not None and start >= until:
            break
        out.append(WordTiming(word=word, start=start, end=round(start + 0.26, 4)))
    return out


def black_box_events() -> list[Event]:
    ev: list[Event] = [
        LineEvent(t=0.0, kind="open", detail="connected to ws://127.0.0.1:8765/"),
        LineEvent(
            t=0.0,
            kind="format",
            detail="audio/x-mulaw 8000 Hz mono",
            data={"encoding": "audio/x-mulaw", "rate": 8000, "channels": 1},
        ),
    ]
    # Turn 0: cut after 14 words ("... on file"); "with the" said over the tester.
    w0 = _words(TURN0, 0.32, until=4.74)
    cut = round(w0[13].end + 0.01, 6)  # 14 words had finished playing
    stop = 4.74
    said0 = " ".join(w.word for w in w0)
    ev += [
        AgentTurnStart(t=0.32, turn=0),
        Interruption(t=cut, turn=0, trigger="auto", cut_t=cut, cut_word=14, text="Sorry, wait"),
        UserTurn(
            t=cut,
            turn=0,
            source="interruption",
            original="Sorry, can I just give you the new address?",
            rendered="Sorry, can I just give you the new address?",
            end_t=7.06,
        ),
        LineEvent(t=stop, kind="clear", detail="the agent cleared its audio"),
        AgentWords(t=w0[-1].end, turn=0, words=w0),
        AgentYield(
            t=5.252,
            turn=0,
            after="interruption",
            onset_t=cut,
            window_s=2.0,
            yielded=True,
            stop_t=stop,
            latency_s=round(stop - cut, 4),
            clear_t=stop,
            heard=said0,
            talk_over_s=0.25,
        ),
        TurnEnd(t=5.252, silence_start=4.75, turn=0),
        AgentTurnEnd(
            t=5.252,
            turn=0,
            text=said0,
            spoken=said0,
            interrupted=True,
            cut_t=cut,
            cut_word=14,
            stop_t=stop,
            talk_over_s=0.25,
            speech_s=3.78,
        ),
        UserTurn(
            t=7.3,
            turn=1,
            source="scenario",
            original="It's 12 Birch Lane.",
            rendered="It's 12 Birch Lane.",
            end_t=8.6,
        ),
    ]
    # Turn 1: a backchannel after 6 words; the agent stops 0.31 s later (a false yield).
    w1 = _words(TURN1, 9.4)
    bc = round(w1[6].start - 0.05, 6)
    w1 = [w for w in w1 if w.start < bc + 0.31]
    said1 = " ".join(w.word for w in w1)
    ev += [
        AgentTurnStart(t=9.4, turn=1, response_latency_s=0.8),
        Backchannel(t=bc, turn=1, trigger="auto", token="mm-hmm", words_heard=6),
        AgentWords(t=w1[-1].end, turn=1, words=w1),
        AgentYield(
            t=round(bc + 0.82, 6),
            turn=1,
            after="backchannel",
            onset_t=bc,
            window_s=1.0,
            yielded=True,
            stop_t=round(bc + 0.31, 6),
            latency_s=0.31,
            heard=said1,
            talk_over_s=0.3,
        ),
        TurnEnd(t=round(bc + 0.82, 6), silence_start=round(bc + 0.32, 6), turn=1),
        AgentTurnEnd(t=round(bc + 0.82, 6), turn=1, text=said1, spoken=said1, speech_s=2.1),
    ]
    # Turn 2: cut after 8 words; it talks on to the end of its sentence.
    w2 = _words(TURN2, 13.0)
    cut2 = round(w2[7].end + 0.01, 6)
    said2 = " ".join(w.word for w in w2)
    end2 = w2[-1].end
    ev += [
        AgentTurnStart(t=13.0, turn=2, response_latency_s=0.6),
        Interruption(t=cut2, turn=2, trigger="manual", cut_t=cut2, cut_word=8, text="Hold on"),
        UserTurn(
            t=cut2,
            turn=2,
            source="interruption",
            original="Hold on",
            rendered="Hold on",
            end_t=cut2 + 0.7,
        ),
        AgentYield(
            t=round(cut2 + 2.0, 6),
            turn=2,
            after="interruption",
            onset_t=cut2,
            window_s=2.0,
            yielded=False,
            resumed=True,
            heard=said2,
            talk_over_s=0.7,
        ),
        AgentWords(t=end2, turn=2, words=w2),
        TurnEnd(t=end2 + 0.5, silence_start=end2, turn=2),
        AgentTurnEnd(
            t=end2 + 0.5,
            turn=2,
            text=said2,
            spoken=said2,
            interrupted=True,
            cut_t=cut2,
            cut_word=8,
            talk_over_s=0.7,
            speech_s=5.0,
        ),
        LineEvent(t=end2 + 1.0, kind="closed", detail="the agent hung up", data={"by": "agent"}),
        EndEvent(t=end2 + 1.0, reason="agent_hangup"),
    ]
    return ev


def black_box_header() -> Header:
    return header(
        "remote01",
        started_at="2026-12-03T10:00:00+00:00",
        cutin_version="test",
        agent=AgentInfo(kind="twilio", name="Acme", base_url="ws://127.0.0.1:8765/"),
        scenario="retail-order-change",
        speech=SpeechInfo(tts="espeak", input="type", stt="tiny.en (offline)", vad="onnx"),
        tendencies=tendencies(0.0, 1.0, 1.0),
    )


def write_black_box_log(folder: Path) -> Path:
    return write_log(folder / "remote01.jsonl", black_box_events(), black_box_header())
