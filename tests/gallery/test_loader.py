"""Loading gallery files: a clinician's own example works without code, and every
problem names the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.gallery import (
    GalleryError,
    check_expectations,
    load_entry,
    load_gallery,
    place_actions,
    run_entry,
    shipped_entries,
)

GOOD = """
id = "my-backchannel"
kind = "overlap"
title = "My continuer"
made_by = "rule"
explanation = "A listener's short 'yeah' while the speaker goes on; written by a clinician."
how_written = "caller: yeah"
seed = 1

[tendencies]
gamma = 0.6

[scenario]
[scenario.agent]
closing = ""
[[scenario.agent.turns]]
text = "Hello, how can I help?"
[[scenario.agent.turns]]
text = '''Right. Your visit is on Monday at nine in the morning.
Please bring your letter with you. The clinic is on the second floor.'''

[scenario.user]
goal = "Check a visit."
persona = "A listener."
turns = ["When is my visit?"]

[expect]
interruptions = 0
"""

SCRIPTED = """
id = "my-terminal"
kind = "overlap"
title = "Early answer"
made_by = "script"
explanation = "The caller answers a moment before the question is finished, on its last word."
how_written = "brackets"
scenario = "clinic-triage"

[[actions]]
do = "interrupt"
agent_turn = 1
at_word = "last"
offset_s = -0.2
text = "I have a sore throat."

[expect]
interruptions = 1
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_entries_all_validate_and_are_unique() -> None:
    entries = shipped_entries()
    assert len(entries) >= 15
    assert len({e.id for e in entries}) == len(entries)


def test_a_clinicians_file_in_a_folder_joins_the_gallery_and_runs(tmp_path: Path) -> None:
    write(tmp_path, "mine.toml", GOOD)
    gallery = load_gallery([tmp_path])
    assert gallery.errors == []
    entry = gallery.get("my-backchannel")
    assert entry.source.endswith("mine.toml")
    r = run_entry(entry)
    assert check_expectations(entry, r) == []
    assert any(e.type == "backchannel" for e in r.events)


def test_an_entry_may_name_a_shipped_scenario(tmp_path: Path) -> None:
    entry = load_entry(write(tmp_path, "early.toml", SCRIPTED))
    (action,) = place_actions(entry)
    assert action.t > 0
    assert check_expectations(entry, run_entry(entry)) == []


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (lambda s: s.replace('kind = "overlap"', 'kind = "overlapping"'), "kind", "overlap"),
        (lambda s: s.replace('made_by = "rule"\n', ""), "made_by", "Field required"),
        (lambda s: s.replace("gamma = 0.6", "gamma = 1.6"), "tendencies.gamma", "less than"),
        (lambda s: "surprise = 1\n" + s, "surprise", "Extra inputs"),
        (lambda s: s.replace("[tendencies]\ngamma = 0.6", ""), "tendencies", "beta or gamma"),
        (
            lambda s: s.replace('goal = "Check a visit."\n', ""),
            "scenario.user.goal",
            "Field required",
        ),
        (
            lambda s: s.replace("[expect]\ninterruptions = 0", "[expect]\ninterruptions = -1"),
            "expect.interruptions",
            "greater than or equal",
        ),
        (
            lambda s: s.replace('kind = "overlap"', 'kind = "overlap"\nstuttering_like = true'),
            "stuttering_like",
            "disfluency",
        ),
    ],
)
def test_errors_name_the_file_and_the_field(
    tmp_path: Path, change: object, field: str, words: str
) -> None:
    assert callable(change)
    path = write(tmp_path, "bad.toml", change(GOOD))
    with pytest.raises(GalleryError) as err:
        load_entry(path)
    message = str(err.value)
    assert str(path) in message
    assert f"field '{field}'" in message
    assert words in message


def test_action_errors_name_the_action(tmp_path: Path) -> None:
    bad = SCRIPTED.replace('at_word = "last"', "at_word = 0")
    with pytest.raises(GalleryError, match=r"field 'actions\.0\.at_word'"):
        load_entry(write(tmp_path, "zero.toml", bad))
    no_text = SCRIPTED.replace('text = "I have a sore throat."', "")
    with pytest.raises(GalleryError, match=r"field 'actions\.0'.*needs 'text'"):
        load_entry(write(tmp_path, "silent.toml", no_text))


def test_placing_an_action_past_the_agents_words_names_the_field(tmp_path: Path) -> None:
    entry = load_entry(write(tmp_path, "far.toml", SCRIPTED.replace('"last"', "400")))
    with pytest.raises(GalleryError) as err:
        place_actions(entry)
    assert "far.toml: field 'actions.0.at_word'" in str(err.value)
    assert "not 400" in str(err.value)
    never = SCRIPTED.replace("agent_turn = 1", "agent_turn = 30")
    with pytest.raises(GalleryError, match=r"field 'actions\.0\.agent_turn'"):
        place_actions(load_entry(write(tmp_path, "never.toml", never)))


def test_a_disfluency_line_must_be_one_the_caller_says(tmp_path: Path) -> None:
    text = (Path(__file__).parents[2] / "replay/gallery/data/110-filled-pause.toml").read_text()
    bad = text.replace(
        'original = "Hi, yes, I need to move my appointment to later in the week."',
        'original = "Something the caller never says."',
    )
    with pytest.raises(GalleryError, match=r"field 'disfluency\.original'"):
        load_entry(write(tmp_path, "fp.toml", bad))


def test_bad_toml_and_unknown_scenarios_are_reported(tmp_path: Path) -> None:
    with pytest.raises(GalleryError, match=r"broken\.toml: not valid TOML"):
        load_entry(write(tmp_path, "broken.toml", 'id = "x'))
    unknown = SCRIPTED.replace('"clinic-triage"', '"no-such-scenario"')
    with pytest.raises(GalleryError, match=r"field 'scenario'.*unknown scenario"):
        load_entry(write(tmp_path, "u.toml", unknown))


def test_a_broken_file_is_reported_and_the_rest_still_loads(tmp_path: Path) -> None:
    write(tmp_path, "a-good.toml", GOOD)
    write(tmp_path, "b-bad.toml", GOOD.replace('id = "my-backchannel"', 'id = "Bad Id"'))
    write(tmp_path, "c-dup.toml", GOOD)
    gallery = load_gallery([tmp_path, tmp_path / "missing"])
    assert "my-backchannel" in {e.id for e in gallery.entries}
    joined = "\n".join(gallery.errors)
    assert "b-bad.toml: field 'id'" in joined
    assert "c-dup.toml: field 'id': 'my-backchannel' is already used" in joined
    assert "missing: no such file or folder" in joined


def test_gallery_order_is_overlaps_then_typical_then_stuttering_like() -> None:
    entries = load_gallery().entries
    groups = [(e.kind, e.stuttering_like) for e in entries]
    assert groups == sorted(groups, key=lambda g: (g[0] != "overlap", g[1]))
    assert entries[0].id == "continuer"
