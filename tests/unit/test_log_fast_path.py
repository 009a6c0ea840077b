"""sessions.log.reader's per-line fast path returns exactly what parse_json returns, and
leaves every line it cannot vouch for (bad numbers, escapes, nesting, not an object,
not JSON) to parse_json and its messages."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.hostile.safe_files import FileError, fix_surrogates, parse_json
from sessions.log.reader import _plain_object

HOSTILE = [
    '{"type": "x", "t": 1.5}',
    '{"t": 1e400}',
    '{"t": 1e18}',
    '{"t": -2e18}',
    '{"t": NaN}',
    '{"t": Infinity}',
    '{"n": 1234567890123456789012345678901}',
    '{"s": "\\ud800"}',
    '{"s": "a\\u0007b"}',
    '{"s": "\u0085"}',
    "[" * 70 + "]" * 70,
    '{"a": ' + "[" * 70 + "]" * 70 + "}",
    '"just a string"',
    "[1, 2]",
    "5",
    "\ufeff{}",
    '{"a": 1',
    '{"a": 1} {"b": 2}',
    "",
    "{}",
]


def reference(line: str) -> object:
    try:
        return parse_json(line, "log.jsonl", line=2, strings=fix_surrogates)
    except FileError:
        return "error"


@pytest.mark.parametrize("line", HOSTILE)
def test_each_hostile_line(line: str) -> None:
    fast = _plain_object(line)
    if fast is not None:
        assert json.dumps(fast) == json.dumps(reference(line))
    elif line in ('{"type": "x", "t": 1.5}', '{"t": 1e18}', "{}"):
        pytest.fail(f"a plain line left to the slow path: {line}")


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=4), inner, max_size=3)
            ),
            max_leaves=12,
        ),
    )
)
def test_any_object_line(obj: dict[str, object]) -> None:
    line = json.dumps(obj, ensure_ascii=False)
    fast = _plain_object(line)
    if fast is not None:
        assert json.dumps(fast) == json.dumps(reference(line))


def test_it_takes_a_plain_event_line() -> None:
    line = '{"type": "agent_words", "t": 3.25, "turn": 1, "words": [{"word": "hi"}]}'
    assert _plain_object(line) == json.loads(line)
