"""`cutin report`: the turn-by-turn view of logged calls or τ2 trials, headless."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cutin_tui.cli import CliError
from cutin_tui.cli.inputs import load_inputs, print_warnings
from replay.plural import plural
from sessions.hostile.safe_files import shown_name

DESCRIPTION = (
    "Render calls turn by turn — cut markers, the unheard part of cut turns, disfluency "
    "diffs, inline events and every judge's verdicts, one column per judge (rules · LLM "
    "· τ2 reward · τ2 review) — as Markdown, a self-contained HTML "
    "page (each call also drawn as a timeline, a strip a minute, and the turns with a "
    "cut, a backchannel or a yield playable from the recording beside the log, at most "
    "8 MB of audio a page; a batch's page first sums up the batch: its conditions, "
    "expectations and lagged calls, latency and realized-rate plots, the calls by "
    "scenario and dials in a sortable table), or JSON (schema in docs/report-json.md). "
    "PATH is a cutin "
    "session log, a "
    "folder of logs, a τ2-bench results.json or results folder, one τ2 simulation file "
    "or simulation_run record, or a verdict sidecar. "
    "Tick (full-duplex) trials also get τ-Voice's interaction metrics."
)
FORMATS = ("md", "html", "json")


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="what to report on")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="md (default), html or json; inferred from -o FILE's extension",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    p.add_argument("--failures", action="store_true", help="only failed trials")
    p.add_argument(
        "--skip-bad",
        action="store_true",
        help="in a folder of logs, skip unreadable logs (with a warning) instead of stopping",
    )


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    if args.output:
        suffix = Path(args.output).suffix.lower().lstrip(".")
        return (
            {"htm": "html", "markdown": "md"}.get(suffix, suffix)
            if suffix in (*FORMATS, "htm", "markdown")
            else "md"
        )
    return "md"


def run(args: argparse.Namespace) -> int:
    from replay.report.trials import render

    batch = load_inputs(args.paths, skip_bad=args.skip_bad)
    trials = batch.failures() if args.failures else batch.trials
    text = render(trials, _format(args), batch.warnings)
    print_warnings(batch.warnings)
    if args.output:
        out = Path(args.output)
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CliError(f"{shown_name(out)}: cannot write: {exc.strerror or exc}") from None
        print(f"cutin: wrote {shown_name(out)} ({plural(len(trials), 'trial')})", file=sys.stderr)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0
