"""`cutin audit`: what a user simulator actually did, with intervals and tests."""

from __future__ import annotations

import argparse
import shutil
import sys

from cutin_tui.cli import CliError
from cutin_tui.cli.args import positive_int, tendency_list
from cutin_tui.cli.inputs import print_warnings

DESCRIPTION = (
    "Audit realized behaviour per condition: disfluency (fillers, repetitions and both "
    "per 1,000 words with 95% bootstrap intervals over conversations, turn-initial "
    "filler share, share of turns with any, variance-to-mean ratio), turn-taking "
    "(interruptions and backchannels per opportunity and per agent turn, where they "
    "land) beside two negative controls (mid-turn pauses per minute of agent speech "
    "before any action, and in every turn's first six words where no rule acts), "
    "Kendall's τ-b of each dial against its realized rate, and "
    "Wilcoxon signed-rank tests against the dial-at-0 baseline paired by session "
    "(agent, scenario, run and base seed as logged: 20 runs give 20 pairs; fewer than "
    "6 pairs are noted; only calls of the same agent, agent kind and scenario pair, and "
    "every call left out is listed with the reason). A call whose dials changed "
    "mid-call is listed span by span and left out of the condition tables and tests; a "
    "rate over fewer than 10 events (or one conversation) prints its count and no "
    "interval; a negative control that moved is flagged with its likely cause; "
    "disfluency is also given per source of the caller's text (typed, scenario line, "
    "LLM caller, interruption); docs/audit.md says what each note means. Calls to "
    "your own agent (--agent twilio:...|realtime) add an "
    "'agent under test' table: its yield rate and latency after the caller cuts in, "
    "false yields after backchannels, response latency, talk-over and pauses per "
    "minute of its speech, pooled per condition with intervals over calls. PATH is a "
    "cutin session log, a folder of logs, or a τ2-bench results file or folder "
    "(full-duplex trials: opportunity = classifier consultation; τ2 voice runs add a "
    "table of speech effects, configured beside realized). With --texts, "
    "audits injection itself on a text file of user turns (one per line, a blank "
    "line between conversations) at each --alpha, in the --style given (paper or "
    "human); with --style, both styles are printed beside the human anchors "
    "(docs/disfluency-styles.md)."
)
DEFAULT_TEXT_ALPHAS = "0.25,0.5,0.75,1"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="logs or τ2 results to audit")
    p.add_argument(
        "--by",
        action="append",
        metavar="FIELD[,FIELD]",
        help=(
            "condition fields: alpha, beta, gamma, policy, model (= agent_model, the "
            "agent's), user_model (the user simulator's), agent_kind (scripted, openai, "
            "twilio, ...), agent (its name), scenario, or any dotted header "
            "path (e.g. batch.user, speech.tts); repeatable (default: "
            "alpha,beta,gamma,policy,model, and user_model instead of model for the "
            "disfluency table, since disfluency is the user simulator's; with --texts: alpha)"
        ),
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=(
            "print JSON: disfluency, disfluency_by, disfluency_by_source, turn_taking, "
            "tests, effects, mixed_calls, notes, min_events (and agent_under_test for "
            "black-box calls)"
        ),
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--resamples",
        type=positive_int,
        default=2000,
        help="bootstrap resamples (default 2000)",
    )
    p.add_argument(
        "--texts",
        metavar="FILE",
        help="audit injection on this text file instead of logs",
    )
    p.add_argument(
        "--alpha",
        type=tendency_list("alpha"),
        default=None,
        metavar="A[,A...]",
        help=f"with --texts: the α values to inject at (default {DEFAULT_TEXT_ALPHAS})",
    )
    p.add_argument(
        "--style",
        choices=("paper", "human"),
        default=None,
        help=(
            "with --texts: the disfluency style to inject in (default paper); the human "
            "anchors (fillers, repetitions, um share, unit-initial share, disfluencies "
            "per 100 words, repairs and restarts, length-adjusted dispersion) are "
            "printed for both styles at each α (also in --json, as human_anchors)"
        ),
    )
    p.add_argument(
        "--keep-lagged",
        action="store_true",
        help="keep calls whose frame lag exceeded one frame (a machine that could not pace "
        "them) in the agent's latency figures; by default they are noted and left out",
    )
    p.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip unreadable logs (with a warning) instead of stopping",
    )


