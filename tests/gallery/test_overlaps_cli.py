"""`cutin overlaps`, run as a real program (`python -m cutin_tui`)."""

from __future__ import annotations

from pathlib import Path

from replay.gallery import load_gallery
from tests.support.cli import run_cutin

DATA = Path(__file__).resolve().parents[2] / "replay" / "gallery" / "data"


def test_list_names_every_type(child_env: dict[str, str]) -> None:
    proc = run_cutin("overlaps", "--list", env=child_env)
    assert proc.returncode == 0, proc.stderr
    for entry in load_gallery().entries:
        assert entry.id in proc.stdout
    assert proc.stdout.count("[stuttering-like]") == 3


def test_export_writes_a_self_contained_handout(tmp_path: Path, child_env: dict[str, str]) -> None:
    target = tmp_path / "handout.html"
    proc = run_cutin("overlaps", "--export", str(target), env=child_env)
    assert proc.returncode == 0, proc.stderr
    assert f"handout written: {target}" in proc.stdout
    html = target.read_text(encoding="utf-8")
    assert html.count("<svg") == len(load_gallery().entries)
    assert "<script" not in html


def test_export_to_an_unwritable_place_is_a_one_line_error(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    proc = run_cutin(
        "overlaps", "--export", str(tmp_path / "no" / "such" / "x.html"), env=child_env
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("cutin: cannot write") and proc.stderr.count("\n") == 1


def test_check_passes_shipped_files_and_fails_a_wrong_claim(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    good = DATA / "70-talk-over.toml"
    proc = run_cutin("overlaps", "--check", str(good), env=child_env)
    assert proc.returncode == 0, proc.stderr
    assert "ok — Talk-over" in proc.stdout
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(
        good.read_text(encoding="utf-8").replace(
            "yields_when_interrupted = false", "yields_when_interrupted = true"
        ),
        encoding="utf-8",
    )
    proc = run_cutin("overlaps", "--check", str(wrong), env=child_env)
    assert proc.returncode == 1
    assert f"{wrong}: expected talk-over" in proc.stderr


def test_a_broken_own_file_names_the_file_and_field(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    bad = tmp_path / "mine.toml"
    text = (DATA / "10-continuer.toml").read_text(encoding="utf-8")
    bad.write_text(
        text.replace('id = "continuer"', 'id = "mine"').replace("seed = 2", 'seed = "two"')
    )
    proc = run_cutin("overlaps", "--dir", str(tmp_path), "--list", env=child_env)
    assert proc.returncode == 2
    assert f"{bad}: field 'seed'" in proc.stderr
    proc = run_cutin("overlaps", "--check", str(bad), env=child_env)
    assert proc.returncode == 1 and "field 'seed'" in proc.stderr


def test_an_own_file_joins_the_list(tmp_path: Path, child_env: dict[str, str]) -> None:
    mine = tmp_path / "mine.toml"
    text = (DATA / "10-continuer.toml").read_text(encoding="utf-8")
    mine.write_text(text.replace('id = "continuer"', 'id = "my-continuer"'), encoding="utf-8")
    proc = run_cutin("overlaps", "--dir", str(tmp_path), "--list", env=child_env)
    assert proc.returncode == 0, proc.stderr
    assert "my-continuer" in proc.stdout
