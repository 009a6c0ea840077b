"""`cutin inject`: rule-based disfluency injection on the command line."""

from __future__ import annotations

import argparse
import json
import sys

from controls.tendencies import DEFAULT_TENDENCIES
from cutin_tui.cli import CliError
from cutin_tui.cli.args import tendency

DESCRIPTION = (
    "Render text with rule-based disfluencies (fillers, repetitions, pauses) exactly as a "
    "call would before speech synthesis. With TEXT, prints the rendered text; without, "
    "reads standard input and prints one rendered line per input line. The same text "
    "always renders the same way. --style human adds a turn-initial filler slot, "
    "self-repairs and restarts at phrase starts and a per-turn rate (docs/disfluency-styles.md)."
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="*", metavar="TEXT", help="text to render (default: read stdin)")
    p.add_argument(
        "--alpha",
        type=tendency("alpha"),
        default=DEFAULT_TENDENCIES.alpha,
        help=f"disfluency tendency, 0..1 (default {DEFAULT_TENDENCIES.alpha:g})",
    )
    p.add_argument(
        "--style",
        choices=("paper", "human"),
        default="paper",
        help="disfluency style: paper (the published rule, default) or human",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="with --style human: an extra seed beside the text (default: the text alone)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per line: original, rendered, insertions",
    )


def run(args: argparse.Namespace) -> int:
    from controls import inject_disfluency
    from controls.disfluency_human import inject_human

    if args.seed is not None and args.style != "human":
        raise CliError("--seed goes with --style human (the paper's rule is seeded by the text)")

    def emit(line: str) -> None:
        if args.style == "human":
            result = inject_human(line, args.alpha, args.seed)
        else:
            result = inject_disfluency(line, args.alpha)
        if args.json:
            full = result.as_dict()
            out = {k: full[k] for k in ("original", "rendered", "insertions")}
            print(json.dumps(out, ensure_ascii=False))
        else:
            print(result.rendered)

    if args.text:
        emit(" ".join(args.text))
        return 0
    for raw in sys.stdin:
        emit(raw.rstrip("\n"))
    sys.stdout.flush()
    return 0
