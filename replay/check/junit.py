"""A check as JUnit XML: one ``<testcase>`` per expectation, in one ``<testsuite>``
named ``cutin check``, as GitHub, GitLab and Jenkins read it. A FAIL is a
``<failure>``; NOT ENOUGH DATA is a ``<failure type="not-enough-data">`` too (it fails
the check: never a silent pass). Every text is XML-escaped and stripped of the control
characters XML 1.0 cannot hold."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from replay.check.evaluate import NOT_ENOUGH, PASS, CheckResult, CheckRow
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


@dataclass(frozen=True, slots=True)
class Case:
    """One ``<testcase>``: passed (``failure`` None), failed, or skipped."""

    name: str
    message: str
    failure: str | None = None
    """The failure's type (``threshold``, ``not-enough-data``, ``regressed``...)."""
    headline: str = ""
    """The failure's ``message`` attribute starts with this (a verdict)."""
    skipped: bool = False


def junit_xml(suite: str, classname: str, cases: Sequence[Case], notes: Sequence[str] = ()) -> str:
    """One ``<testsuite>`` of ``cases`` in a ``<testsuites>``: what `cutin check` and
    `cutin compare` write."""
    failures = sum(c.failure is not None for c in cases)
    skipped = sum(c.skipped and c.failure is None for c in cases)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name={_attr(suite)} tests="{len(cases)}" failures="{failures}" errors="0">',
        f'  <testsuite name={_attr(suite)} tests="{len(cases)}" failures="{failures}" '
        f'errors="0" skipped="{skipped}">',
    ]
    for case in cases:
        lines.append(f"    <testcase classname={_attr(classname)} name={_attr(case.name)}>")
        text = escape(_text(case.message))
        if case.failure is not None:
            lines.append(
                f"      <failure message={_attr(case.headline + case.message)} "
                f"type={_attr(case.failure)}>{text}</failure>"
            )
        elif case.skipped:
            lines.append(f"      <skipped message={_attr(case.message)}/>")
        else:
            lines.append(f"      <system-out>{text}</system-out>")
        lines.append("    </testcase>")
    if notes:
        lines.append(f"    <system-out>{escape(_text(chr(10).join(notes)))}</system-out>")
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"


def render_junit(result: CheckResult, suite: str = "cutin check") -> str:
    cases = []
    for row in result.rows:
        name = f"{row.measure} {row.expected}"
        if row.status == PASS:
            cases.append(Case(name, _message(row)))
            continue
        kind = "not-enough-data" if row.status == NOT_ENOUGH else "threshold"
        cases.append(Case(name, _message(row), kind, row.status + ": "))
    return junit_xml(suite, "cutin.check", cases, result.notes)


__all__ = ["Case", "junit_xml", "render_junit"]