def _disfluency_fields(args: argparse.Namespace) -> list[str] | None:
    """The disfluency table's own grouping: the user simulator's model by default;
    an explicit --by applies to every table."""
    from replay.audit.sessions import DEFAULT_DISFLUENCY_BY

    return None if args.by or args.texts else list(DEFAULT_DISFLUENCY_BY)


def _fields(args: argparse.Namespace) -> list[str]:
    from replay.audit.sessions import DEFAULT_BY, canonical_field

    if not args.by:
        return ["alpha"] if args.texts else list(DEFAULT_BY)
    out: list[str] = []
    for chunk in args.by:
        for name in chunk.split(","):
            name = canonical_field(name)
            if name and name not in out:
                out.append(name)
    if not out:
        raise CliError("--by needs at least one field name")
    return out


def _anchors(
    args: argparse.Namespace, texts: list[list[str]], alphas: list[float]
) -> dict[str, list[dict[str, object]]]:
    """Both styles against the human anchors, per α (keyed by α as written)."""
    from replay.audit.human import texts_anchor_rows

    return {
        f"{a:g}": texts_anchor_rows(texts, a, resamples=args.resamples, seed=args.seed)
        for a in alphas
    }


def run(args: argparse.Namespace) -> int:
    from replay.audit.load import load_conversations, read_texts
    from replay.audit.report import build_report
    from replay.audit.texts import from_texts
    from replay.errors import LoadError

    if args.texts and args.paths:
        raise CliError("give either PATHs to audit or --texts FILE, not both")
    if not args.texts and not args.paths:
        raise CliError("nothing to audit: give PATHs (logs, τ2 results) or --texts FILE")
    if args.alpha is not None and not args.texts:
        raise CliError("--alpha goes with --texts (logs carry their own α)")
    if args.style is not None and not args.texts:
        raise CliError("--style goes with --texts (logs carry their own style)")
    fields = _fields(args)
    texts: list[list[str]] = []
    alphas: list[float] = []
    try:
        if args.texts:
            alphas = args.alpha or tendency_list("alpha")(DEFAULT_TEXT_ALPHAS)
            if not alphas:
                raise CliError("--alpha needs at least one value")
            texts = read_texts(args.texts)
            style = args.style or "paper"
            conversations = from_texts(texts, alphas, source=args.texts, style=style)
            warnings: list[str] = []
        else:
            conversations, warnings = load_conversations(args.paths, skip_bad=args.skip_bad)
    except LoadError as exc:
        raise CliError(str(exc)) from None
    if not conversations:
        raise CliError("nothing to audit: the inputs hold no calls or trials")
    from replay.audit.lag import set_aside_lagged

    lag_notes = set_aside_lagged(conversations, keep=args.keep_lagged)
    report = build_report(
        conversations,
        fields,
        resamples=args.resamples,
        seed=args.seed,
        disfluency_by=_disfluency_fields(args),
    )
    report.warnings[:0] = warnings
    report.notes.extend(lag_notes)
    from replay.audit.effects import effects_rows

    effects = effects_rows(conversations, fields)
    if args.json:
        import json

        from replay.audit.render import report_json

        out = {**json.loads(report_json(report)), "disfluency_by": report.disfluency_by}
        out["effects"] = effects
        if args.style is not None:
            out["human_anchors"] = _anchors(args, texts, alphas)
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2, allow_nan=False) + "\n")
        print_warnings(report.warnings)
    else:
        from rich.console import Console

        from replay.audit.render import print_report

        # The terminal's width, or COLUMNS; piped output without COLUMNS gets 160.
        width = shutil.get_terminal_size((160, 24)).columns
        console = Console() if sys.stdout.isatty() else Console(width=width)
        print_report(report, console)
        if report.disfluency_by != report.by:
            console.print(f"[dim]disfluency by {', '.join(report.disfluency_by)}[/dim]")
        if effects:
            from replay.audit.effects import effects_table

            console.print(effects_table(effects))
        if args.style is not None:
            from replay.audit.human import anchor_table

            for alpha, rows in _anchors(args, texts, alphas).items():
                console.print(anchor_table(rows, float(alpha)))
    return 0
