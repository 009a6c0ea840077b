"""A check as a short Markdown summary: a pull-request comment or ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from replay.check.evaluate import NOT_ENOUGH, PASS, CheckResult
from replay.check.format import HEADERS, cells
from sessions.hostile.inert_text import terminal_line

_MARK = {PASS: "✅ PASS", NOT_ENOUGH: "⚠️ NOT ENOUGH DATA"}


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render_markdown(result: CheckResult, run: str) -> str:
    counts = result.counts()
    head = "passed" if result.passed else "FAILED"
    lines = [
        f"## cutin check: {head}",
        "",
        f"Run `{_cell(terminal_line(run)).replace('`', '')}`: {result.calls} calls "
        f"({result.agent_calls} to the agent under test, {result.lagged} lagged). "
        f"{counts[PASS]} passed, {counts['FAIL']} failed, {counts[NOT_ENOUGH]} not enough data.",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join("---" for _ in HEADERS) + "|",
    ]
    for row in result.rows:
        c = cells(row)
        c[5] = _MARK.get(row.status, "❌ FAIL")
        lines.append("| " + " | ".join(_cell(x) for x in c) + " |")
    lines += ["", *(f"- {_cell(terminal_line(n))}" for n in result.notes)]
    return "\n".join(lines).rstrip() + "\n"


__all__ = ["render_markdown"]
