"""The session log contract: write, read back, survive crashes, keep what it does not know."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controls import Situation, Tendencies, decide, inject_disfluency
from sessions.log import (
    SCHEMA,
    AgentInfo,
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    Backchannel,
    EndEvent,
    ErrorEvent,
    Event,
    Header,
    InsertionRecord,
    Interruption,
    LogError,
    Opportunity,
    SessionWriter,
    ShortPause,
    SpeechInfo,
    SpeechStart,
    TendencyValues,
    TurnEnd,
    UnknownEvent,
    UserTurn,
    Verdict,
    WordTiming,
    parse_event,
    read_session,
)
from sessions.log.writer import append_events, dump_line
from tests.support.logs import header as log_header
from tests.support.logs import write_log


def header(**changes: object) -> Header:
    """A header with every field set."""
    base = log_header(
        "abc123def456",
        started_at="2025-01-02T03:04:05+00:00",
        cutin_version="0.1.0",
        agent=AgentInfo(kind="openai", name="support", model="test-model", base_url=None),
        scenario="retail-order-change",
        speech=SpeechInfo(tts="espeak", input="mic", stt="tiny.en", vad="silero"),
        tendencies=TendencyValues(alpha=0.5, beta=0.7, gamma=0.3),
        seeds={"scenario": 7},
    )
    return base.model_copy(update=changes)


def every_event() -> list[Event]:
    """One of each event type, in a plausible order, made from real rule-engine output."""
    user = inject_disfluency("But I wanted the blue one, not the red one", 1.0)
    situation = Situation(
        agent_speaking_seconds=4.3, agent_words=14, agent_text="I see", agent_turn_index=1
    )
    decision = decide(situation, Tendencies(beta=0.7, gamma=0.3))
    return [
        AgentTurnStart(t=0.0, turn=0, text="Hello, how can I help?"),
        SpeechStart(t=0.05, speaker="agent", turn=0),
        AgentWords(
            t=0.4,
            turn=0,
            words=[WordTiming(word="Hello,", start=0.05, end=0.4)],
            first_index=0,
        ),
        ShortPause(t=0.62, index=0, silence_start=0.4, turn=0),
        Opportunity(
            t=0.62,
            index=0,
            pause_index=0,
            turn=0,
            decision=str(decision.action),
            checks=[c.as_dict() for c in decision.checks],
            executed=False,
            mode="shadow",
            situation=situation.as_dict(),
        ),
        TurnEnd(t=0.92, silence_start=0.4, turn=0, short_pause_index=0),
        AgentTurnEnd(
            t=0.92,
            turn=0,
            text="Hello, how can I help?",
            spoken="Hello,",
            unspoken="how can I help?",
            interrupted=True,
            cut_t=0.45,
            cut_word=1,
            talk_over_s=0.12,
        ),
        UserTurn(
            t=1.0,
            turn=0,
            source="typed",
            original=user.original,
            rendered=user.rendered,
            insertions=[InsertionRecord(**i.as_dict()) for i in user.insertions],
            alpha=user.alpha,
            end_t=2.5,
        ),
        Interruption(t=0.45, turn=0, trigger="manual", cut_t=0.45, cut_word=1, text="sorry"),
        Backchannel(t=3.0, turn=1, trigger="auto", token="mm-hmm", words_heard=6),
        Verdict(
            t=9.0,
            judge="rules",
            scope="turn",
            turn=1,
            speaker="agent",
            name="stops-when-cut",
            label="pass",
            score=1.0,
            rationale="stopped 0.1 s after the cut",
        ),
        ErrorEvent(t=9.5, where="tts", message="espeak-ng exited 1"),
        EndEvent(t=10.0, reason="hangup"),
        UnknownEvent(t=10.5, type="laughter", speaker="user", loudness=0.3),
    ]


# --- round trip --------------------------------------------------------------------------


def test_every_event_type_round_trips(tmp_path: Path) -> None:
    events = every_event()
    known = {type(e) for e in events}
    assert len(known) == 14  # 13 known types and UnknownEvent
    session = read_session(write_log(tmp_path / "call.jsonl", events, header()), keep_unknown=True)
    assert session.header == header()
    assert session.warnings == []
    assert len(session.events) == len(events)
    for wrote, read in zip(events, session.events, strict=True):
        assert type(read) is type(wrote)
        if isinstance(wrote, ShortPause):
            # The turn end that names it marks it on load.
            assert isinstance(read, ShortPause) and read.became_turn_end
            wrote = wrote.model_copy(update={"became_turn_end": True})
        assert read == wrote


def test_first_line_is_the_header_and_each_event_is_one_line(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event())
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert first["type"] == "header" and first["schema"] == SCHEMA == "cutin.session/1"
    assert "base_url" not in first["agent"]  # unset optional fields stay out of the line
    assert all({"type", "t"} <= json.loads(line).keys() for line in lines[1:])
    assert len(lines) == 1 + len(every_event())


log_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=80)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(original=log_text, rendered=log_text, t=st.floats(0, 1e5, allow_nan=False))
def test_any_text_round_trips(tmp_path: Path, original: str, rendered: str, t: float) -> None:
    path = tmp_path / f"call-{abs(hash((original, rendered, t)))}.jsonl"
    event = UserTurn(t=t, turn=3, original=original, rendered=rendered)
    session = read_session(write_log(path, [event, EndEvent(t=t + 1)]))
    assert session.events[0] == event


def test_session_helpers(tmp_path: Path) -> None:
    session = read_session(write_log(tmp_path / "call.jsonl", every_event()))
    assert [e.turn for e in session.of(Backchannel)] == [1]
    assert session.duration == 10.5


# --- crashes and bad lines ------------------------------------------------------------------


def test_a_crash_truncated_last_line_is_a_warning(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:4])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "agent_words", "t": 0.9, "turn": 0, "words": [{"word": "hel')
    session = read_session(path)
    assert len(session.events) == 4
    assert [w.line for w in session.warnings] == [6]
    assert "truncated" in str(session.warnings[0])


def test_a_torn_last_line_that_is_valid_json_but_incomplete_is_a_warning(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:2])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "short_pause", "t": 1}')  # cut before its other fields (and "\n")
    session = read_session(path)
    assert len(session.events) == 2 and len(session.warnings) == 1


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("this is not json", "not JSON"),
        ("[1, 2, 3]", "not a JSON object"),
        ('{"t": 1.0}', '"type"'),
        ('{"type": "short_pause"}', '"t"'),
        ('{"type": "short_pause", "t": "soon", "index": 0, "silence_start": 0}', "t"),
        ('{"type": "user_turn", "t": 1, "turn": 0, "original": "x"}', "rendered"),
    ],
)
def test_a_malformed_middle_line_names_file_and_line(tmp_path: Path, bad: str, why: str) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:2])
    with path.open("a", encoding="utf-8") as fh:
        fh.write(bad + "\n" + dump_line(EndEvent(t=5.0)))
    with pytest.raises(LogError) as info:
        read_session(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4: malformed event")
    assert why in message
    assert "\n" not in message


def test_skip_bad_skips_with_a_warning(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:2])
    with path.open("a", encoding="utf-8") as fh:
        fh.write("garbage\n" + dump_line(EndEvent(t=5.0)))
    session = read_session(path, skip_bad=True)
    assert [type(e) for e in session.events][-1] is EndEvent
    assert len(session.events) == 3
    assert [(w.line, "bad line skipped" in w.message) for w in session.warnings] == [(4, True)]


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:2])
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n   \n" + dump_line(EndEvent(t=5.0)))
    session = read_session(path)
    assert len(session.events) == 3 and session.warnings == []


# --- forward compatibility ------------------------------------------------------------------


def test_unknown_fields_are_preserved_on_load_and_on_re_dump(tmp_path: Path) -> None:
    head = header().model_dump(by_alias=True)
    head["recorder"] = {"host": "lab-3", "gain": None}
    head["agent"]["voice"] = "alloy"
    pause = {
        "type": "short_pause",
        "t": 1.5,
        "index": 0,
        "silence_start": 1.3,
        "vad_prob": 0.12,
        "note": None,
        "nested": {"a": [1, None, {"b": None}]},
    }
    path = tmp_path / "newer.jsonl"
    path.write_text(json.dumps(head) + "\n" + json.dumps(pause) + "\n", encoding="utf-8")
    session = read_session(path)
    assert session.header.model_extra == {"recorder": {"host": "lab-3", "gain": None}}
    assert session.header.agent.model_extra == {"voice": "alloy"}
    event = session.events[0]
    assert isinstance(event, ShortPause)
    assert event.model_extra == {
        "vad_prob": 0.12,
        "note": None,
        "nested": {"a": [1, None, {"b": None}]},
    }
    redumped = json.loads(dump_line(event))
    for key in ("vad_prob", "note", "nested"):
        assert redumped[key] == pause[key]
    assert json.loads(dump_line(session.header))["recorder"] == head["recorder"]
    # And a second generation keeps them too.
    again = read_session(write_log(tmp_path / "again.jsonl", session.events, session.header))
    assert again.header == session.header
    assert again.events == session.events


def test_an_unknown_event_type_loads_as_unknown_event(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", [])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "sigh", "t": 2.0, "speaker": "user", "depth": 3}\n')
    (event,) = read_session(path, keep_unknown=True).events
    assert isinstance(event, UnknownEvent)
    assert (event.type, event.t, event.model_extra) == (
        "sigh",
        2.0,
        {"speaker": "user", "depth": 3},
    )
    assert json.loads(dump_line(event)) == {"type": "sigh", "t": 2.0, "speaker": "user", "depth": 3}
    # By default (every reader of a log) it is checked and counted, not kept.
    session = read_session(path)
    assert session.events == [] and session.unknown == 1 and session.duration == 2.0


def test_parse_event_picks_the_model_by_type() -> None:
    assert isinstance(parse_event({"type": "end", "t": 1}), EndEvent)
    assert isinstance(parse_event({"type": "backchannel", "t": 1, "turn": 2}), Backchannel)


# --- not a log, or not this version -----------------------------------------------------------


def test_a_newer_schema_version_is_a_clear_error(tmp_path: Path) -> None:
    head = header().model_dump(by_alias=True)
    head["schema"] = "cutin.session/2"
    path = tmp_path / "v2.jsonl"
    path.write_text(json.dumps(head) + "\n", encoding="utf-8")
    with pytest.raises(LogError) as info:
        read_session(path)
    message = str(info.value)
    assert message.startswith(f"{path}:1: unsupported log schema version 'cutin.session/2'")
    assert "cutin.session/1" in message


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"hello, I am a text file\n", "not a cutin session log (line 1 is not JSON)"),
        (b'{"name": "package.json"}\n', 'not a cutin session log (line 1 has no "schema"'),
        (b'{"schema": "tau2.results/1"}\n', "not a cutin session log (schema 'tau2.results/1')"),
        (b"[1, 2]\n", "not a cutin session log"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not a cutin session log"),
        (b"", "empty file"),
        (b'{"schema": "cutin.session/1"}\n', "bad header: session_id"),
    ],
)
def test_not_a_log_is_a_clear_error(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "file.jsonl"
    path.write_bytes(content)
    with pytest.raises(LogError) as info:
        read_session(path)
    assert str(path) in str(info.value)
    assert fragment in str(info.value)


def test_a_missing_file_is_a_log_error(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="cannot read"):
        read_session(tmp_path / "nope.jsonl")


# --- appending and the writer ---------------------------------------------------------------


def test_append_events_after_a_torn_last_line_starts_on_a_new_line(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:3])
    torn = '{"type": "agent_words", "t": 0.9, "turn": 0, "wor'
    with path.open("a", encoding="utf-8") as fh:
        fh.write(torn)
    verdict = Verdict(t=20.0, judge="llm", label="fail", rationale="talked over the user")
    append_events(path, [verdict, EndEvent(t=21.0)])
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[4] == torn
    assert json.loads(lines[5])["type"] == "verdict"
    session = read_session(path)
    assert session.events[-2:] == [verdict, EndEvent(t=21.0)]
    assert [w.line for w in session.warnings] == [5]
    assert "truncated" in session.warnings[0].message


def test_append_events_to_a_clean_log_adds_no_blank_line(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:2])
    append_events(path, [EndEvent(t=3.0)])
    assert "\n\n" not in path.read_text(encoding="utf-8")
    assert read_session(path).events[-1] == EndEvent(t=3.0)


def test_resuming_a_writer_after_a_torn_last_line(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:2])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "backchannel", "t": 2.0, "tu')
    with SessionWriter(path, header(), append=True) as writer:
        writer.write(Backchannel(t=2.5, turn=1))
    session = read_session(path)
    assert session.events[-1] == Backchannel(t=2.5, turn=1)
    assert len(session.warnings) == 1


def test_a_middle_line_that_is_cut_short_but_not_json_object_is_still_an_error(
    tmp_path: Path,
) -> None:
    path = write_log(tmp_path / "call.jsonl", every_event()[:2])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('["type", "t"\n' + dump_line(EndEvent(t=3.0)))
    with pytest.raises(LogError, match=":4: "):
        read_session(path)


def test_the_writer_never_overwrites_a_log(tmp_path: Path) -> None:
    path = write_log(tmp_path / "call.jsonl", [])
    with pytest.raises(FileExistsError):
        SessionWriter(path, header())


def test_writing_after_close_is_refused(tmp_path: Path) -> None:
    writer = SessionWriter(tmp_path / "call.jsonl", header())
    writer.close()
    writer.close()  # idempotent
    assert writer.closed
    with pytest.raises(ValueError, match="closed"):
        writer.write(EndEvent(t=1.0))


def test_lines_are_flushed_as_they_happen(tmp_path: Path) -> None:
    path = tmp_path / "call.jsonl"
    with SessionWriter(path, header()) as writer:
        writer.write(SpeechStart(t=0.1))
        # Readable by another reader before the writer closes.
        assert read_session(path).events == [SpeechStart(t=0.1)]
        assert writer.count == 1


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "call.jsonl"
    with SessionWriter(path, header()) as writer:

        def work(turn: int) -> None:
            for k in range(300):
                writer.write(Backchannel(t=k / 100, turn=turn, token="mm-hmm " * 20))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    session = read_session(path)
    assert session.warnings == []
    assert sorted(e.turn for e in session.of(Backchannel)) == sorted(list(range(4)) * 300)
