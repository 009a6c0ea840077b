"""Load a session log into memory, tolerating what a crash leaves behind."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from sessions.log.models import (
    SCHEMA_NAME,
    SCHEMA_VERSION,
    Event,
    Header,
    ShortPause,
    TurnEnd,
    parse_event,
)
from sessions.safe_files import (
    FileError,
    JsonSyntaxError,
    _bounded_int,
    _finite_float,
    _needs_walk,
    _reject_constant,
    decode_text,
    fix_surrogates,
    parse_json,
    read_bytes,
)

E = TypeVar("E")


SHOWN_SKIPS = 3
"""Bad lines named one by one under ``skip_bad``; the rest are counted in one warning."""


class LogError(FileError):
    """A log that cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class LogWarning:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class Session:
    path: Path | None
    header: Header
    events: list[Event]
    warnings: list[LogWarning] = field(default_factory=list)

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def duration(self) -> float:
        return max((e.t for e in self.events), default=0.0)


def _short_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    return f"{loc}: {first.get('msg', 'invalid')}" if loc else str(first.get("msg", "invalid"))


def parse_header(data: Any, where: str) -> Header:
    if not isinstance(data, dict) or "schema" not in data:
        raise LogError(f'{where}: not a cutin session log (line 1 has no "schema" field)')
    schema = str(data["schema"])
    name, _, version = schema.partition("/")
    if name != SCHEMA_NAME:
        raise LogError(f"{where}: not a cutin session log (schema {schema!r})")
    if version != str(SCHEMA_VERSION):
        raise LogError(
            f"{where}: unsupported log schema version {schema!r}; "
            f"this cutin reads {SCHEMA_NAME}/{SCHEMA_VERSION}"
        )
    try:
        return Header.model_validate(data, strict=True)
    except ValidationError as exc:
        raise LogError(f"{where}: bad header: {_short_error(exc)}") from None


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a log is read: its ~20k events per two hours
    are all kept, so the collections that their allocations trigger (each walking the
    growing heap) find nothing and cost about a fifth of the read."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@_gc_paused()
def read_session(
    path: Path | str, *, skip_bad: bool = False, max_lines: int | None = None
) -> Session:
    """Read ``path``. A torn last line is a warning, and so is a line a crash cut
    short before more lines were appended; any other bad line is a :class:`LogError`
    naming file and line, unless ``skip_bad`` (then a warning). ``max_lines``: read
    only the first lines (header included), as if the call had stopped there (a
    preview of a long log while the whole of it loads)."""
    path = Path(path)
    try:
        raw = read_bytes(path)
    except FileError as exc:
        raise LogError(str(exc)) from None
    torn_tail = not raw.endswith(b"\n")
    chunks = raw.split(b"\n", -1 if max_lines is None else max_lines)
    if max_lines is not None and len(chunks) > max_lines:
        chunks.pop()  # the rest of the file, unsplit
        torn_tail = False
    if chunks and chunks[-1] == b"":
        chunks.pop()
    if not chunks or not chunks[0].strip():
        raise LogError(f"{path}: empty file, expected a cutin session log")
    try:
        first = decode_text(chunks[0], f"{path}", clean=fix_surrogates)
        head = parse_json(first, str(path), line=1, strings=fix_surrogates)
    except JsonSyntaxError:
        raise LogError(f"{path}:1: not a cutin session log (line 1 is not JSON)") from None
    except FileError as exc:
        raise LogError(f"{path}:1: not a cutin session log ({_after_place(str(exc))})") from None
    lines = chunks
    header = parse_header(head, f"{path}:1")
    events: list[Event] = []
    warnings: list[LogWarning] = []
    skipped: list[int] = []
    last = len(lines)
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            events.append(_parse_line(line, str(path), lineno))
        except (ValueError, ValidationError) as exc:
            detail = _short_error(exc) if isinstance(exc, ValidationError) else str(exc)
            if isinstance(exc, _CutShort) and lineno < last:
                # A crash cut this line, then the call was resumed (or verdicts were
                # appended) on a fresh line: the crash cost this line only.
                warnings.append(LogWarning(lineno, "truncated line ignored (crash, then appended)"))
            elif lineno == last and torn_tail:
                warnings.append(LogWarning(lineno, "truncated last line ignored (crash?)"))
            elif skip_bad:
                skipped.append(lineno)
                if len(skipped) <= SHOWN_SKIPS:
                    warnings.append(LogWarning(lineno, f"bad line skipped: {detail}"))
            else:
                raise LogError(f"{path}:{lineno}: malformed event: {detail}") from None
    if len(skipped) > SHOWN_SKIPS:
        more = len(skipped) - SHOWN_SKIPS
        warnings.append(
            LogWarning(
                skipped[SHOWN_SKIPS],
                f"and {more} more bad line(s) skipped ({len(skipped)} in all)",
            )
        )
    _mark_turn_end_pauses(events)
    return Session(path, header, events, warnings)


class _CutShort(ValueError):
    """The line is the start of a JSON object that a crash cut off."""


def _after_place(message: str) -> str:
    """A FileError's message without its leading ``file:line:col: ``."""
    return message.split(": ", 1)[1] if ": " in message else message


def _parse_line(raw: bytes, where: str, lineno: int) -> Event:
    body = raw.rstrip()
    try:
        line = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if body.startswith(b"{") and exc.reason == "unexpected end of data":
            raise _CutShort("cut short (in a UTF-8 character)") from None
        raise ValueError(f"not UTF-8 text (byte {exc.start + 1}: {exc.reason})") from None
    data = _plain_object(line)
    try:
        if data is None:
            data = parse_json(line, where, line=lineno, strings=fix_surrogates)
    except JsonSyntaxError as exc:
        if line.startswith("{") and (
            exc.pos >= len(line) or exc.msg.startswith("Unterminated string")
        ):
            raise _CutShort(f"cut short ({exc.msg})") from None
        raise ValueError(f"not JSON ({exc.msg})") from None
    except FileError as exc:
        raise ValueError(_after_place(str(exc))) from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if "type" not in data or "t" not in data:
        raise ValueError('missing "type" or "t"')
    if not isinstance(data["type"], str):
        # A list or object here once reached a set lookup (unhashable): name it instead.
        raise ValueError(f'"type" is {_json_kind(data["type"])}, not a string')
    return parse_event(data)


# parse_json's decoder (same hooks: finite bounded numbers, no NaN), made once: a two-hour
# log has ~20k lines, and building a decoder and the message prefixes for each line cost
# as much as decoding it.
_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_int=_bounded_int, parse_float=_finite_float
)


def _plain_object(line: str) -> dict[str, Any] | None:
    """The line's object when :func:`parse_json` would return it untouched (it parses, it
    is an object, and nothing in it needs the tree walk); else None, and parse_json
    handles the line, with its messages."""
    if _needs_walk(line):
        return None
    try:
        value = _DECODER.decode(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    return "a number"


def _mark_turn_end_pauses(events: list[Event]) -> None:
    grown = {e.short_pause_index for e in events if isinstance(e, TurnEnd)}
    for e in events:
        if isinstance(e, ShortPause) and e.index in grown:
            e.became_turn_end = True
