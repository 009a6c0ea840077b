"""Behaviour does not move: each golden call's normalised session log equals, byte for
byte, ``tests/fixtures/golden/<name>.jsonl`` (the calls and what is normalised:
``tests/call/golden_calls.py``).

Regenerate the files only from code whose behaviour is the reference, never to make a
refactor pass::

    CUTIN_GOLDEN_UPDATE=1 .venv/bin/python -m pytest tests/call/test_golden_logs.py -n 0
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.call.golden_calls import (
    CALLS,
    FIXTURES,
    HEADER_WALL_CLOCK,
    NORMALISED,
    GoldenCall,
    classifier_answer,
    fixture_path,
    normalise,
    run_golden,
)

UPDATE = os.environ.get("CUTIN_GOLDEN_UPDATE") == "1"
_NO_ESPEAK = shutil.which("espeak-ng") is None


def _param(call: GoldenCall) -> object:
    if call.far_end != "line":
        return pytest.param(call, id=call.name)
    return pytest.param(
        call,
        id=call.name,
        marks=[
            pytest.mark.audio,
            pytest.mark.skipif(_NO_ESPEAK, reason="needs espeak-ng"),
        ],
    )


def first_difference(want: bytes, got: bytes) -> str:
    """Where two logs first differ: the line number and that line of each."""
    a, b = want.split(b"\n"), got.split(b"\n")
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else b"<no line: the golden log ends here>"
        y = b[i] if i < len(b) else b"<no line: this run's log ends here>"
        if x != y:
            col = next((k for k, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), None)
            col = min(len(x), len(y)) if col is None else col
            return (
                f"first difference at line {i + 1}, byte {col + 1} "
                f"(golden {len(a)} lines, this run {len(b)}):\n"
                f"  golden:   {x.decode('utf-8', 'replace')}\n"
                f"  this run: {y.decode('utf-8', 'replace')}"
            )
    return "no difference"


@pytest.mark.parametrize("call", [_param(c) for c in CALLS])
def test_the_call_logs_what_it_logged_before(call: GoldenCall) -> None:
    got = run_golden(call)
    path = fixture_path(call.name)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(got)
        return
    assert path.is_file(), (
        f"no golden log {path.name}: record it from the reference code "
        "(CUTIN_GOLDEN_UPDATE=1, see this module's docstring)"
    )
    want = path.read_bytes()
    if got != want:
        pytest.fail(f"{call.name}: the log moved; {first_difference(want, got)}", pytrace=False)


def test_every_golden_file_belongs_to_a_call() -> None:
    names = {p.stem for p in FIXTURES.glob("*.jsonl")}
    assert names == {c.name for c in CALLS}


def test_only_the_header_wall_clock_is_normalised() -> None:
    header = {
        "type": "header",
        "session_id": "abc",
        "started_at": "2026-01-01T00:00:00.000+00:00",
        "t0_unix": 1.5,
        "t0_monotonic": 2.5,
        "clock": "virtual",
        "cutin_version": "0.1 (deadbeef)",
        "seeds": {"seed": 3},
    }
    event = b'{"t":0.5,"type":"end","reason":"agent_done","started_at":"x","t0_unix":1.5}'
    raw = json.dumps(header).encode() + b"\n" + event + b"\n"
    out = normalise(raw)
    first, rest = out.split(b"\n", 1)
    kept = json.loads(first)
    assert list(kept) == list(header)
    assert {k for k, v in kept.items() if v == NORMALISED} == set(HEADER_WALL_CLOCK)
    assert kept["clock"] == "virtual" and kept["seeds"] == {"seed": 3}
    assert rest == event + b"\n", "an event line is never rewritten"
    with pytest.raises(ValueError):
        normalise(event + b"\n")


def test_the_loopback_classifiers_answer_from_the_prompt_alone() -> None:
    from prompts import tau_voice as p

    def ongoing(words: int) -> str:
        return p.format_history([("user", "hi")], " ".join(["word"] * words))

    assert classifier_answer(p.interruption_prompt(ongoing(24))) == "NO"
    assert classifier_answer(p.interruption_prompt(ongoing(25))) == "YES"
    assert classifier_answer(p.backchannel_prompt(ongoing(7))) == "NO"
    assert classifier_answer(p.backchannel_prompt(ongoing(8))) == "YES"
    assert classifier_answer("something else") == "NO"
