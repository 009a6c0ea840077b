"""Finding, reading and validating gallery entry files (TOML).

Shipped entries live in ``replay/gallery/data``; a clinician's own examples are
TOML files in any folder given to :func:`load_gallery`. Every problem is reported
as ``<file>: field '<field>': <what is wrong>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from replay.gallery.model import GalleryEntry, GalleryError, scenario_defaults
from sessions.hostile.safe_files import FileError, exists, is_dir, parse_toml, read_text, shown_name
from sessions.scenarios import Scenario, ScenarioError, load_scenario

_DATA = "replay.gallery.data"
KIND_ORDER = {"overlap": 0, "disfluency": 1}


def _format(where: str, exc: ValidationError, prefix: str = "") -> str:
    lines = []
    for err in exc.errors()[:6]:
        loc = ".".join(str(p) for p in (prefix, *err["loc"]) if p != "")
        msg = str(err["msg"]).removeprefix("Value error, ")
        if msg.startswith("field '"):
            # A cross-field rule names its own field (pydantic has no location for it).
            loc = ".".join(p for p in (loc, msg[7 : msg.index("'", 7)]) if p)
            msg = msg[msg.index("'", 7) + 3 :]
        lines.append(f"{where}: field '{loc or '(top level)'}': {msg}")
    return "\n".join(lines)


def parse_entry(text: str, where: str) -> GalleryEntry:
    """Validate one entry's TOML text; ``where`` names it in errors."""
    try:
        data = parse_toml(text, where)
    except FileError as exc:
        raise GalleryError(str(exc)) from None
    inline = data.get("scenario")
    if isinstance(inline, dict):
        # Validated on its own first, so its errors read 'scenario.agent.turns', not
        # once per branch of "shipped name or inline table".
        inline = scenario_defaults(inline, data.get("id"), data.get("title"))
        try:
            data["scenario"] = Scenario.model_validate(inline)
        except ValidationError as exc:
            raise GalleryError(_format(where, exc, prefix="scenario")) from None
    try:
        entry = GalleryEntry.model_validate(data)
    except ValidationError as exc:
        raise GalleryError(_format(where, exc)) from None
    if isinstance(entry.scenario, str):
        try:
            load_scenario(entry.scenario)
        except ScenarioError as exc:
            raise GalleryError(f"{where}: field 'scenario': {exc}") from None
    entry.source = where
    return entry


def load_entry(path: str | Path) -> GalleryEntry:
    """One entry file by path."""
    p = Path(path)
    if not exists(p):
        raise GalleryError(f"{shown_name(p)}: no such gallery file")
    try:
        text = read_text(p)
    except FileError as exc:
        raise GalleryError(str(exc)) from None
    return parse_entry(text, shown_name(p))  # messages are split per line: name one line


def shipped_entries() -> list[GalleryEntry]:
    """The entries shipped with cutin."""
    out = []
    for res in sorted(resources.files(_DATA).iterdir(), key=lambda r: r.name):
        if res.name.endswith(".toml"):
            out.append(parse_entry(res.read_text(encoding="utf-8"), f"{res.name} (shipped)"))
    return out


def sort_entries(entries: Iterable[GalleryEntry]) -> list[GalleryEntry]:
    """Overlaps first, then typical disfluencies, then stuttering-like ones."""
    return sorted(entries, key=lambda e: (KIND_ORDER[e.kind], e.stuttering_like, e.order, e.id))


@dataclass
class Gallery:
    entries: list[GalleryEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """One message per file that could not be used (file and field named)."""

    def get(self, entry_id: str) -> GalleryEntry:
        for entry in self.entries:
            if entry.id == entry_id:
                return entry
        raise KeyError(entry_id)


def _files(path: Path) -> list[Path]:
    if is_dir(path):
        return sorted(path.glob("*.toml"))
    return [path]


def load_gallery(extra: Iterable[str | Path] = (), *, shipped: bool = True) -> Gallery:
    """Shipped entries plus entry files / folders of them in ``extra``.

    A file that fails validation, or whose id is already taken, is left out and
    its message goes to ``errors``; the rest of the gallery still loads.
    """
    gallery = Gallery(entries=shipped_entries() if shipped else [])
    seen = {e.id: e.source for e in gallery.entries}
    for item in extra:
        path = Path(item)
        if not exists(path):  # an unreadable folder on the way: load_entry says so
            gallery.errors.append(f"{shown_name(path)}: no such file or folder")
            continue
        files = _files(path)
        if is_dir(path) and not files:
            gallery.errors.append(f"{shown_name(path)}: no *.toml gallery files in this folder")
        for file in files:
            try:
                entry = load_entry(file)
            except GalleryError as exc:
                gallery.errors.append(str(exc))
                continue
            if entry.id in seen:
                gallery.errors.append(
                    f"{file}: field 'id': {entry.id!r} is already used by {seen[entry.id]}"
                )
                continue
            seen[entry.id] = entry.source
            gallery.entries.append(entry)
    gallery.entries = sort_entries(gallery.entries)
    return gallery
