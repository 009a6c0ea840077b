"""`cutin check`: expectations over a run folder, exit 0 / 1 / 2 for a CI to gate on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from cutin_tui.cli import CliError
from cutin_tui.cli.args import positive_int
from replay.plural import plural
from sessions.hostile.inert_text import terminal_line
from sessions.hostile.safe_files import shown_name

if TYPE_CHECKING:
    from replay.check.evaluate import CheckResult
    from replay.check.load import RunCall
    from sessions.scenarios.expect import Expectations

DESCRIPTION = (
    "Check a run folder (the logs of `cutin simulate`) against expectations and exit 0 "
    "when every one passes, 1 when any fails or has too little data, 2 on bad input. "
    "Expectations are the audit's agent-under-test measure names with a comparison "
    '(yield_rate = ">= 0.9", yield_latency_p95 = "<= 1.2", response_rate = ">= 0.95", '
    'dead_air_max_gap_s = "<= 4", ...) plus agent_says = ["phrase", ...] (words every '
    'call\'s agent must say, matched on the transcript) and judge = "rules" | "llm", '
    "from --expect FILE (TOML: an [expect] table, or a scenario file's) or, without it, "
    "from the [expect] table of the shipped scenario the logs name. Each measure is pooled "
    "over the calls with the audit's 95% bootstrap interval over calls; a rate or "
    "latency over fewer than 10 events is NOT ENOUGH DATA (exit 1, never a silent "
    "pass). Calls whose frames lagged are left out as in the audit (--keep-lagged keeps "
    "them) and counted. docs/ci.md has the rules and a GitHub Actions job."
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run folder (or one session log)")
    p.add_argument(
        "--expect",
        metavar="FILE",
        help="expectations (TOML: [expect] table or a scenario file); default: the [expect] "
        "table of the shipped scenario the logs name",
    )
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML here (one test case "
                   "per expectation)")  # fmt: skip
    p.add_argument("--markdown", metavar="FILE", help="also write a Markdown summary here "
                   "(e.g. $GITHUB_STEP_SUMMARY)")  # fmt: skip
    p.add_argument(
        "--json", action="store_true", help="print the result as JSON instead of a table"
    )
    p.add_argument(
        "--keep-lagged",
        action="store_true",
        help="keep calls whose frame lag exceeded one frame in the measures (default: left "
        "out and counted, as in cutin audit)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--resamples", type=positive_int, default=2000,
                   help="bootstrap resamples (default 2000)")  # fmt: skip


def expectations_of(path: str | None, calls: list[RunCall]) -> Expectations:
    """--expect FILE's, else the [expect] tables of the scenarios the logs name."""
    from replay.check.expectations import merge, parse_expectations_text
    from sessions.hostile.safe_files import read_text
    from sessions.scenarios import (
        ScenarioError,
        line_scenario_names,
        load_scenario,
        shipped_scenario_names,
    )
    from sessions.scenarios.model import MAX_FILE_BYTES

    if path is not None:
        return parse_expectations_text(read_text(Path(path), max_bytes=MAX_FILE_BYTES), path)
    names = sorted({c.scenario for c in calls if c.scenario})
    # Only a shipped scenario is looked up by the name a log gives: a log never makes
    # cutin read a file it names.
    shipped = {*shipped_scenario_names(), *line_scenario_names()}
    found = []
    for name in names:
        if name not in shipped:
            continue  # a scenario from a file: its [expect] comes with --expect FILE
        try:
            found.append(load_scenario(name).expectations)
        except ScenarioError:
            continue
    merged = merge(found)
    if not merged:
        raise CliError(
            "no expectations: the run's scenarios ("
            + (", ".join(shown_name(n) for n in names[:5]) or "none named")
            + ") have no [expect] table; give --expect FILE"
        )
    return merged


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"{shown_name(path)}: cannot write: {exc.strerror or exc}") from None


