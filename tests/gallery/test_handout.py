"""The handout: one self-contained page, every type with its SVG timeline, printable,
and it renders in a real headless Chromium (screenshot checked for content)."""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from replay.gallery import GalleryRun, check_expectations, load_gallery, run_entry
from replay.report.handout import render_handout, timeline_svg
from tests.gallery.png_pixels import read_png

VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "source", "wbr"}
SVG_EMPTY = {"rect", "line", "path", "circle"}


@cache
def runs() -> tuple[GalleryRun, ...]:
    return tuple(run_entry(e) for e in load_gallery().entries)


@cache
def page() -> str:
    failures = {r.entry.id: check_expectations(r.entry, r) for r in runs()}
    return render_handout(list(runs()), failures=failures, version="test")


class Nesting(HTMLParser):
    """Checks every element is closed in order (the page is hand-built strings)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.svgs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "svg":
            self.svgs += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


def test_every_type_is_in_the_handout_with_its_explanation_and_timeline() -> None:
    html = page()
    for r in runs():
        e = r.entry
        assert f'id="{e.id}"' in html
        assert e.title.replace("'", "&#x27;") in html
        assert e.explanation.replace('"', "&quot;").replace("'", "&#x27;")[:60] in html
    parser = Nesting()
    parser.feed(html)
    assert parser.problems == [] and parser.stack == []
    assert parser.svgs == len(runs()), "one inline SVG timeline per type"


def test_the_handout_is_self_contained_and_printable() -> None:
    html = page()
    assert "<script" not in html
    assert not re.search(r'(src|href)="(?!#)', html), "no external files or links"
    urls = set(re.findall(r"https?://[^\"' )]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}
    assert "@media print" in html and "break-inside: avoid" in html


def test_stuttering_like_types_are_labelled_and_written_examples_say_so() -> None:
    html = page()
    assert html.count("stuttering-like, not typical") == 3
    assert html.count("written example, not produced by cutin&#x27;s injection") >= 4
    assert "Stuttering-like disfluencies" in html
    assert "did not show what it names" not in html


def test_timeline_svg_draws_lanes_overlap_and_cut() -> None:
    talk_over = next(r for r in runs() if r.entry.id == "talk-over")
    svg = timeline_svg(talk_over.timeline, 2.0, 13.0, title="t")
    assert svg.count(">Agent<") == 1 and svg.count(">Caller<") == 1
    assert "both talking at once" in svg
    success = next(r for r in runs() if r.entry.id == "interruption-successful")
    assert "agent stops" in timeline_svg(success.timeline, 1.0, 9.0)


def test_disfluency_insertions_are_highlighted_by_kind() -> None:
    html = page()
    assert '<span class="ins filler" title="filler">um,</span>' in html
    assert '<span class="ins repetition" title="repetition">to-</span>' in html
    assert '<span class="ins pause" title="pause">—</span>' in html
    assert '<span class="ins written" title="written">m-m-move</span>' in html


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.slow
def test_the_handout_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    page_path = tmp_path / "handout.html"
    page_path.write_text(page(), encoding="utf-8")
    shot = tmp_path / "x.png"
    proc = subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1200,1600",
            page_path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.is_file(), f"no screenshot; chromium said:\n{proc.stderr[-2000:]}"
    assert shot.stat().st_size > 20_000
    pixels = read_png(shot)
    assert pixels.shape[:2] == (1600, 1200)
    rgb = pixels[..., :3].astype(np.float64)
    assert rgb.std() > 20, "the page is not blank"
    dark = (rgb.mean(axis=2) < 100).mean()
    assert 0.005 < dark < 0.5, f"text covers a sane share of the page ({dark:.3f})"
    # The first type's timeline is on the first screen: its agent blue is there.
    blue = (np.abs(rgb - np.array([0x3B, 0x6F, 0xB6])).sum(axis=2) < 30).sum()
    assert blue > 500, "the SVG timeline was drawn"
