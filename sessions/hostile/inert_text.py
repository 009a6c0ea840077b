"""Text made inert: what a terminal, a report or a JSON reader would act on, shown.

Everything cutin shows or writes that came from outside (a file's text or name, an
agent's message, an id) passes through here: control characters other than newline
and tab become their visible Control Pictures (ESC → ␛), C1 controls and lone
surrogates become U+FFFD, and JSON output escapes DEL and C1 as ``\\uXXXX``. The
file reader (:mod:`sessions.hostile.safe_files`) applies it on load.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _picture(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return "\ufffd"  # C1 controls (0x80-0x9f) have no picture


def clean_text(text: str) -> str:
    """``text`` without anything a terminal would act on: control characters other
    than newline and tab shown as Control Pictures (ESC → ␛, CR → ␍; CR LF → LF),
    C1 controls and lone surrogates as U+FFFD."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_picture, text.replace("\r\n", "\n"))


_SURROGATE = re.compile("[\ud800-\udfff]")


def fix_surrogates(text: str) -> str:
    """``text`` with lone UTF-16 surrogates (which no UTF-8 output can hold) as U+FFFD,
    and nothing else changed: for files that are written back, such as session logs."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


_CONTROL_IN_JSON = re.compile(
    rb"\\u00(?:[01][0-9a-fA-F]|7[fF]|[89][0-9a-fA-F])|\\[bfr]|\x7f|\xc2[\x80-\x9f]|[\x00-\x08\x0b-\x1f]"
)


def may_hold_controls(raw: bytes) -> bool:
    """Whether JSON text ``raw`` can decode to a string holding a control character
    (escaped as ``\\u00XX``, ``\\b``, ``\\f``, ``\\r``, or a raw DEL or C1): when not,
    :func:`clean_strings` has nothing to do."""
    return _CONTROL_IN_JSON.search(raw) is not None


def clean_strings(obj: Any, *, keep: frozenset[str] = frozenset()) -> Any:
    """Apply :func:`clean_text` to every string inside ``obj`` (dataclasses, dicts,
    lists, keys too, in place; tuples and strings are rebuilt) and return it. Fields of
    ``obj`` itself named in ``keep`` (a file path a program writes back to) are left
    alone; fields of that name deeper down are cleaned like the rest."""
    if isinstance(obj, str):
        return clean_text(obj)
    seen: set[int] = set()
    stack = [obj]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if any(isinstance(k, str) and clean_text(k) != k for k in node):
                items = [(clean_text(k) if isinstance(k, str) else k, v) for k, v in node.items()]
                node.clear()
                node.update(items)
            for key, value in list(node.items()):
                fixed = _cleaned(value, stack)
                if fixed is not value:
                    node[key] = fixed
        elif isinstance(node, list):
            for i, value in enumerate(node):
                fixed = _cleaned(value, stack)
                if fixed is not value:
                    node[i] = fixed
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            for f in dataclasses.fields(node):
                if node is obj and f.name in keep:
                    continue
                value = getattr(node, f.name)
                fixed = _cleaned(value, stack)
                if fixed is not value:
                    object.__setattr__(node, f.name, fixed)
    return obj


def _cleaned(value: Any, stack: list[Any]) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, tuple):
        return tuple(_cleaned(v, stack) for v in value)
    if isinstance(value, dict | list) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        stack.append(value)
    return value


_SEPARATORS = re.compile("[\u2028\u2029]")
"""LINE SEPARATOR and PARAGRAPH SEPARATOR: not controls, but line breaks to
``str.splitlines``, editors, log viewers and JavaScript (the other breaks it knows,
VT, FF, FS/GS/RS and NEL, are C0/C1 controls that :func:`clean_text` already shows)."""


def _one_line(text: str) -> str:
    """Newlines as ␤, and U+2028/U+2029 as the visible escapes ``\\u2028``/``\\u2029``."""
    text = text.replace("\n", "\u2424")
    if _SEPARATORS.search(text):
        text = _SEPARATORS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def terminal_line(text: str) -> str:
    """One line for a terminal: :func:`clean_text`, newlines shown as ␤ and the
    Unicode line/paragraph separators as ``\\u2028``/``\\u2029``."""
    return _one_line(clean_text(text))


def shown_name(path: Path | str) -> str:
    """A file name as any output shows it (a report's ``source`` line, an error, a
    warning): one line, nothing a terminal acts on (ESC → ␛, CR → ␍, LF → ␤, U+2028 →
    ``\\u2028``, C1 such as NEL and undecodable bytes → U+FFFD). Only for showing: the
    file is opened by its real name."""
    return _one_line(clean_text(str(path).replace("\r\n", "\u240d\u2424")))


_INERT_IN_JSON = re.compile("[\x7f-\x9f\ud800-\udfff\u2028\u2029]")


def inert_json(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with DEL, the C1
    controls, lone surrogates and the Unicode line separators written as ``\\uXXXX``
    escapes, as ``ensure_ascii`` would: the same JSON value, nothing a terminal acts
    on (json.dumps escapes C0 itself), and other non-ASCII text left readable. Those
    characters only occur inside JSON strings, so the escapes are always valid."""
    return _INERT_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
