"""Read an HTML report back as a reader's tools would: its timeline strips, the marks on
them (their times recovered from the SVG's x coordinates), its audio elements (their
WAV decoded from the data URI), and every tag and attribute (for the hostile-input
checks). Used by tests/replay/test_report_timeline*.py."""

from __future__ import annotations

import base64
import io
import re
import wave
from dataclasses import dataclass, field
from html.parser import HTMLParser


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
