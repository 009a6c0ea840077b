"""A check as JUnit XML: one ``<testcase>`` per expectation, in one ``<testsuite>``
named ``cutin check``, as GitHub, GitLab and Jenkins read it. A FAIL is a
``<failure>``; NOT ENOUGH DATA is a ``<failure type="not-enough-data">`` too (it fails
the check: never a silent pass). Every text is XML-escaped and stripped of the control
characters XML 1.0 cannot hold."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from replay.check.evaluate import FAIL, NOT_ENOUGH, PASS, CheckResult, CheckRow
from replay.check.format import interval, number

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _attr(value: str) -> str:
    return quoteattr(_text(value))


def _message(row: CheckRow) -> str:
    got = f"measured {number(row.measured, row.unit)}"
    if row.interval is not None:
        got += f" (95% interval {interval(row)})"
    return f"{row.measure}: expected {row.expected}, {got}, n={row.n}; {row.note}"


def render_junit(result: CheckResult, suite: str = "cutin check") -> str:
    counts = result.counts()
    failures = counts[FAIL] + counts[NOT_ENOUGH]
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name={_attr(suite)} tests="{len(result.rows)}" failures="{failures}" '
        'errors="0">',
        f'  <testsuite name={_attr(suite)} tests="{len(result.rows)}" failures="{failures}" '
        'errors="0" skipped="0">',
    ]
    for row in result.rows:
        name = f"{row.measure} {row.expected}"
        case = f'    <testcase classname="cutin.check" name={_attr(name)}'
        if row.status == PASS:
            lines.append(f"{case}>")
            lines.append(f"      <system-out>{escape(_text(_message(row)))}</system-out>")
            lines.append("    </testcase>")
            continue
        kind = "not-enough-data" if row.status == NOT_ENOUGH else "threshold"
        lines.append(f"{case}>")
        lines.append(
            f"      <failure message={_attr(row.status + ': ' + _message(row))} "
            f'type="{kind}">{escape(_text(_message(row)))}</failure>'
        )
        lines.append("    </testcase>")
    if result.notes:
        notes = "\n".join(result.notes)
        lines.append(f"    <system-out>{escape(_text(notes))}</system-out>")
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"


__all__ = ["render_junit"]
