"""`cutin compare BASE NEW`: two runs measure by measure, exit 1 when the new one regressed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cutin_tui.cli import CliError
from cutin_tui.cli.args import positive_int
from sessions.hostile.safe_files import shown_name

DESCRIPTION = (
    "Compare two runs of the same calls (run folders of `cutin simulate`, or two `cutin "
    "audit --json` files) measure by measure: for every agent-under-test measure of "
    "`cutin check` (yield_rate, yield_latency_mean/_median/_p95, false_yield_rate, "
    "response_rate, response_latency_*, agent_interruption_rate, dead_air_*, ...), the "
    "base and new values pooled over each run's calls as the audit pools them, the "
    "difference new − base with a 95% bootstrap interval over calls (seeded: the same "
    "runs give the same interval; calls paired by scenario and seed where both runs "
    "have them, as two batches with the same --seed do), and a verdict: regressed "
    "(the interval lies on the measure's worse side of 0), improved, no change, or not "
    "enough data (fewer than 10 events on a side). Runs of different scenarios, dials "
    "or cutin versions are FLAGGED in every output (--strict: exit 2). Exit 0: no "
    "measure regressed; 1: one did (--fail-on any-change: or improved), a measure "
    "named with --only had too little data, or nothing could be compared; 2: bad input."
    "\n\n"
    "Examples:\n\n"
    "cutin compare baseline/ run/ — the table, exit 1 on a regression\n\n"
    "cutin compare baseline/ run/ --only yield_rate,yield_latency_p95 --junit compare.xml "
    '--markdown "$GITHUB_STEP_SUMMARY"\n\n'
    "cutin audit baseline/ --json > base.json; cutin compare base.json run/ --json\n\n"
    "cutin compare --save-baseline v1.4 run/; (next deploy) cutin compare v1.4 run2/\n\n"
    "docs/ci.md has the baseline workflow and a GitHub Actions job."
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "base",
        metavar="BASE",
        help="the baseline: a run folder, a session log, an `audit --json` file (*.json) or "
        "a saved baseline's name or file",
    )
    p.add_argument("new", metavar="NEW", nargs="?", help="the run to judge, as BASE")
    p.add_argument(
        "--save-baseline",
        metavar="NAME",
        help="keep the run BASE names as baseline NAME (its calls' counts, events, seeds, "
        "dials and cutin version; in $CUTIN_BASELINES_DIR, by default baselines/ in cutin's "
        "data folder, or at NAME when it ends in .json) and compare nothing; later, "
        "`cutin compare NAME NEW` compares with it",
    )
    p.add_argument(
        "--only",
        metavar="MEASURE,...",
        help="compare only these measures (comma-separated; a named measure with too "
        "little data fails, exit 1)",
    )
    p.add_argument(
        "--fail-on",
        choices=("regressed", "any-change"),
        default="regressed",
        help="exit 1 when a measure regressed (default), or when any changed either way",
    )
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML here (one test case "
                   "per measure)")  # fmt: skip
    p.add_argument("--markdown", metavar="FILE", help="also write a Markdown summary here "
                   "(e.g. $GITHUB_STEP_SUMMARY)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the result as JSON instead of "
                   "a table")  # fmt: skip
    p.add_argument(
        "--strict",
        action="store_true",
        help="runs of different scenarios, dials or cutin versions are exit 2 (default: "
        "flagged and compared)",
    )
    p.add_argument(
        "--keep-lagged",
        action="store_true",
        help="keep calls whose frame lag exceeded one frame (default: left out and "
        "counted, as in cutin audit)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--resamples", type=positive_int, default=2000,
                   help="bootstrap resamples (default 2000)")  # fmt: skip


def only_measures(value: str | None) -> list[str]:
    from replay.check.measures import SPECS

    if value is None:
        return []
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise CliError("--only: name at least one measure")
    for name in names:
        if name not in SPECS:
            raise CliError(
                f"--only: unknown measure {shown_name(name)!r} (known: {', '.join(SPECS)})"
            )
    return list(dict.fromkeys(names))


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"{shown_name(path)}: cannot write: {exc.strerror or exc}") from None


def save_baseline(name: str, run_dir: str, folder: Path, *, keep_lagged: bool) -> int:
    """Write RUN_DIR's calls as baseline ``name``; one line says where."""
    import json

    from replay.check.baseline import baseline_document, baseline_path
    from replay.check.compare_load import load_side
    from replay.errors import LoadError

    try:
        path = baseline_path(name, folder)
        side = load_side(run_dir, "run", keep_lagged=keep_lagged)
    except LoadError as exc:
        raise CliError(str(exc)) from None
    if not side.units:
        raise CliError(f"{shown_name(run_dir)}: no call to a black-box agent to keep")
    if not side.events:
        raise CliError(
            f"{shown_name(run_dir)}: keep a run folder (an audit --json holds no events)"
        )
    text = json.dumps(baseline_document(side), ensure_ascii=False, allow_nan=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(
            f"{shown_name(path.parent)}: cannot make it: {exc.strerror or exc}"
        ) from None
    _write(str(path), text + "\n")
    lagged = f", {side.lagged} lagged left out" if side.lagged else ""
    sys.stdout.write(
        f"baseline {shown_name(name)}: {len(side.units)} calls of {shown_name(run_dir)}"
        f"{lagged} kept in {shown_name(path)}\n"
    )
    return 0


def run(args: argparse.Namespace) -> int:
    import json

    from replay.check.compare import compare
    from replay.check.compare_format import render_junit, render_markdown, text_report
    from replay.check.compare_load import load_side
    from replay.errors import LoadError
    from sessions.hostile.inert_text import inert_json
    from sessions.settings import load_settings

    only = only_measures(args.only)
    if args.seed < 0 or args.seed >= 2**63:
        raise CliError("--seed: expected a whole number from 0 to 2^63 - 1")
    folder = load_settings().baselines_dir
    if args.save_baseline is not None:
        if args.new is not None:
            raise CliError(
                "--save-baseline NAME takes one run: cutin compare --save-baseline NAME RUN_DIR"
            )
        return save_baseline(args.save_baseline, args.base, folder, keep_lagged=args.keep_lagged)
    if args.new is None:
        raise CliError("give two runs: cutin compare BASE NEW (or --save-baseline NAME RUN_DIR)")
    sides = []
    for path, label in ((args.base, "base"), (args.new, "new")):
        try:
            sides.append(load_side(path, label, keep_lagged=args.keep_lagged, baselines=folder))
        except LoadError as exc:
            raise CliError(f"{label}: {exc}") from None
    base, new = sides
    result = compare(base, new, only=only, fail_on=args.fail_on, resamples=args.resamples,
                     seed=args.seed)  # fmt: skip
    if args.strict and result.flags:
        raise CliError(f"--strict: {result.flags[0]}")
    if args.junit:
        _write(args.junit, render_junit(result))
    if args.markdown:
        _write(args.markdown, render_markdown(result))
    if args.json:
        text = json.dumps(result.as_dict(), ensure_ascii=False, indent=2, allow_nan=False)
        sys.stdout.write(inert_json(text) + "\n")
    else:
        sys.stdout.write(text_report(result))
    sys.stdout.flush()
    return result.exit_code
