"""Regression tests for what the 11,000-case hostile-file run found (issue 23): an event
``type`` that is a list or an object, folders cutin may not read, escape bytes and
newlines from file names, C1 controls and DEL in ids, and scenario or profile texts
so long that a simulation ran for minutes. Each test failed on the code before."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cutin_tui.cli import main
from replay.errors import LoadError
from replay.load import load_path, recent_sessions
from sessions.hostile.safe_files import inert_json, shown_name
from sessions.log import EndEvent, LogError, read_session
from sessions.log.models import parse_event
from sessions.scenarios import ScenarioError, load_scenario
from sessions.scenarios.model import MAX_WORDS
from sessions.scenarios.profile import load_profile, parse_profile
from sessions.scenarios.store import parse_scenario
from tests.fuzz import hostile
from tests.support.logs import header, write_log

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""What a terminal acts on (newline and tab aside)."""


@pytest.fixture(autouse=True)
def _own_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTIN_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("CUTIN_CACHE_DIR", str(tmp_path / "cache"))


def _log(path: Path, session_id: str = "call-1", policy: str = "rules") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = header(
        session_id,
        started_at="2026-01-01T00:00:00+00:00",
        policy=policy,
        scenario=None,
        tendencies=None,
    )
    return write_log(path, [EndEvent(t=1.0)], head)


def _cutin(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- event type
@pytest.mark.parametrize("kind", [["end"], {"type": "end"}, [], {}])
def test_an_event_type_that_is_a_list_or_object_is_a_bad_line(tmp_path: Path, kind: object) -> None:
    log = _log(tmp_path / "call.jsonl")
    log.write_text(log.read_text().replace('"type":"end"', f'"type":{json.dumps(kind)}'))
    assert '"type":"end"' not in log.read_text()
    with pytest.raises(LogError, match=r"call\.jsonl:2: malformed event: \"type\" is an? "):
        read_session(log)
    session = read_session(log, skip_bad=True)
    assert session.events == []
    assert [str(w) for w in session.warnings] == [
        f'line 2: bad line skipped: "type" is {"a list" if isinstance(kind, list) else "an object"}'
        ", not a string"
    ]


def test_parse_event_refuses_an_unhashable_type_without_a_type_error() -> None:
    with pytest.raises(ValueError):  # pydantic's ValidationError, not TypeError
        parse_event({"type": ["end"], "t": 1.0})


def test_report_of_a_log_with_a_list_type_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(tmp_path / "call.jsonl")
    log.write_text(log.read_text().replace('"type":"end"', '"type":["end"]'))
    code, _, err = _cutin(capsys, "report", str(log))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("cutin: ") and "call.jsonl:2" in err


# ---------------------------------------------------------------- permissions
@pytest.fixture
def bind(tmp_path: Path) -> Iterator[None]:
    """Mode 000 denies this process (as root too: see tests/fuzz/hostile.py)."""
    assert hostile.can_lock(tmp_path), "cannot make an unreadable folder on this machine"
    with hostile._permissions_bind(True):
        yield


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "locked"
    _log(folder / "a.jsonl")
    (folder / "scenario.toml").write_text('name = "x"\n')
    folder.chmod(0)
    yield folder
    folder.chmod(0o700)


@pytest.mark.parametrize("command", ["report", "audit", "judge"])
@pytest.mark.parametrize("inside", [False, True], ids=["the-folder", "a-file-in-it"])
def test_an_unreadable_folder_is_one_line_and_exit_2(
    locked: Path, bind: None, capsys: pytest.CaptureFixture[str], command: str, inside: bool
) -> None:
    target = locked / "a.jsonl" if inside else locked
    code, _, err = _cutin(capsys, command, str(target), *(["--dry-run"] * (command == "judge")))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"cutin: {target}")
    assert "Permission denied" in err


def test_load_path_turns_permission_errors_into_load_errors(locked: Path, bind: None) -> None:
    for target in (locked, locked / "a.jsonl", locked / "results.json"):
        with pytest.raises(LoadError, match="Permission denied"):
            load_path(target)


def test_an_unreadable_subfolder_is_named_never_passed_over(
    tmp_path: Path, bind: None, capsys: pytest.CaptureFixture[str]
) -> None:
    _log(tmp_path / "calls" / "ok.jsonl")
    sub = tmp_path / "calls" / "sub"
    _log(sub / "hidden.jsonl")
    sub.chmod(0)
    try:
        with pytest.raises(LoadError, match=r"calls/sub: cannot list folder: Permission denied"):
            load_path(tmp_path / "calls")
        batch = load_path(tmp_path / "calls", skip_bad=True)
        assert len(batch.trials) == 1
        assert any("sub: cannot list folder" in w for w in batch.warnings)
        code, _, err = _cutin(capsys, "audit", str(tmp_path / "calls"))
        assert code == 2 and "calls/sub: cannot list folder: Permission denied" in err
        assert recent_sessions(tmp_path / "calls") == [tmp_path / "calls" / "ok.jsonl"]
    finally:
        sub.chmod(0o700)


