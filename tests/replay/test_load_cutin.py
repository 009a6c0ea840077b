"""Loading cutin session logs into the replay model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replay.errors import LoadError
from replay.load import load_batch, load_paths, recent_sessions
from replay.model import Trial
from sessions.log.models import (
    AgentTurnStart,
    AgentWords,
    Backchannel,
    Event,
    Interruption,
    Opportunity,
    Verdict,
    WordTiming,
)
from sessions.log.writer import append_events

from .craft import A1, agent_turn, header, standard_call, user, write_log


def only(trials: list[Trial]) -> Trial:
    assert len(trials) == 1
    return trials[0]


def test_turns_are_in_onset_order_with_cut_and_disfluency_fields(tmp_path: Path) -> None:
    trial = only(load_paths([standard_call(tmp_path / "call.jsonl")]))
    assert trial.kind == "cutin" and trial.id == "call" and trial.task_id == "crafted"
    assert [(t.speaker, t.number) for t in trial.turns] == [
        ("agent", 0),
        ("user", 0),
        ("agent", 1),
        ("user", 1),
        ("agent", 2),
    ]
    assert [t.index for t in trial.turns] == [0, 1, 2, 3, 4]
    cut = trial.turns[2]
    assert cut.interrupted and cut.cut_word == 14 and cut.cut_t == pytest.approx(11.6)
    assert cut.spoken == " ".join(A1.split()[:14])
    assert cut.unspoken.startswith("file which is the Elm Street")
    assert len(cut.words) == 14
    said = trial.turns[1]
    assert said.original == "I want to change my address"
    assert said.rendered == "uh, I want to change my- my address"
    assert [(i.index, i.kind, i.token) for i in said.insertions] == [
        (0, "filler", "uh,"),
        (4, "repetition", "my-"),
    ]
    assert trial.turns[3].source == "interruption"
    assert trial.duration == 25.0 and trial.meta["end_reason"] == "hangup"
    assert trial.header["schema"] == "cutin.session/1"


def test_inline_events_sit_on_the_turn_they_name(tmp_path: Path) -> None:
    trial = only(load_paths([standard_call(tmp_path / "call.jsonl")]))
    cut = trial.turns[2]
    (event,) = cut.events_of(Interruption)
    assert event.t == pytest.approx(11.6)
    assert event.data["yielded"] is True and event.data["yield_latency_s"] == 0.0
    last = trial.turns[4]
    assert [e.kind for e in last.events] == ["short_pause", "opportunity", "backchannel"]
    assert last.events_of(Backchannel)[0].label == "mm-hmm"
    assert last.events_of(Opportunity)[0].label == "BACKCHANNEL"


def test_verdict_events_become_verdicts_on_the_right_turn(tmp_path: Path) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    append_events(
        path,
        [
            Verdict(
                t=14.5, judge="rules", scope="turn", turn=2, speaker="agent", name="x", label="fail"
            ),
            Verdict(t=25.0, judge="llm", scope="call", name="llm", label="pass", rationale="fine"),
        ],
    )
    trial = only(load_paths([path]))
    by_name = {v.name: v for v in trial.verdicts}
    assert by_name["x"].turn == 4 and by_name["x"].scope == "turn"
    assert by_name["llm"].turn is None and by_name["llm"].rationale == "fine"
    assert trial.failed  # no reward: a current fail verdict decides


def test_a_later_verdict_with_the_same_key_replaces_the_earlier_one(tmp_path: Path) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    append_events(path, [Verdict(t=1, judge="llm", name="llm", label="fail")])
    append_events(path, [Verdict(t=2, judge="llm", name="llm", label="pass")])
    trial = only(load_paths([path]))
    assert len(trial.verdicts) == 2
    assert [v.label for v in trial.current_verdicts()] == ["pass"]
    assert not trial.failed


def test_torn_last_line_loads_with_a_warning(tmp_path: Path) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "agent_words", "t": 30.0, "turn": 3, "wor')
    batch = load_batch([path])
    trial = only(batch.trials)
    assert len(trial.turns) == 5
    assert any("truncated last line" in w for w in trial.warnings)
    assert batch.warnings == trial.warnings


def test_crash_mid_turn_keeps_the_words_heard(tmp_path: Path) -> None:
    text = "Let me read the whole policy to you now because it matters a lot"
    events: list[Event] = [
        AgentTurnStart(t=0.0, turn=0, text=text),
        AgentWords(
            t=1.0,
            turn=0,
            words=[
                WordTiming(word=w, start=i * 0.3, end=i * 0.3 + 0.25)
                for i, w in enumerate(text.split()[:5])
            ],
        ),
    ]
    trial = only(load_paths([write_log(tmp_path / "crash.jsonl", events)]))
    (turn,) = trial.turns
    assert turn.meta.get("incomplete") is True
    assert turn.spoken == "Let me read the whole"
    assert turn.unspoken == "policy to you now because it matters a lot"
    assert turn.end == pytest.approx(1.45)


def test_bad_middle_line_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(3, "this is not json\n")
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(LoadError, match=r"call\.jsonl:4: malformed event"):
        load_paths([path])


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("", "empty file"),
        ('{"hello": 1}\n{"t": 1}\n', 'not a cutin session log \\(line 1 has no "schema"'),
        ('{"schema": "cutin.session/9", "session_id": "x"}\n', "unsupported log schema version"),
        ("just some text\n", r"line 1 is not JSON\); expected a cutin session log"),
    ],
)
def test_files_that_are_nothing_we_know_get_a_clear_error(
    tmp_path: Path, content: str, match: str
) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LoadError, match=match) as info:
        load_paths([path])
    assert str(path) in str(info.value)


def test_json_that_is_neither_a_log_nor_tau2_says_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text('{"rows": [1, 2, 3]}', encoding="utf-8")
    with pytest.raises(LoadError) as info:
        load_paths([path])
    message = str(info.value)
    assert str(path) in message
    assert "cutin.session/1" in message and "results.json" in message


def test_missing_path_and_empty_folder_are_errors(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        load_paths([tmp_path / "nope.jsonl"])
    with pytest.raises(LoadError, match="no session logs"):
        load_paths([tmp_path])


def test_a_folder_of_logs_loads_in_path_order_and_skip_bad_skips(tmp_path: Path) -> None:
    standard_call(tmp_path / "b.jsonl")
    write_log(
        tmp_path / "sub" / "a.jsonl", [*agent_turn(0, 0.0, "Hello there."), user(0, 2.0, "hi")]
    )
    assert [t.id for t in load_paths([tmp_path])] == ["b", "a"]  # b.jsonl < sub/a.jsonl
    (tmp_path / "c.jsonl").write_text("not a log\n", encoding="utf-8")
    with pytest.raises(LoadError, match=r"c\.jsonl"):
        load_paths([tmp_path])
    batch = load_batch([tmp_path], skip_bad=True)
    assert [t.id for t in batch.trials] == ["b", "a"]
    assert any("c.jsonl" in w for w in batch.warnings)


def test_recent_sessions_newest_first_with_limit(tmp_path: Path) -> None:
    for i, name in enumerate(["old", "mid", "new"]):
        path = write_log(tmp_path / f"{name}.jsonl", agent_turn(0, 0.0, "Hi."), header(name))
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    (tmp_path / "x.json.cutin-verdicts.jsonl").write_text("{}\n", encoding="utf-8")
    assert [p.stem for p in recent_sessions(tmp_path, 2)] == ["new", "mid"]
    assert [p.stem for p in recent_sessions(tmp_path, 10)] == ["new", "mid", "old"]
    assert recent_sessions(tmp_path / "missing", 5) == []
    assert [t.id for t in load_paths(recent_sessions(tmp_path, 1))] == ["new"]


def test_unknown_event_types_and_fields_do_not_break_loading(tmp_path: Path) -> None:
    path = standard_call(tmp_path / "call.jsonl")
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "future_thing", "t": 26.0, "turn": 1, "shiny": true}\n')
    trial = only(load_paths([path]))
    assert len(trial.turns) == 5
