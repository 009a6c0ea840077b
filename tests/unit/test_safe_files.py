"""sessions/safe_files: the one boundary every file cutin reads goes through."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sessions.hostile.safe_files import (
    MAX_DEPTH,
    FileError,
    clean_text,
    parse_json,
    parse_toml,
    read_bytes,
    read_json,
    read_text,
    terminal_line,
)


def test_special_files_are_refused_before_they_are_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(FileError, match=r"pipe.json: cannot read: a FIFO"):
        read_bytes(fifo)  # would block forever if it were opened
    with pytest.raises(FileError, match="a directory"):
        read_bytes(tmp_path)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    with pytest.raises(FileError, match="a device"):
        read_bytes(zero)
    with pytest.raises(FileError, match="No such file"):
        read_bytes(tmp_path / "missing.json")


def test_the_size_cap(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"1," * 100 + b"1]")
    assert len(read_json(big)) == 101
    with pytest.raises(FileError, match=r"too large \(203 bytes; the limit is 100\)"):
        read_bytes(big, max_bytes=100)


def test_encodings_name_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes("ok\nsecond line\n".encode("utf-16"))
    with pytest.raises(FileError, match="UTF-16 text; cutin reads UTF-8"):
        read_text(path)
    path.write_bytes(b"fine\nbad \xff here\n")
    with pytest.raises(FileError, match=r"x.txt:2:5: not UTF-8 text: byte 0xff"):
        read_text(path)
    path.write_bytes(b"\xef\xbb\xbfwith a BOM")
    assert read_text(path) == "with a BOM"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": [1, NaN]}', r"f.json:1:11: NaN is not a number"),
        ('{"a":\n  Infinity}', r"f.json:2:3: Infinity is not a number"),
        ('{"a": 1e400}', r"f.json:1:7: number 1e400 is out of range"),
        ('{"a": 2e18}', r"number 2e18 is out of range"),
        ('{"a": ' + "1" * 5000 + "}", r"integer with 5,000 digits \(at most 30\)"),
        ("[" * 5000 + "]" * 5000, r"nested deeper than 64"),
        ('{"a": ' + "[" * 70 + "]" * 70 + "}", r"f.json: \$.a\[0\]\[0\].*nested deeper"),
        ('{"a": 1,}', r"f.json:1:9: not valid JSON"),
    ],
)
def test_json_limits(text: str, message: str) -> None:
    with pytest.raises(FileError, match=message):
        parse_json(text, "f.json")


def test_a_jsonl_line_is_named_by_its_line_number() -> None:
    with pytest.raises(FileError, match=r"log.jsonl:7:7: NaN"):
        parse_json('{"t": NaN}', "log.jsonl", line=7)


def test_deep_but_allowed_nesting_and_big_but_allowed_numbers_load() -> None:
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(deep, "f") is not None
    assert parse_json('{"seed": 18446744073709551615, "x": -1.5e17}', "f") == {
        "seed": 2**64 - 1,
        "x": -1.5e17,
    }


def test_texts_are_cleaned_for_every_screen() -> None:
    raw = '{"text\\u001b[2J": "a\\u001b]0;title\\u0007b \\ud800 c\\r\\nd\\u009b", "n": "\\n\\t"}'
    data = parse_json(raw, "f")
    assert data == {"text␛[2J": "a␛]0;title␇b \ufffd c\nd\ufffd", "n": "\n\t"}
    # JSON lets DEL and the C1 controls (0x9b is CSI) stand unescaped in a string.
    assert parse_json('{"a": "x\x9b2J\x7f"}', "f") == {"a": "x\ufffd2J␡"}
    assert parse_json('"\x9b"', "f") == "\ufffd"
    assert clean_text("plain text stays the same object") == "plain text stays the same object"
    assert terminal_line("two\nlines\x1b") == "two␤lines␛"
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # no lone surrogate survives


def test_toml_gets_the_same_limits() -> None:
    assert parse_toml('a = 1\nb = "x"', "s.toml") == {"a": 1, "b": "x"}
    with pytest.raises(FileError, match=r"s.toml: \$.a: inf is not a finite number"):
        parse_toml("a = inf", "s.toml")
    with pytest.raises(FileError, match=r"s\.toml: bad number"):
        parse_toml("a = " + "1" * 5000, "s.toml")
    with pytest.raises(FileError, match=r"s\.toml: TOML nested deeper"):
        parse_toml("a = " + "[" * 3000 + "]" * 3000, "s.toml")
    assert parse_toml('a = "\\u001b]0;x\\u0007"', "s.toml") == {"a": "␛]0;x␇"}


def test_may_hold_controls_never_misses_one() -> None:
    from sessions.hostile.safe_files import may_hold_controls

    for text in ("\x1b]0;t\x07", "a\rb", "\x85", "\x7f", "\x00", "\x0c"):
        raw = json.dumps({"text": text}, ensure_ascii=False).encode("utf-8")
        assert may_hold_controls(raw), text
        assert may_hold_controls(json.dumps({"text": text}).encode("ascii")), text
    assert not may_hold_controls(json.dumps({"t": "plain\ttext\nwith é"}).encode())


def test_clean_strings_walks_everything_but_the_kept_top_field() -> None:
    from dataclasses import dataclass, field

    from sessions.hostile.safe_files import clean_strings

    @dataclass
    class Inner:
        source: str
        data: dict[str, object] = field(default_factory=dict)

    @dataclass
    class Outer:
        source: str
        inner: list[Inner]

    outer = Outer("path\x1b", [Inner("\x9bx", {"k\x1b": ("\x07", ["\x1b"])})])
    clean_strings(outer, keep=frozenset({"source"}))
    assert outer.source == "path\x1b"  # the file a program writes back to
    assert outer.inner[0].source == "\ufffdx"
    assert outer.inner[0].data == {"k␛": ("␇", ["␛"])}


def test_many_bad_log_lines_are_counted_in_one_warning(tmp_path: Path) -> None:
    from sessions.log import EndEvent
    from sessions.log.reader import read_session
    from tests.support.logs import header, write_log

    path = tmp_path / "call.jsonl"
    head = header("x", started_at="2026-01-01T00:00:00Z", scenario=None, tendencies=None)
    write_log(path, [EndEvent(t=1.0)], head)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("garbage\n" * 50 + '{"type": "end", "t": 2.0}\n')
    session = read_session(path, skip_bad=True)
    assert len(session.warnings) == 4
    assert str(session.warnings[-1]) == "line 6: and 47 more bad line(s) skipped (50 in all)"
