"""Load a session log into memory a line at a time, tolerating what a crash leaves behind."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from sessions.hostile.safe_files import (
    MAX_BYTES,
    FileError,
    JsonSyntaxError,
    _bounded_int,
    _finite_float,
    _needs_walk,
    _reject_constant,
    _strerror,
    decode_text,
    fix_surrogates,
    open_regular,
    parse_json,
    shown_name,
)
from sessions.log.models import (
    KNOWN_TYPES,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    Event,
    Header,
    ShortPause,
    TurnEnd,
    UnknownEvent,
    parse_event,
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
    unknown: int = 0
    """Events of a type this cutin does not know, read (checked) but not kept (see
    :func:`read_session`'s ``keep_unknown``)."""
    unknown_last_t: float = 0.0
    """The latest time among those."""

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def duration(self) -> float:
        return max(max((e.t for e in self.events), default=0.0), self.unknown_last_t)


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


MAX_LINE_BYTES = 16 << 20
"""Longest log line read (16 MiB; an agent turn of a thousand words is ~60 KiB): a
longer one is never held whole; it is a bad line (see :func:`read_session`)."""


@_gc_paused()
def read_session(
    path: Path | str,
    *,
    skip_bad: bool = False,
    max_lines: int | None = None,
    keep_unknown: bool = False,
) -> Session:
    """Read ``path``, a line at a time (the file is never held whole). A torn last line
    is a warning, and so is a line a crash cut short before more lines were appended;
    any other bad line (one over :data:`MAX_LINE_BYTES` too) is a :class:`LogError`
    naming file and line, unless ``skip_bad`` (then a warning). ``max_lines``: read
    only the first lines (header included), as if the call had stopped there (a
    preview of a long log while the whole of it loads). An event of a type this
    cutin does not know is checked (its type and time) and counted
    (:attr:`Session.unknown`), not kept, unless ``keep_unknown`` (then whole, as
    written): no reader of a log uses one, and a newer cutin's (or a hostile file's)
    million tiny events would otherwise cost 15 times their size."""
    path = Path(path)
    try:
        lines = _log_lines(path, max_lines)
        first = next(lines, None)
    except FileError as exc:
        raise LogError(str(exc)) from None
    if first is None or (isinstance(first[1], bytes) and not first[1].strip()):
        raise LogError(f"{path}: empty file, expected a cutin session log")
    head_line = first[1]
    try:
        if isinstance(head_line, int):
            _refuse_long_head(first[3], path)
            raise LogError(
                f"{path}:1: not a cutin session log (line 1 is over the"
                f" {MAX_LINE_BYTES >> 20} MiB line limit)"
            )
        text = decode_text(head_line, f"{path}", clean=fix_surrogates)
        head = parse_json(text, str(path), line=1, strings=fix_surrogates)
    except JsonSyntaxError:
        raise LogError(f"{path}:1: not a cutin session log (line 1 is not JSON)") from None
    except LogError:
        raise
    except FileError as exc:
        raise LogError(f"{path}:1: not a cutin session log ({_after_place(str(exc))})") from None
    header = parse_header(head, f"{path}:1")
    events: list[Event] = []
    warnings: list[LogWarning] = []
    skipped: list[int] = []
    unknown, unknown_t = 0, 0.0
    try:
        for lineno, line, is_last, torn in lines:
            if isinstance(line, bytes) and not line.strip():
                continue
            try:
                if isinstance(line, int):
                    raise ValueError(
                        f"a line of {line:,} bytes, over the {MAX_LINE_BYTES >> 20} MiB line limit"
                    )
                event = _parse_line(line, str(path), lineno, keep_unknown)
                if not keep_unknown and isinstance(event, UnknownEvent):
                    unknown += 1  # checked (type and time), counted, not kept
                    unknown_t = max(unknown_t, event.t)
                    continue
                events.append(_shared(event))
            except (ValueError, ValidationError) as exc:
                detail = _short_error(exc) if isinstance(exc, ValidationError) else str(exc)
                if isinstance(exc, _CutShort) and not is_last:
                    # A crash cut this line, then the call was resumed (or verdicts were
                    # appended) on a fresh line: the crash cost this line only.
                    warnings.append(
                        LogWarning(lineno, "truncated line ignored (crash, then appended)")
                    )
                elif is_last and torn:
                    warnings.append(LogWarning(lineno, "truncated last line ignored (crash?)"))
                elif skip_bad:
                    skipped.append(lineno)
                    if len(skipped) <= SHOWN_SKIPS:
                        warnings.append(LogWarning(lineno, f"bad line skipped: {detail}"))
                else:
                    raise LogError(f"{path}:{lineno}: malformed event: {detail}") from None
    except FileError as exc:  # the file changed under the reader (grew past the cap)
        raise LogError(str(exc)) from None
    if len(skipped) > SHOWN_SKIPS:
        more = len(skipped) - SHOWN_SKIPS
        warnings.append(
            LogWarning(
                skipped[SHOWN_SKIPS],
                f"and {more} more bad line(s) skipped ({len(skipped)} in all)",
            )
        )
    _mark_turn_end_pauses(events)
    return Session(path, header, events, warnings, unknown, unknown_t)


def _log_lines(path: Path, max_lines: int | None) -> Iterator[Any]:
    """The lines of the regular file ``path`` (at most ``max_lines``), read one ahead,
    each as (line number, the line without its newline or, over
    :data:`MAX_LINE_BYTES`, its length, whether it is the last, whether it is torn:
    the file's last bytes with no newline after them; for a first line too long, its
    first bytes instead, for :func:`_refuse_long_head`). The file is checked as
    :func:`~sessions.hostile.safe_files.read_bytes` checks it (a regular file, opened without
    blocking, at most :data:`~sessions.hostile.safe_files.MAX_BYTES`) before the first line."""
    fh = open_regular(path)
    return _lookahead(_split(fh, path, max_lines))


def _split(fh: BinaryIO, path: Path, max_lines: int | None) -> Iterator[tuple[Any, ...]]:
    """(line number, line or length, torn or, for a too long first line, its head)."""
    name = shown_name(path)
    total = 0
    lineno = 0
    with fh:
        while max_lines is None or lineno < max_lines:
            try:
                line = fh.readline(MAX_LINE_BYTES + 1)
            except OSError as exc:
                raise FileError(f"{name}: cannot read: {_strerror(exc)}") from None
            if not line:
                return
            lineno += 1
            total += len(line)
            ended = line.endswith(b"\n")
            if ended:
                line = line[:-1]
            if len(line) <= MAX_LINE_BYTES:
                if total > MAX_BYTES:
                    raise FileError(f"{name}: too large (over {MAX_BYTES:,} bytes)")
                yield lineno, line, not ended
                continue
            head, size = line[:4096], len(line)
            while not ended:  # pass over the rest of the line, holding none of it
                more = fh.readline(1 << 20)
                size += len(more)
                total += len(more)
                if total > MAX_BYTES:
                    raise FileError(f"{name}: too large (over {MAX_BYTES:,} bytes)")
                if not more:
                    break
                ended = more.endswith(b"\n")
            size -= ended
            yield lineno, size, (head if lineno == 1 else not ended)


def _lookahead(items: Iterator[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    previous = next(items, None)
    for item in items:
        assert previous is not None
        yield (*previous[:2], False, previous[2])
        previous = item
    if previous is not None:
        yield (*previous[:2], True, previous[2])


def _refuse_long_head(head: Any, path: Path) -> None:
    """A first line over the line limit: raise :func:`decode_text`'s error when its
    first bytes say what the file is (binary, UTF-16, not UTF-8), else return."""
    if not isinstance(head, bytes):
        return
    cut = len(head)
    while cut and head[cut - 1] >= 0x80:  # no UTF-8 character cut in two at the end
        cut -= 1
    decode_text(head[:cut] if cut else head[:0], f"{path}", clean=fix_surrogates)


_SETS: dict[tuple[type, frozenset[str]], set[str]] = {}
_NO_EXTRA: dict[str, Any] = {}


def _shared(model: Any) -> Any:
    """``model`` (an event, and the models within it: words, insertions...) made to
    share pydantic's bookkeeping with the events read before it: its set of fields set
    and, when it has no unknown field, its empty dict of them. Each is a container per
    instance otherwise: 280 bytes of a 550-byte word timing, a sixth of a 20-word
    turn's words event. Nothing reads or writes them after reading (the writer leaves
    out fields by value, not by whether they were set), so sharing is safe."""
    fields = model.__pydantic_fields_set__
    key = (type(model), frozenset(fields))
    shared = _SETS.get(key)
    if shared is None:
        shared = _SETS[key] = fields
    object.__setattr__(model, "__pydantic_fields_set__", shared)
    if model.__pydantic_extra__ == _NO_EXTRA:
        object.__setattr__(model, "__pydantic_extra__", _NO_EXTRA)
    for value in model.__dict__.values():
        if isinstance(value, list) and value and isinstance(value[0], BaseModel):
            for item in value:
                _shared(item)
        elif isinstance(value, BaseModel):
            _shared(value)
    return model


class _CutShort(ValueError):
    """The line is the start of a JSON object that a crash cut off."""


def _after_place(message: str) -> str:
    """A FileError's message without its leading ``file:line:col: ``."""
    return message.split(": ", 1)[1] if ": " in message else message


def _parse_line(raw: bytes, where: str, lineno: int, keep_unknown: bool = True) -> Event:
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
    if not keep_unknown and data["type"] not in KNOWN_TYPES:
        data = {"type": data["type"], "t": data["t"]}  # what a reader of it needs
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
