"""Read an HTML report back as a reader's tools would: its timeline strips, the marks on
them (their times recovered from the SVG's x coordinates), its audio elements (their
WAV decoded from the data URI), and every tag and attribute (for the hostile-input
checks). Used by tests/replay/test_report_timeline*.py."""

from __future__ import annotations

import base64
import io
import re
import subprocess
import wave
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from sessions.log.models import AgentTurnEnd, AgentYield, Backchannel
from sessions.log.reader import read_session
from tests.gallery.png_pixels import read_png
from tests.gallery.test_handout import CHROMIUM_FLAGS, chromium


@dataclass
class Strip:
    t0: float
    t1: float
    width: float


@dataclass
class PlacedMark:
    kind: str
    t: float
    """Recovered from the x coordinate: t0 + x / width × (t1 − t0)."""
    title: str = ""


@dataclass
class Audio:
    start: float
    end: float
    wav: bytes

    @property
    def seconds(self) -> float:
        with wave.open(io.BytesIO(self.wav), "rb") as w:
            return w.getnframes() / w.getframerate()

    @property
    def channels(self) -> int:
        with wave.open(io.BytesIO(self.wav), "rb") as w:
            return w.getnchannels()


@dataclass
class Page(HTMLParser):
    strips: list[Strip] = field(default_factory=list)
    marks: list[PlacedMark] = field(default_factory=list)
    audios: list[Audio] = field(default_factory=list)
    tags: set[str] = field(default_factory=set)
    attributes: list[tuple[str, str, str]] = field(default_factory=list)
    """(tag, name, value) of every attribute."""
    _in_mark: PlacedMark | None = None
    _in_title: bool = False

    def __post_init__(self) -> None:
        HTMLParser.__init__(self, convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        self.attributes.extend((tag, k, v) for k, v in a.items())
        if tag == "svg" and "strip" in a.get("class", ""):
            self.strips.append(
                Strip(float(a["data-t0"]), float(a["data-t1"]), float(a["data-width"]))
            )
        elif tag == "g" and a.get("class", "").startswith("mark "):
            s = self.strips[-1]
            t = s.t0 + float(a["data-x"]) / s.width * (s.t1 - s.t0)
            self._in_mark = PlacedMark(a["class"].split()[1], t)
            self.marks.append(self._in_mark)
        elif tag == "title" and self._in_mark is not None:
            self._in_title = True
        elif tag == "audio":
            uri = a["src"]
            assert uri.startswith("data:audio/wav;base64,"), uri[:40]
            wav = base64.b64decode(uri.split(",", 1)[1], validate=True)
            self.audios.append(Audio(float(a["data-start"]), float(a["data-end"]), wav))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "g":
            self._in_mark = None

    def handle_data(self, data: str) -> None:
        if self._in_title and self._in_mark is not None:
            self._in_mark.title += data

    def of(self, kind: str) -> list[float]:
        return [m.t for m in self.marks if m.kind == kind]


def read_page(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def network_references(text: str) -> list[str]:
    """Any http(s)/ws URL the page refers to outside its text (src, href, url(), @import)."""
    refs: list[str] = []
    page = read_page(text)
    for tag, name, value in page.attributes:
        linked = name in ("src", "href", "action", "poster", "srcset", "data", "xlink:href")
        if linked and not value.startswith(("data:", "#")):
            refs.append(f"<{tag} {name}={value[:60]}>")
    refs += re.findall(r"(?i)url\(\s*['\"]?(?!data:)[^)]*\)|@import", text)
    return refs


# ---- checks shared by the tests that render real calls ---------------------------------

PX_S = 0.01
"""One pixel of a strip, in seconds: how close a drawn mark is to its logged time."""


def marks_match_the_log(page: Page, logs: list[Path]) -> int:
    """Every cut, stop and backchannel of the logs is on the page at its time; how many."""
    want: dict[str, list[float]] = {"cut": [], "stop": [], "backchannel": []}
    for log in logs:
        session = read_session(log)
        want["cut"] += [e.cut_t for e in session.of(AgentTurnEnd) if e.cut_t is not None]
        want["stop"] += [
            y.stop_t
            for y in session.of(AgentYield)
            if y.after == "interruption" and y.yielded and y.stop_t is not None
        ]
        want["backchannel"] += [e.t for e in session.of(Backchannel)]
    n = 0
    for kind, times in want.items():
        got = sorted(page.of(kind))
        assert len(got) == len(times), kind
        for w, g in zip(sorted(times), got, strict=True):
            assert abs(w - g) < PX_S, (kind, w, g)
        n += len(times)
    return n


def open_in_chromium(html_path: Path, tmp_path: Path) -> tuple[str, str, np.ndarray]:
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    common = [
        browser,
        *CHROMIUM_FLAGS,
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    dom = subprocess.run(
        [*common, "--dump-dom", html_path.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    shot = tmp_path / "page.png"
    subprocess.run(
        [*common, f"--screenshot={shot}", "--window-size=1300,3200", html_path.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.is_file(), dom.stderr[-2000:]
    return dom.stdout, dom.stderr, read_png(shot)


def check_in_browser(text: str, tmp_path: Path, n_strips: int, *, unfolded: bool) -> None:
    html_path = tmp_path / "report.html"
    html_path.write_text(text, encoding="utf-8")
    dom, log, pixels = open_in_chromium(html_path, tmp_path)
    # The browser built the page: every strip, with its marks, is in its DOM.
    assert dom.count('<svg class="strip"') == n_strips
    assert "CONSOLE" not in log, log[-2000:]  # no console message (an error would be one)
    assert "ERR_" not in log and "Failed to load" not in log, log[-2000:]
    rgb = pixels[..., :3].astype(np.float64)
    dark = (rgb.mean(axis=2) < 100).mean()
    assert 0.002 < dark < 0.5, f"text covers a sane share of the page ({dark:.4f})"
    if not unfolded:  # a batch's calls are folded: their timelines are not on screen
        return
    # The lanes were painted: the agent's blue and the caller's green are on screen.
    for colour in ((0x3B, 0x6F, 0xB6), (0x3F, 0xAE, 0x6A)):
        near = (np.abs(rgb - np.array(colour)).sum(axis=2) < 40).sum()
        assert near > 200, colour
