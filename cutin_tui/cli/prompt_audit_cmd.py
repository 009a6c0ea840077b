"""`cutin prompt-audit`: does prompting deliver disfluency? Regenerate frozen positions
under each prompt condition and compare with rule-based injection on the same turns."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cutin_tui.cli import CliError
from cutin_tui.cli.args import positive_int, tendency_list
from cutin_tui.cli.llm_options import llm_config
from sessions.hostile.safe_files import terminal_line

if TYPE_CHECKING:
    from rich.progress import Progress

    from replay.prompted.prompt_audit import Generation, PromptAuditReport

DESCRIPTION = (
    "Regenerate every position's reply (from `cutin positions extract`) under each prompt "
    "condition with --model, count fillers and repetitions, and print the disfluency table: "
    "the recorded replies, one row per condition, and rule-based injection into the "
    "recorded replies at each --alpha. All rows use the same paired positions: one that "
    "fails under any condition is dropped from all, and the report says how many. "
    "Replies are cached on disk, so an interrupted run resumes where it stopped. "
    "Conditions: none (no instruction), occasionally, roughly-half, most-sentences (the "
    "method paper's prompt at three strengths), tau-voice (tau-Voice's directives as "
    "published), ablated (the same without its MINIMAL VERBOSITY line)."
)
DEFAULT_CONDITIONS = "none,occasionally,roughly-half,most-sentences,tau-voice,ablated"
DEFAULT_ALPHAS = "0.25,0.5,0.75,1"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("positions", metavar="POSITIONS", help="positions JSONL")
    p.add_argument("--model", help="chat model (default: settings' openai_model)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (e.g. a local server)")
    p.add_argument(
        "--conditions",
        type=_conditions,
        default=_conditions(DEFAULT_CONDITIONS),
        metavar="C[,C...]",
        help=f"prompt conditions (default {DEFAULT_CONDITIONS})",
    )
    p.add_argument(
        "--alpha",
        type=tendency_list("alpha"),
        default=tendency_list("alpha")(DEFAULT_ALPHAS),
        metavar="A[,A...]",
        help=f"injection α rows (default {DEFAULT_ALPHAS}); empty for none",
    )
    p.add_argument("--jobs", type=positive_int, default=4, help="requests in flight (default 4)")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    p.add_argument("--cache", metavar="DIR", help="reply cache (default: settings' cache_dir)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--resamples", type=positive_int, default=2000, help="bootstrap resamples")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _conditions(value: str) -> list[str]:
    from prompts.disfluency import CONDITIONS

    out: list[str] = []
    for name in (v.strip() for v in value.split(",")):
        if not name:
            continue
        if name not in CONDITIONS:
            raise argparse.ArgumentTypeError(
                f"unknown condition {name!r}; choose from {', '.join(CONDITIONS)}"
            )
        if name not in out:
            out.append(name)
    if not out:
        raise argparse.ArgumentTypeError("needs at least one condition")
    return out


def run(args: argparse.Namespace) -> int:
    from replay.errors import LoadError
    from replay.prompted.positions_io import read_positions
    from replay.prompted.prompt_audit import build_report, generate_all
    from replay.prompted.reply_cache import ReplyCache
    from sessions.llm_client import LLMClient
    from sessions.settings import load_settings

    try:
        positions = read_positions(Path(args.positions))
    except LoadError as exc:
        raise CliError(str(exc)) from None
    settings = load_settings()
    config = llm_config(settings, args, temperature=args.temperature)
    cache = ReplyCache(Path(args.cache) if args.cache else settings.cache_dir / "prompt-audit")
    llm = LLMClient(config)
    total = len(positions) * len(args.conditions)
    try:
        with _Progress(total, enabled=not args.no_progress) as advance:
            generations = generate_all(
                positions, args.conditions, llm, cache, jobs=args.jobs, on_done=advance
            )
    finally:
        llm.close()
    report = build_report(
        positions,
        generations,
        args.conditions,
        args.alpha,
        model=config.model,
        resamples=args.resamples,
        seed=args.seed,
    )
    if args.json:
        sys.stdout.write(json.dumps(report.as_json(), ensure_ascii=False) + "\n")
    else:
        _print(report)
    for error in report.errors:
        print(f"cutin: error: {terminal_line(str(error))}", file=sys.stderr)
    if not report.paired:
        raise CliError("every position failed under some condition; nothing to compare")
    return 0


class _Progress:
    """A rich progress bar on stderr (or nothing); the context value advances it."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled and sys.stderr.isatty()
        self._bar: Progress | None = None

    def __enter__(self) -> Callable[[Generation], None]:
        if not self.enabled:
            return lambda _g: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self._bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bar.start()
        task = self._bar.add_task("replies", total=self.total)
        bar = self._bar
        return lambda _g: bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def _print(report: PromptAuditReport) -> None:
    from rich.console import Console

    from replay.audit.render import disfluency_table

    console = Console() if sys.stdout.isatty() else Console(width=160)
    console.print(disfluency_table(report.rows))
    dropped = len(report.dropped)
    line = (
        f"{report.paired} paired positions from {report.conversations} conversations "
        f"(model {report.model}); {dropped} of {report.positions} dropped"
    )
    if report.failures:
        per = ", ".join(f"{c} {n}" for c, n in report.failures.items())
        line += f" (failed under: {per})"
    console.print(line, highlight=False)
    console.print(
        f"replies: {report.generated} generated, {report.cached} from cache; "
        f"tokens {report.prompt_tokens:,} prompt + {report.completion_tokens:,} completion",
        highlight=False,
    )