def test_a_scenario_or_profile_in_an_unreadable_folder_is_a_scenario_error(
    locked: Path, bind: None
) -> None:
    with pytest.raises(ScenarioError, match="Permission denied"):
        load_scenario(locked / "scenario.toml")
    with pytest.raises(ScenarioError, match="Permission denied"):
        load_profile(locked / "profile.toml")


# ---------------------------------------------------------------- file names
NAME = "call\x1b]0;pwned\x07\x1b[2J\r\nsecond line\x9b31m\x7f"


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_a_file_name_reaches_no_report_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    log = _log(tmp_path / f"{NAME}.jsonl")
    code, out, err = _cutin(capsys, "report", str(log), "--format", fmt)
    assert code == 0, err
    assert not RAW.search(out.replace("\n", "").replace("\t", ""))
    if fmt == "json":
        assert json.loads(out)["trials"][0]["source"] == str(log)  # exact, but escaped
    else:
        assert "␛" in out and "␇" in out and "␍␤second line" in out


def test_an_error_about_a_file_whose_name_holds_cr_or_lf_stays_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i, name in enumerate(("bad\nname.jsonl", "bad\rname.jsonl", "bad\r\nname\x1b[2J.jsonl")):
        path = tmp_path / str(i) / name
        path.parent.mkdir()
        path.write_text("not a log\n")
        code, _, err = _cutin(capsys, "audit", str(path))
        assert code == 2
        assert err.endswith("\n") and len(err.splitlines()) == 1, repr(err)
        assert err.startswith(f"cutin: {tmp_path}/{i}/bad") and not RAW.search(err[:-1])


def test_a_cli_error_holding_newlines_is_printed_as_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _cutin(capsys, "report", "/nonexistent/a\nb\rc")
    assert code == 2 and err == "cutin: /nonexistent/a␤b␍c: no such file or directory\n"


# ---------------------------------------------------------------- C1 and DEL in ids
def test_audit_json_escapes_c1_and_del_from_a_session_id_and_file_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(
        tmp_path / "name\x85\x7f.jsonl",
        session_id="id\x9b31m\x7f\x9d0;x\x9c",
        policy="rules\x9b31m\x7f",  # a header field the audit's conditions show
    )
    code, out, err = _cutin(capsys, "audit", str(log), "--json", "--resamples", "20")
    assert code == 0, err
    assert not RAW.search(out.replace("\n", "")) and not RAW.search(err.replace("\n", ""))
    assert "rules\ufffd31m␡" in json.loads(out)["turn_taking"][0]["condition"]["policy"]


def test_inert_json_escapes_what_json_dumps_leaves_raw() -> None:
    value = {"k\x85": "a\x9b31m\x7f\u2028\udcff ok é"}
    text = inert_json(json.dumps(value, ensure_ascii=False))
    assert not RAW.search(text) and "é" in text
    assert json.loads(text) == value


# ---------------------------------------------------------------- size limits
GOOD = """
name = "tiny"
title = "Tiny"
[agent]
turns = [{ text = "Hello there. How can I help?" }]
[user]
goal = "say hi"
persona = "friendly"
turns = ["hi"]
"""
WORDS = " ".join(["word"] * 30_000)


@pytest.mark.parametrize(
    ("text", "field", "limit"),
    [
        (GOOD.replace("Hello there.", WORDS), "agent.turns.0.text", "20,000 per text"),
        (GOOD.replace("Hello there.", "x" * 6_000_000), "agent.turns.0.text", "20,000 per text"),
        (
            GOOD.replace("Hello there.", " ".join(["word"] * (MAX_WORDS + 1))),
            "agent.turns.0.text",
            "2,000 per text",
        ),
        (GOOD.replace('["hi"]', f'["{WORDS}"]'), "user.turns.0", "20,000 per text"),
        (
            GOOD.replace('turns = ["hi"]', "turns = [" + '"hi", ' * 500 + "]"),
            "user.turns",
            "at most 200 items",
        ),
        (
            GOOD.replace('turns = [{ text = "Hello there. How can I help?" }]', "")
            + '[[agent.turns]]\ntext = "Hello."\n' * 5000,
            "agent.turns",
            "at most 200 items",
        ),
        (
            GOOD.replace("[agent]", f'[agent]\nsystem_prompt = "{WORDS} {WORDS}"'),
            "agent.system_prompt",
            "200,000 per text",
        ),
        (
            GOOD.replace('turns = [{ text = "Hello there. How can I help?" }]', "")
            + ('[[agent.turns]]\ntext = "' + " ".join(["word"] * 1500) + '"\n') * 8,
            "agent",
            "the limit is 10,000",
        ),
    ],
    ids=[
        "30k-words",
        "6MB",
        "2001-words",
        "user-turn",
        "500-user-turns",
        "5000-turns",
        "prompt",
        "script-total",
    ],
)
def test_a_scenario_past_a_size_limit_is_refused_at_once_naming_field_and_limit(
    text: str, field: str, limit: str
) -> None:
    start = time.perf_counter()
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "my.toml")
    assert time.perf_counter() - start < 10
    message = str(info.value)
    assert message.startswith(f"my.toml: field '{field}'") and limit in message
    assert "\n" not in message


