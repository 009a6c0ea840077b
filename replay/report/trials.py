"""Headless reports of trials (``cutin report``): JSON (documented in
docs/report-json.md), Markdown, HTML.

All three show the same turn-by-turn view the replay screen shows: time, speaker,
text with the cut marker and the unheard rest, the disfluency diff of tester turns,
inline events, and every judge's current verdict, one column per judge (rules · LLM ·
τ2 reward · τ2 review, as in replay). The forms live in :mod:`.data` (JSON),
:mod:`.markdown` and :mod:`.html_page`; the words they share with the TUI in
:mod:`.wording`.
"""

from __future__ import annotations

from collections.abc import Sequence

from replay.model import Trial
from replay.report.data import REPORT_SCHEMA, build_report, render_json, tau2_json, trial_json
from replay.report.html_page import render_html
from replay.report.markdown import render_markdown

RENDERERS = {"json": render_json, "md": render_markdown, "html": render_html}


def render(trials: Sequence[Trial], fmt: str, warnings: Sequence[str] = ()) -> str:
    """Render in ``fmt`` (json | md | html)."""
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise ValueError(
            f"unknown report format {fmt!r}; choose one of {', '.join(RENDERERS)}"
        ) from None
    return renderer(trials, warnings)


__all__ = [
    "REPORT_SCHEMA",
    "build_report",
    "render",
    "render_html",
    "render_json",
    "render_markdown",
    "tau2_json",
    "trial_json",
]
