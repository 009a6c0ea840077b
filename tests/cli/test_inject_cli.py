"""`cutin inject`, run as a real program (`python -m cutin_tui`)."""

from __future__ import annotations

import json

import pytest

from controls import inject_disfluency
from tests.support.cli import run_cutin

SENTENCES = [
    "Hi, I need to change the shipping address on my order.",
    "It's going to 42 Elm Street, apartment 3B.",
    "Can you email me at jo@example.com when it ships?",
    "Well, actually I think the new one is better for me.",
    "But I was hoping to get it before the weekend, to be honest.",
    "",
    "Yes.",
]


def test_text_argument_renders_like_inject_disfluency(child_env: dict[str, str]) -> None:
    text = SENTENCES[4]
    proc = run_cutin("inject", "--alpha", "0.75", text, env=child_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == inject_disfluency(text, 0.75).rendered + "\n"
    assert proc.stderr == ""


def test_several_text_arguments_are_joined_with_spaces(child_env: dict[str, str]) -> None:
    proc = run_cutin("inject", "--alpha", "1", "Well,", "I", "think", "so", env=child_env)
    assert proc.stdout == inject_disfluency("Well, I think so", 1.0).rendered + "\n"


def test_default_alpha_is_one_half(child_env: dict[str, str]) -> None:
    text = " ".join(SENTENCES)
    proc = run_cutin("inject", text, env=child_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == inject_disfluency(text, 0.5).rendered + "\n"
    assert proc.stdout != inject_disfluency(text, 0.75).rendered + "\n"  # alpha matters here


def test_stdin_mode_prints_one_line_per_input_line_in_order(child_env: dict[str, str]) -> None:
    proc = run_cutin("inject", "--alpha", "0.9", env=child_env, stdin="\n".join(SENTENCES) + "\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:-1] == [inject_disfluency(s, 0.9).rendered for s in SENTENCES]


def test_stdin_without_a_final_newline_still_renders_the_last_line(
    child_env: dict[str, str],
) -> None:
    proc = run_cutin("inject", env=child_env, stdin="first line\nlast line")
    assert proc.stdout.splitlines() == [
        inject_disfluency("first line", 0.5).rendered,
        inject_disfluency("last line", 0.5).rendered,
    ]


def test_json_objects_carry_original_rendered_and_insertions(child_env: dict[str, str]) -> None:
    proc = run_cutin("inject", "--json", "--alpha", "1", env=child_env, stdin="\n".join(SENTENCES))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == len(SENTENCES)
    for sentence, row in zip(SENTENCES, rows, strict=True):
        expected = inject_disfluency(sentence, 1.0)
        assert set(row) == {"original", "rendered", "insertions"}
        assert row["original"] == sentence
        assert row["rendered"] == expected.rendered
        assert row["insertions"] == [i.as_dict() for i in expected.insertions]
    assert any(row["insertions"] for row in rows)


def test_json_keeps_non_ascii_readable(child_env: dict[str, str]) -> None:
    proc = run_cutin("inject", "--json", "--alpha", "1", "Ça va — très bien, merci", env=child_env)
    assert "très" in proc.stdout


@pytest.mark.parametrize("alpha", ["2", "-0.5", "lots", "nan"])
def test_alpha_out_of_range_is_exit_2_with_one_line(alpha: str, child_env: dict[str, str]) -> None:
    proc = run_cutin("inject", "--alpha", alpha, "hello there", env=child_env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "alpha" in lines[0] and "between 0 and 1" in lines[0]
    assert "Traceback" not in proc.stderr


def test_version(child_env: dict[str, str]) -> None:
    proc = run_cutin("--version", env=child_env)
    assert proc.returncode == 0
    assert proc.stdout.startswith("cutin ")
    assert proc.stdout.split()[1][0].isdigit()


def test_help_lists_inject(child_env: dict[str, str]) -> None:
    proc = run_cutin("--help", env=child_env)
    assert proc.returncode == 0
    assert "inject" in proc.stdout


def test_inject_help_documents_its_options(child_env: dict[str, str]) -> None:
    proc = run_cutin("inject", "--help", env=child_env)
    assert proc.returncode == 0
    for option in ("--alpha", "--json", "TEXT", "default 0.5"):
        assert option in proc.stdout
