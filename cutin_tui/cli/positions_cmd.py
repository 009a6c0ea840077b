"""`cutin positions extract`: freeze the user response positions of recorded calls."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cutin_tui.cli import CliError
from cutin_tui.cli.args import positive_int
from cutin_tui.cli.inputs import load_inputs, print_warnings
from sessions.hostile.safe_files import shown_name, terminal_line

DESCRIPTION = (
    "Work with user response positions, the frozen evaluation set of `cutin prompt-audit`. "
    "A position is one caller reply in a recorded call, with the simulator's system prompt "
    "and the conversation before it."
)
EXTRACT_DESCRIPTION = (
    "Extract positions from passed cutin calls (session logs or folders of them): every "
    "caller reply except interruption lines, with the history as the simulator saw it and "
    "the simulator prompt rebuilt from the call's scenario. --per-conversation samples at "
    "most N per call (seeded, so the same inputs give the same set)."
)


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="positions_command", metavar="ACTION", required=True)
    x = sub.add_parser(
        "extract", help="extract positions from calls", description=EXTRACT_DESCRIPTION
    )
    x.add_argument("paths", nargs="+", metavar="PATH", help="cutin session logs or folders")
    x.add_argument("-o", "--output", required=True, metavar="FILE", help="positions JSONL to write")
    x.add_argument(
        "--per-conversation",
        type=positive_int,
        default=None,
        metavar="N",
        help="at most N per call",
    )
    x.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    x.add_argument("--include-failed", action="store_true", help="also use calls that failed")
    x.add_argument("--skip-bad", action="store_true", help="skip unreadable logs (with a warning)")


def run(args: argparse.Namespace) -> int:
    from replay.prompted.positions import extract, scenario_system_prompt
    from replay.prompted.positions_io import write_positions

    batch = load_inputs(args.paths, skip_bad=args.skip_bad)
    print_warnings(batch.warnings)
    result = extract(
        batch.trials,
        scenario_system_prompt,
        per_conversation=args.per_conversation,
        seed=args.seed,
        include_failed=args.include_failed,
    )
    for line in result.skipped:
        print(f"cutin: skipped {terminal_line(line)}", file=sys.stderr)
    if not result.positions:
        raise CliError("no positions: none of the calls has a usable caller reply")
    out = Path(args.output)
    try:
        n = write_positions(out, result.positions)
    except OSError as exc:
        raise CliError(f"{shown_name(out)}: {exc.strerror or exc}") from None
    print(f"{n} positions from {result.conversations} calls → {shown_name(out)}")
    return 0
