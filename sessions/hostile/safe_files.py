"""The one boundary every file cutin reads goes through.

Session logs, τ2-bench results and simulations, verdict sidecars, scenario and
gallery TOML, positions files and text files are all read here first, so that a
hostile or broken file gives one clear error instead of a traceback, a hang or a
NaN further on:

* **regular files only**: a directory, FIFO, socket or device (``/dev/zero``) is
  refused before it is opened, and files are opened non-blocking, so nothing waits
  on a writer that never comes;
* **a size cap** (:data:`MAX_BYTES`), checked on the size and again while reading;
* **strict UTF-8** (a UTF-8 BOM is allowed); UTF-16/32 are named as such, a binary
  file (a PNG, gzip, zip, WAV, PDF …, or NUL bytes) is called one
  (:func:`binary_kind`), and undecodable bytes are reported with the line and column;
* **JSON with limits**: nesting depth (:data:`MAX_DEPTH`), integer literals of at
  most :data:`MAX_INT_DIGITS` digits, no ``NaN``/``Infinity`` and no number that
  overflows to infinity;
* **clean text** (:mod:`sessions.hostile.inert_text`): a lone UTF-16 surrogate becomes
  U+FFFD, and control characters other than newline and tab become their visible
  Control Pictures (ESC → ␛), so no escape sequence from a file ever reaches a
  terminal, a report or a screen.

Every problem is a :class:`FileError` whose message names the file, the place in it
(``path:line:column`` and/or a JSON path such as ``$.simulations[3].duration``) and
what is wrong. Loaders' own error types derive from it, and the command line
catches it once: one line on stderr, exit status 2.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from sessions.hostile.inert_text import (  # re-exported: readers and printers import them from here
    clean_strings,
    clean_text,
    fix_surrogates,
    inert_json,
    may_hold_controls,
    shown_name,
    terminal_line,
)

MAX_BYTES = 512 * 1024 * 1024
"""Largest file cutin reads (512 MiB; a two-hour session log is a few MiB)."""
MAX_DEPTH = 64
"""Deepest JSON/TOML nesting accepted (real τ2 files nest about 10 deep)."""
MAX_INT_DIGITS = 30
"""Longest integer literal accepted (a 64-bit seed has 20 digits)."""

MAX_ABS_FLOAT = 1e18
"""Largest magnitude of a non-integer number: sums and squares of such numbers stay
finite, so nothing downstream turns a file's number into inf or NaN."""

_CHUNK = 1 << 20


class FileError(ValueError):
    """A file cutin cannot use. The message is one line naming the file, the place
    in it and what is wrong."""