def check(
    run_dir: str,
    expectations: Expectations,
    args: argparse.Namespace,
    calls: list[RunCall] | None = None,
    out: TextIO | None = None,
) -> tuple[CheckResult, int]:
    """Evaluate, write what was asked (--junit, --markdown, --json or the table); the
    exit code. ``cutin simulate --check`` calls this too."""
    import json

    from replay.check.evaluate import evaluate
    from replay.check.format import table
    from replay.check.junit import render_junit
    from replay.check.load import load_run
    from replay.check.markdown import render_markdown
    from replay.errors import LoadError
    from sessions.hostile.inert_text import inert_json

    if calls is None:
        try:
            calls = load_run(run_dir)
        except LoadError as exc:
            raise CliError(str(exc)) from None
    result = evaluate(
        expectations,
        calls,
        keep_lagged=bool(getattr(args, "keep_lagged", False)),
        resamples=int(getattr(args, "resamples", 2000)),
        seed=int(getattr(args, "seed", 0)),
    )
    if getattr(args, "junit", None):
        _write(args.junit, render_junit(result))
    if getattr(args, "markdown", None):
        _write(args.markdown, render_markdown(result, shown_name(run_dir)))
    stream = out or sys.stdout
    if getattr(args, "json", False) and out is None:
        text = json.dumps(result.as_dict(), ensure_ascii=False, indent=2, allow_nan=False)
        stream.write(inert_json(text) + "\n")
    else:
        counts = result.counts()
        stream.write(table(result.rows) + "\n")
        for note in result.notes:
            stream.write(f"note: {terminal_line(note)}\n")
        stream.write(
            f"cutin check: {'PASS' if result.passed else 'FAIL'}: {counts['PASS']} passed, "
            f"{counts['FAIL']} failed, {counts['NOT ENOUGH DATA']} not enough data "
            f"({plural(result.calls, 'call')}, {result.lagged} lagged)\n"
        )
    stream.flush()
    return result, result.exit_code


# ---- cutin simulate --check ------------------------------------------------------------


def add_check_options(p: argparse.ArgumentParser) -> None:
    """``cutin simulate``'s --check and what goes with it."""
    p.add_argument(
        "--check",
        action="store_true",
        help="after the batch, run `cutin check` on its folder (expectations from --expect "
        "FILE or the scenarios' [expect] tables) and exit with its code",
    )
    p.add_argument("--expect", metavar="FILE", help="with --check: the expectations file")
    p.add_argument("--junit", metavar="FILE", help="with --check: also write JUnit XML here")
    p.add_argument("--markdown", metavar="FILE", help="with --check: a Markdown summary here")


def expectations_before_batch(args: argparse.Namespace, scenarios: list[Any]) -> Any:
    """With --check, the expectations, read before any call is made (a bad file is exit 2
    at once); None without --check."""
    from replay.check.expectations import merge, parse_expectations_text
    from sessions.hostile.safe_files import read_text
    from sessions.scenarios.model import MAX_FILE_BYTES

    if not args.check:
        for flag in ("expect", "junit", "markdown"):
            if getattr(args, flag, None):
                raise CliError(f"--{flag} goes with --check")
        return None
    if args.expect:
        return parse_expectations_text(
            read_text(Path(args.expect), max_bytes=MAX_FILE_BYTES), args.expect
        )
    merged = merge(sc.expectations for sc in scenarios)
    if not merged:
        raise CliError("--check: the scenarios have no [expect] table; give --expect FILE")
    return merged


def check_after_batch(args: argparse.Namespace, out_dir: Path, expectations: Any) -> int:
    """The check of a finished batch: its table on stderr when --json holds stdout."""
    own = argparse.Namespace(
        junit=args.junit, markdown=args.markdown, json=False, keep_lagged=False, seed=0,
        resamples=2000,
    )  # fmt: skip
    _, code = check(str(out_dir), expectations, own, out=sys.stderr if args.json else None)
    return code


def run(args: argparse.Namespace) -> int:
    from replay.check.load import load_run
    from replay.errors import LoadError

    try:
        calls = load_run(args.run_dir)
    except LoadError as exc:
        raise CliError(str(exc)) from None
    expectations = expectations_of(args.expect, calls)
    _, code = check(args.run_dir, expectations, args, calls)
    return code
