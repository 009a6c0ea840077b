"""The loader's byte prefilter (replay.load.paths) answers exactly as
sessions.hostile.safe_files.may_hold_controls."""

from __future__ import annotations

import random

from replay.load.paths import _may_hold_controls
from sessions.hostile.safe_files import may_hold_controls

PIECES = [
    b"a",
    b"\\",
    b"u",
    b"0",
    b"1",
    b"7f",
    b"8",
    b"b",
    b"f",
    b"r",
    b"n",
    b"\x7f",
    b"\xc2",
    b"\x85",
    b"\xa0",
    b"\t",
    b"\n",
    b"\r",
    b"\x00",
    b"\x1f",
    b" ",
    b"\xc3\xa9",
    b'"',
]


def test_prefilter_equals_the_regex() -> None:
    rng = random.Random(5)
    answers = set()
    for _ in range(50_000):
        raw = b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8)))
        answer = may_hold_controls(raw)
        assert _may_hold_controls(raw) == answer, raw
        answers.add(answer)
    assert answers == {True, False}


def test_a_plain_log_is_answered_without_the_regex() -> None:
    assert not _may_hold_controls(b'{"type": "agent_words", "t": 1.5, "text": "caf\xc3\xa9"}\n' * 9)
    assert _may_hold_controls(b'{"text": "a\\u0007b"}\n')