def test_the_shipped_scenarios_are_well_within_the_limits() -> None:
    for name in ("retail-order-change", "airline-rebooking", "clinic-triage"):
        assert load_scenario(name).agent.turns


def test_a_profile_past_a_size_limit_is_refused() -> None:
    good = load_profile("tau2-voice").model_dump()
    lines = [f"{k} = {json.dumps(v)}" for k, v in good.items()]
    huge_table = "\n".join(
        line if not line.startswith("turn_words") else f"turn_words = [{'20, ' * 5000}]"
        for line in lines
    )
    with pytest.raises(
        ScenarioError, match=r"p\.toml: field 'turn_words': List should have at most 1000"
    ):
        parse_profile(huge_table, "p.toml")
    huge_text = "\n".join(
        line if not line.startswith("description") else f'description = "{WORDS}"' for line in lines
    )
    with pytest.raises(ScenarioError, match=r"field 'description'.*20,000 per text"):
        parse_profile(huge_text, "p.toml")


def test_simulate_refuses_a_30000_word_turn_in_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "big.toml"
    path.write_text(GOOD.replace("Hello there.", WORDS))
    start = time.perf_counter()
    code, _, err = _cutin(capsys, "simulate", "--scenario", str(path), "--out", str(tmp_path / "o"))
    assert time.perf_counter() - start < 10
    assert code == 2 and err.count("\n") == 1
    assert f"{path}: field 'agent.turns.0.text'" in err and "the limit is" in err


def test_a_scenario_file_over_4_mib_is_refused_by_size(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text(GOOD + "# " + "x" * (5 * 1024 * 1024) + "\n")
    with pytest.raises(ScenarioError, match=r"big\.toml: too large"):
        load_scenario(path)


# ---------------------------------------------------------------- the fuzzer's own checks
def test_the_fuzzer_judges_a_split_line_raw_c1_and_bad_json_as_failures() -> None:
    seed = hostile.Seed("log", "x", {"call.jsonl": b""})
    case = hostile.Case(0, seed, "escapes", "report-json", False)
    assert hostile._judge(case, 2, "", f"cutin: a\n{hostile.NEWLINE_MARKER}\n") == "split-line"
    # A raw CR is a control character before it is a split line.
    assert hostile._judge(case, 2, "", f"cutin: a\r{hostile.NEWLINE_MARKER}\n") == "raw-control"
    assert hostile._judge(case, 0, '{"id": "a\x9b"}', "") == "raw-control"
    assert hostile._judge(case, 0, '{"id": ', "") == "bad-json"
    assert hostile._judge(case, 0, '{"id": "a\\u009b"}', "") == "loaded"


def test_the_fuzzer_makes_every_new_shape(tmp_path: Path) -> None:
    import random

    all_seeds = hostile.seeds(tmp_path / "seeds")
    rng = random.Random(3)
    cases = [hostile.make_case(n, all_seeds, rng) for n in range(1500)]
    made = (
        {c.mutation for c in cases}
        | {c.special for c in cases}
        | {"hostile-name" for c in cases if c.name}
    )
    wanted = {"type-shape", "id-controls", "huge-turn", "hostile-name", *hostile.LOCKS}
    assert wanted <= made
    assert {c.command for c in cases} >= {"simulate-scenario", "simulate-profile"}
    assert hostile.TAU2_DIR == hostile.REPO_ROOT / "tests" / "fixtures" / "tau2"


def test_shown_name_is_one_inert_line() -> None:
    assert shown_name("a\x1b[2J\r\nb\rc\nd\x9b\x7f") == "a␛[2J␍␤b␍c␤d\ufffd␡"
    assert shown_name(Path("/x") / "plain.jsonl") == "/x/plain.jsonl"


def test_judge_writes_a_sidecar_beside_a_folder_whose_name_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    folder = tmp_path / os.fsdecode(b"runs-\xff\xfe")
    folder.mkdir()
    results = hostile.TAU2_DIR / "text_airline_results.json"
    data = json.loads(results.read_bytes())
    data["simulations"] = data["simulations"][:1]
    (folder / "results.json").write_text(json.dumps(data))
    code, out, err = _cutin(capsys, "judge", str(folder / "results.json"))
    assert code in (0, 1), err
    assert not RAW.search((out + err).replace("\n", ""))
    sidecar = folder / "results.json.cutin-verdicts.jsonl"
    assert json.loads(sidecar.read_bytes().splitlines()[0])["source"].endswith("results.json")