def exists(path: Path | str) -> bool:
    """Whether ``path`` names something, without raising: a path that cannot even be
    looked at (a folder on the way that is not readable, a loop) counts as existing,
    so that reading it then says why in one line (:func:`read_bytes`)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return os.path.islink(path)  # a dangling link: reading it names the problem
    except NotADirectoryError:
        return False
    except (OSError, ValueError):  # EACCES, ELOOP, ENAMETOOLONG; a NUL in the name
        return True
    return True


def is_dir(path: Path | str) -> bool:
    """``Path.is_dir`` that never raises (an unreadable parent is not a directory here;
    reading the path then reports it)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_file(path: Path | str) -> bool:
    """``Path.is_file`` that never raises (Python 3.11's raises PermissionError)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def list_tree(folder: Path | str, pattern: str) -> tuple[list[Path], list[str]]:
    """Every entry matching ``pattern`` (a glob on the name, such as ``*.jsonl``) below
    ``folder``, sorted, and one line per folder that could not be listed (``Path.rglob``
    passes over those in silence, which would drop the files inside unseen)."""
    import fnmatch

    found: list[Path] = []
    problems: list[str] = []

    def failed(exc: OSError) -> None:
        where = exc.filename if exc.filename is not None else folder
        problems.append(f"{shown_name(where)}: cannot list folder: {_strerror(exc)}")

    for here, dirs, files in os.walk(folder, onerror=failed):
        dirs.sort()
        for name in (*dirs, *files):
            if fnmatch.fnmatchcase(name, pattern):
                found.append(Path(here) / name)
    return sorted(found), problems


# ---------------------------------------------------------------- reading
def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _strerror(exc: OSError) -> str:
    return exc.strerror or str(exc)


def open_regular(path: Path | str, *, max_bytes: int = MAX_BYTES) -> BinaryIO:
    """The regular file ``path`` opened for reading (binary, buffered): refused before it
    is opened unless it is a regular file of at most ``max_bytes`` (a FIFO or a device
    never blocks, ``/dev/zero`` is never read), and again if it was swapped after the
    check. Every refusal is one :class:`FileError` naming the file inertly."""
    p = Path(path)
    name = shown_name(p)  # messages name the file one-line and inert, whatever it holds
    try:
        st = os.stat(p)
    except OSError as exc:
        raise FileError(f"{name}: cannot read: {_strerror(exc)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise FileError(f"{name}: cannot read: {_kind(st.st_mode)}, not a regular file")
    if st.st_size > max_bytes:
        raise FileError(f"{name}: too large ({st.st_size:,} bytes; the limit is {max_bytes:,})")
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise FileError(f"{name}: cannot read: {_strerror(exc)}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped after the check
        os.close(fd)
        raise FileError(f"{name}: cannot read: not a regular file")
    return os.fdopen(fd, "rb", buffering=1 << 20)


def read_bytes(path: Path | str, *, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``)."""
    name = shown_name(Path(path))
    chunks: list[bytes] = []
    size = 0
    with open_regular(path, max_bytes=max_bytes) as fh:
        try:
            while chunk := fh.read(_CHUNK):
                size += len(chunk)
                if size > max_bytes:  # it grew after the check
                    raise FileError(f"{name}: too large (over {max_bytes:,} bytes)")
                chunks.append(chunk)
        except OSError as exc:
            raise FileError(f"{name}: cannot read: {_strerror(exc)}") from None
    return b"".join(chunks)


def read_head(path: Path | str, limit: int = 4096) -> bytes:
    """Up to ``limit`` bytes of the first line of a regular file; ``b""`` for anything
    that is not one or cannot be read (for sniffing what a file is)."""
    p = Path(path)
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):
            return b""
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return b""
    try:
        head = os.read(fd, limit)
    except OSError:
        return b""
    finally:
        os.close(fd)
    end = head.find(b"\n")
    return head if end < 0 else head[:end]


