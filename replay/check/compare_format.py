"""A comparison of two runs in every rendering: a plain table, Markdown, JUnit XML.

The numbers read as a check's (:func:`replay.check.format.number`); every text is one
inert line (:func:`sessions.hostile.inert_text.terminal_line`); the JUnit file is
:func:`replay.check.junit.junit_xml`'s, one ``<testcase>`` per measure: *regressed*
is a ``<failure type="regressed">``, *improved* one too under ``--fail-on any-change``,
*not enough data* a ``<skipped>`` (a ``<failure type="not-enough-data">`` when the
measure was named with ``--only``), and each flag (different scenarios, dials or
versions) a ``<testcase>`` of its own that is skipped, so a CI page shows it.
"""

from __future__ import annotations

from replay.check.compare import (
    IMPROVED,
    NO_CHANGE,
    NOT_ENOUGH,
    REGRESSED,
    CompareResult,
    CompareRow,
)
from replay.check.format import number
from replay.check.junit import Case, junit_xml
from sessions.hostile.inert_text import terminal_line

HEADERS = ["measure", "base", "new", "difference", "95% interval", "n base/new", "verdict", "note"]


def _signed(value: float | None, unit: str = "") -> str:
    if value is None:
        return "—"
    text = number(abs(value), unit)
    return ("+" if value >= 0 else "−") + text


def _pairs(result: CompareResult) -> str:
    if result.paired:
        return "paired by scenario and seed"
    return f"{result.pairs} paired by scenario and seed" if result.pairs else "not paired"


def interval(row: CompareRow) -> str:
    if row.interval is None:
        return "—"
    return f"[{_signed(row.interval[0])}, {_signed(row.interval[1])}]"


def cells(row: CompareRow) -> list[str]:
    return [
        terminal_line(c)
        for c in (
            row.measure,
            number(row.base, row.unit),
            number(row.new, row.unit),
            _signed(row.difference, row.unit),
            interval(row),
            f"{row.n_base}/{row.n_new}",
            row.verdict.upper() if row.verdict == REGRESSED else row.verdict,
            row.note,
        )
    ]


def table(rows: list[CompareRow]) -> str:
    """One line per measure; no colour, no escape sequence."""
    body = [HEADERS, *(cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in body) for i in range(len(HEADERS) - 1)]
    out = [
        "  ".join(c.ljust(w) for c, w in zip(line[:-1], widths, strict=True)) + "  " + line[-1]
        for line in body
    ]
    return "\n".join(s.rstrip() for s in out)


def summary(result: CompareResult) -> str:
    c = result.counts()
    return (
        f"cutin compare: {result.headline.upper()}: {c[REGRESSED]} regressed, "
        f"{c[IMPROVED]} improved, "
        f"{c[NO_CHANGE]} no change, {c[NOT_ENOUGH]} not enough data "
        f"({len(result.base.units)} base and {len(result.new.units)} new calls, "
        f"{_pairs(result)})"
    )


def text_report(result: CompareResult) -> str:
    lines = [table(result.rows)]
    lines += [f"FLAGGED: {terminal_line(f)} (not like for like)" for f in result.flags]
    lines += [f"note: {terminal_line(n)}" for n in result.notes]
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


# ---- Markdown --------------------------------------------------------------------------

_MARK = {REGRESSED: "❌ regressed", IMPROVED: "✅ improved", NO_CHANGE: "no change",
         NOT_ENOUGH: "⚠️ not enough data"}  # fmt: skip


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _code(text: str) -> str:
    return _cell(terminal_line(text)).replace("`", "")


def render_markdown(result: CompareResult) -> str:
    """A short summary for a pull-request comment or ``$GITHUB_STEP_SUMMARY``."""
    c = result.counts()
    lines = [
        f"## cutin compare: {result.headline}",
        "",
        f"Base `{_code(result.base.run)}` ({len(result.base.units)} calls) against new "
        f"`{_code(result.new.run)}` ({len(result.new.units)} calls), "
        f"{_pairs(result)}: "
        f"{c[REGRESSED]} regressed, {c[IMPROVED]} improved, {c[NO_CHANGE]} no change, "
        f"{c[NOT_ENOUGH]} not enough data.",
        "",
    ]
    lines += [f"> **Flagged:** {_cell(terminal_line(f))} (not like for like)" for f in result.flags]
    if result.flags:
        lines.append("")
    lines += ["| " + " | ".join(HEADERS) + " |", "|" + "|".join("---" for _ in HEADERS) + "|"]
    for row in result.rows:
        cs = cells(row)
        cs[6] = _MARK[row.verdict]
        lines.append("| " + " | ".join(_cell(x) for x in cs) + " |")
    lines += ["", *(f"- {_cell(terminal_line(n))}" for n in result.notes)]
    return "\n".join(lines).rstrip() + "\n"


# ---- JUnit -----------------------------------------------------------------------------


def _message(row: CompareRow) -> str:
    return terminal_line(
        f"{row.measure}: base {number(row.base, row.unit)}, new {number(row.new, row.unit)}, "
        f"difference {_signed(row.difference, row.unit)} (95% interval {interval(row)}), "
        f"n {row.n_base}/{row.n_new}; {row.verdict}: {row.note}"
    )


def render_junit(result: CompareResult) -> str:
    cases = []
    for row in result.rows:
        message = _message(row)
        if result.failing(row):
            kind = "not-enough-data" if row.verdict == NOT_ENOUGH else row.verdict.replace(" ", "-")
            cases.append(Case(row.measure, message, kind, row.verdict.upper() + ": "))
        else:
            cases.append(Case(row.measure, message, skipped=row.verdict == NOT_ENOUGH))
    for flag in map(terminal_line, result.flags):
        cases.append(Case("flagged: " + flag.split(":")[0], flag + " (not like for like)",
                          skipped=True))  # fmt: skip
    if not result.compared:
        cases.append(Case("compared", "no measure had enough data on both sides",
                          "not-enough-data", "NOTHING COMPARED: "))  # fmt: skip
    return junit_xml(
        "cutin compare", "cutin.compare", cases, [terminal_line(n) for n in result.notes]
    )


__all__ = ["HEADERS", "cells", "interval", "render_junit", "render_markdown", "summary", "table",
           "text_report"]  # fmt: skip
