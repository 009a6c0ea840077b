"""`cutin overlaps`: the overlap and disfluency gallery, its handout, and example checks."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cutin_tui.cli import CliError

if TYPE_CHECKING:
    from replay.gallery import Gallery, GalleryEntry

DESCRIPTION = (
    "A gallery of overlap and disfluency types for people new to them (clinicians, "
    "testers): each explained in plain words, drawn on a two-lane timeline and playable "
    "live. --export writes a printable HTML handout; --dir adds your own example files "
    "(see replay/gallery/data/FORMAT.md); --check validates and runs example files."
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--export",
        metavar="FILE.html",
        type=Path,
        help="write the handout (every type, explanation and timeline) and exit",
    )
    p.add_argument(
        "--dir",
        metavar="PATH",
        action="append",
        default=[],
        type=Path,
        help="a folder of your own example .toml files (or one file); repeatable",
    )
    p.add_argument(
        "--check",
        metavar="FILE",
        nargs="+",
        type=Path,
        help="validate and run these example files, say whether each shows what it names",
    )
    p.add_argument("--list", action="store_true", help="list the types and exit")
    p.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="play speed (0.5 = slow motion; sound only at 1)",
    )
    p.add_argument(
        "--no-sound", action="store_true", help="play on the text clock only, even with espeak-ng"
    )


def run(args: argparse.Namespace) -> int:
    if args.check:
        return _check(args.check)
    if not 0.05 <= args.speed <= 50.0:
        raise CliError(f"--speed must be between 0.05 and 50, got {args.speed:g}")
    from replay.gallery import load_gallery

    gallery = load_gallery(args.dir)
    if gallery.errors:
        for problem in gallery.errors:
            _problem(problem)
        return 2
    if args.list:
        for entry in gallery.entries:
            flag = " [stuttering-like]" if entry.stuttering_like else ""
            print(f"{entry.kind:<10} {entry.id:<28} {entry.title}{flag}")
        return 0
    if args.export is not None:
        return _export(gallery.entries, args.export)
    return _tui(gallery, speed=args.speed, sound=not args.no_sound)


def _problem(text: str) -> None:
    """A gallery file's problems on stderr: one ``cutin:`` line each, terminal-safe."""
    from sessions.hostile.safe_files import terminal_line

    for line in text.splitlines():
        print(f"cutin: {terminal_line(line)}", file=sys.stderr)


def _check(paths: list[Path]) -> int:
    from replay.gallery import GalleryError, check_expectations, load_entry, run_entry
    from sessions.hostile.safe_files import shown_name, terminal_line

    bad = 0
    for path in paths:
        try:
            entry = load_entry(path)
            failures = check_expectations(entry, run_entry(entry))
        except GalleryError as exc:
            _problem(str(exc))
            bad += 1
            continue
        if failures:
            bad += 1
            for failure in failures:
                print(f"{shown_name(path)}: {terminal_line(failure)}", file=sys.stderr)
        else:
            print(f"{shown_name(path)}: ok — {entry.title} ({entry.made_by_text})")
    return 1 if bad else 0


def _export(entries: list[GalleryEntry], path: Path) -> int:
    from replay.gallery import GalleryError, check_expectations, run_entry
    from replay.report.handout import render_handout
    from sessions.version import version_string

    runs = []
    failures: dict[str, list[str]] = {}
    for entry in entries:
        try:
            run = run_entry(entry)
        except GalleryError as exc:
            raise CliError(str(exc)) from None
        runs.append(run)
        failures[entry.id] = check_expectations(entry, run)
    html = render_handout(runs, failures=failures, version=version_string())
    try:
        path.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"handout written: {path} ({len(runs)} types)")
    return 0


def _tui(gallery: Gallery, *, speed: float, sound: bool) -> int:
    from cutin_tui.screens.overlaps import OverlapsApp, OverlapsScreen

    app = OverlapsApp(OverlapsScreen(gallery, speed=speed, sound=sound))
    app.run()
    return 0