_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"\x1f\x8b", "gzip-compressed data: decompress it first"),
    (b"PK\x03\x04", "zip archive"),
    (b"PK\x05\x06", "zip archive"),
    (b"\xfd7zXZ\x00", "xz-compressed data: decompress it first"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data: decompress it first"),
    (b"7z\xbc\xaf\x27\x1c", "7z archive"),
    (b"OggS", "Ogg audio"),
    (b"fLaC", "FLAC audio"),
    (b"\x1a\x45\xdf\xa3", "Matroska/WebM media"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x7fELF", "ELF executable"),
)


_RIFF = {b"WAVE": "WAV audio", b"AVI ": "AVI video", b"WEBP": "WebP image"}


def binary_kind(raw: bytes) -> str | None:
    """What ``raw`` (a file's first bytes or more) is when it is plainly not text: a
    known magic number ("PNG image", "WAV audio", "gzip-compressed …"), or
    "NUL bytes" for NULs that are not the zero half of UTF-16/32 text.
    None for anything that may be text (then :func:`decode_text` says what is wrong)."""
    for magic, kind in _MAGIC:
        if raw.startswith(magic):
            return kind
    if raw.startswith(b"RIFF") and raw[8:12] in _RIFF:
        return _RIFF[raw[8:12]]
    if raw.startswith(b"BZh") and raw[4:10] == b"1AY&SY":
        return "bzip2-compressed data: decompress it first"
    if raw.startswith(b"ID3") and raw[3:4] in (b"\x02", b"\x03", b"\x04"):
        return "MP3 audio"
    if raw[4:8] == b"ftyp" and raw[:1] == b"\x00":
        return "MP4/M4A media"
    sample = raw[:4096]
    if b"\x00" not in sample or _utf16_guess(sample) is not None:
        return None
    # Binary data is also not UTF-8; a text with a stray run of NULs is a broken text,
    # whose reader names the line (unless NULs are a tenth of it).
    if sample.count(0) * 10 > len(sample) or not _utf8_so_far(sample):
        return "NUL bytes"
    return None


def _utf8_so_far(sample: bytes) -> bool:
    """Whether ``sample`` (the start of a file) is UTF-8, a character cut at its end
    aside."""
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.end == len(sample) and exc.reason == "unexpected end of data"
    return True


def _utf16_guess(sample: bytes) -> str | None:
    """The name "UTF-16" or "UTF-32" when the NULs of ``sample`` fall as the high bytes of mostly
    ASCII text in that encoding (no BOM), else None."""
    if len(sample) < 4:
        return None
    for width, name in ((4, "UTF-32"), (2, "UTF-16")):
        lanes = [sample[i::width].count(0) for i in range(width)]
        units = len(sample) // width
        zero_lanes = sum(1 for n in lanes if n >= 0.6 * units)
        if zero_lanes == width - 1 and min(lanes) <= 0.1 * units:
            return name
    return None


def decode_text(raw: bytes, where: Path | str, *, clean: Callable[[str], str] = clean_text) -> str:
    """Strict UTF-8 (an initial BOM is dropped), then ``clean`` (:func:`clean_text`).
    A binary file (:func:`binary_kind`) is refused as such, in one line."""
    where = shown_name(where)
    for bom, name in _BOMS:
        if raw.startswith(bom):
            raise FileError(f"{where}: {name} text; cutin reads UTF-8 (re-save the file as UTF-8)")
    kind = binary_kind(raw)
    if kind is not None:
        raise FileError(f"{where}: a binary file ({kind}), not text; cutin reads UTF-8 text")
    wide = _utf16_guess(raw[:4096]) if b"\x00" in raw[:4096] else None
    if wide is not None:
        raise FileError(
            f"{where}: {wide} text without a BOM?; cutin reads UTF-8 (re-save the file as UTF-8)"
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FileError(
            f"{where}:{line}:{col}: not UTF-8 text: byte 0x{raw[exc.start]:02x} ({exc.reason})"
        ) from None
    return clean(text)


def read_text(path: Path | str, *, max_bytes: int = MAX_BYTES) -> str:
    """A regular UTF-8 text file, cleaned (see :func:`clean_text`)."""
    return decode_text(read_bytes(path, max_bytes=max_bytes), path)


# ---------------------------------------------------------------- JSON and TOML
class JsonSyntaxError(FileError):
    """Text that is not JSON; ``pos`` and ``msg`` are those of the decoder's error."""

    def __init__(self, message: str, pos: int, msg: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.msg = msg


class _Bad(ValueError):
    def __init__(self, message: str, literal: str) -> None:
        super().__init__(message)
        self.literal = literal


def _place(text: str, literal: str, where: str, line: int | None) -> str:
    """``where:line:col`` of the first occurrence of ``literal`` (best effort)."""
    pos = text.find(literal)
    if pos < 0:
        return f"{where}:{line}" if line is not None else where
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    if line is None:
        line = text.count("\n", 0, pos) + 1
    return f"{where}:{line}:{col}"


def _reject_constant(name: str) -> Any:
    raise _Bad(f"{name} is not a number cutin accepts (only finite numbers)", name)


def _bounded_int(literal: str) -> int:
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Bad(f"integer with {digits:,} digits (at most {MAX_INT_DIGITS})", literal[:64])
    return int(literal)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not abs(value) <= MAX_ABS_FLOAT:
        raise _Bad(f"number {literal[:40]} is out of range (|x| ≤ {MAX_ABS_FLOAT:g})", literal)
    return value


def json_path(parts: tuple[str | int, ...]) -> str:
    """``("simulations", 3, "duration")`` → ``$.simulations[3].duration``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def check_tree(value: Any, where: str, *, strings: Callable[[str], str] = clean_text) -> Any:
    """Walk a parsed JSON/TOML value without recursion: nesting at most
    :data:`MAX_DEPTH`, numbers finite, integers bounded, strings (values and keys)
    passed through ``strings``. Returns the value; containers are fixed in place."""
    where = shown_name(where)

    def fix(v: Any, path: tuple[str | int, ...]) -> Any:
        if isinstance(v, str):
            return strings(v)
        if isinstance(v, float) and not abs(v) <= MAX_ABS_FLOAT:
            raise FileError(f"{where}: {json_path(path)}: {v} is not a finite number in range")
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**MAX_INT_DIGITS:
            raise FileError(f"{where}: {json_path(path)}: integer too large")
        return v

    root = fix(value, ())
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise FileError(f"{where}: {json_path(path[:8])}…: nested deeper than {MAX_DEPTH}")
        if isinstance(node, dict):
            if any(strings(k) != k for k in node):
                cleaned = {strings(k): v for k, v in node.items()}
                node.clear()
                node.update(cleaned)
            for key, child in node.items():
                fixed = fix(child, (*path, key))
                if fixed is not child:
                    node[key] = fixed
                if isinstance(fixed, dict | list):
                    stack.append((fixed, (*path, key)))
        elif isinstance(node, list):
            for i, child in enumerate(node):
                fixed = fix(child, (*path, i))
                if fixed is not child:
                    node[i] = fixed
                if isinstance(fixed, dict | list):
                    stack.append((fixed, (*path, i)))
    return root


_RAW_C1 = re.compile("[\x7f-\x9f]")
"""DEL and the C1 controls: JSON lets them stand unescaped in a string."""


def _needs_walk(text: str) -> bool:
    """Cheap pre-check: a value can only be nested too deep, hold a control character
    or a surrogate when the text has the brackets, a backslash escape, or a raw DEL/C1."""
    return (
        "\\" in text
        or _RAW_C1.search(text) is not None
        or text.count("[") + text.count("{") > MAX_DEPTH
    )


def parse_json(
    text: str,
    where: str,
    *,
    line: int | None = None,
    strings: Callable[[str], str] = clean_text,
) -> Any:
    """Parse ``text`` (one JSON document, or one JSONL line when ``line`` is given)
    under the limits above; every string goes through ``strings``. ``where`` is the
    file, for messages."""
    where = shown_name(where)
    at = f"{where}:{line}" if line is not None else where
    try:
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as exc:
        place = f"{at}:{exc.colno}" if line is not None else f"{where}:{exc.lineno}:{exc.colno}"
        raise JsonSyntaxError(f"{place}: not valid JSON: {exc.msg}", exc.pos, exc.msg) from None
    except _Bad as exc:
        raise FileError(f"{_place(text, exc.literal, where, line)}: {exc}") from None
    except RecursionError:
        raise FileError(f"{at}: JSON nested deeper than {MAX_DEPTH}") from None
    except ValueError as exc:  # e.g. int() digit limits
        raise FileError(f"{at}: bad number: {exc}") from None
    if isinstance(value, str):
        return strings(value)
    if isinstance(value, dict | list) and _needs_walk(text):
        value = check_tree(value, at, strings=strings)
    return value


def read_json(path: Path | str, *, max_bytes: int = MAX_BYTES) -> Any:
    """A regular UTF-8 file holding one JSON document, checked as :func:`parse_json`."""
    return parse_json(read_text(path, max_bytes=max_bytes), str(path))


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """TOML under the same limits (TOML allows ``inf`` and ``nan``; cutin does not)."""
    where = shown_name(where)
    try:
        data = tomllib.loads(clean_text(text))
    except tomllib.TOMLDecodeError as exc:
        raise FileError(f"{where}: not valid TOML: {exc}") from None
    except RecursionError:
        raise FileError(f"{where}: TOML nested deeper than {MAX_DEPTH}") from None
    except ValueError as exc:  # int() digit limits
        raise FileError(f"{where}: bad number: {exc}") from None
    checked: dict[str, Any] = check_tree(data, where)
    return checked


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a JSONL text, 1-based; the empty string after a
    final newline is not a line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    yield from enumerate(lines, start=1)


__all__ = [
    "MAX_ABS_FLOAT",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "FileError",
    "JsonSyntaxError",
    "binary_kind",
    "check_tree",
    "clean_strings",
    "clean_text",
    "decode_text",
    "exists",
    "fix_surrogates",
    "inert_json",
    "is_dir",
    "is_file",
    "iter_lines",
    "json_path",
    "list_tree",
    "may_hold_controls",
    "parse_json",
    "parse_toml",
    "read_bytes",
    "read_head",
    "read_json",
    "read_text",
    "shown_name",
    "terminal_line",
]
