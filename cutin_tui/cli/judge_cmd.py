"""`cutin judge`: run a judge over logged calls and record its verdicts."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cutin_tui.cli import CliError
from cutin_tui.cli.inputs import load_inputs, print_warnings
from cutin_tui.cli.llm_options import llm_config
from sessions.hostile.safe_files import shown_name, terminal_line

if TYPE_CHECKING:
    from replay.model import JudgeVerdict, Trial

DESCRIPTION = (
    "Judge calls and append the verdicts to their logs as verdict events (earlier lines "
    "are never rewritten). 'rules' needs no network: yield latency and talk-over after "
    "each interruption, backchannels treated as turns, turns that presume words the "
    "tester never heard, response latency, and --success phrases. 'llm' asks any "
    "OpenAI-compatible endpoint for per-turn and per-call verdicts. τ2-bench results "
    "are not cutin logs and are never modified: their verdicts go to a sidecar file, "
    "<input>.cutin-verdicts.jsonl beside the input (or --sidecar FILE), which `cutin "
    "report` and replay read back."
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a session log, a folder of logs, or a τ2-bench results file/folder",
    )
    p.add_argument(
        "--judge", choices=("rules", "llm"), default="rules", help="which judge (default rules)"
    )
    p.add_argument("--model", help="LLM judge: chat model (default: settings / CUTIN_OPENAI_MODEL)")
    p.add_argument("--base-url", help="LLM judge: OpenAI-compatible endpoint, e.g. a local server")
    p.add_argument(
        "--success",
        action="append",
        default=[],
        metavar="PHRASE",
        help="a phrase the agent must say for the call to succeed (repeatable)",
    )
    p.add_argument(
        "--scenario",
        metavar="NAME|FILE",
        help="take success phrases from this scenario's [success] agent_says (default for a "
        "cutin log without --success: the scenario named in its header, when it loads)",
    )
    p.add_argument(
        "--trial",
        action="append",
        default=[],
        metavar="ID",
        help="only judge these trial/session ids (repeatable)",
    )
    p.add_argument(
        "--sidecar",
        metavar="FILE",
        help="τ2 inputs: append verdicts here instead of beside the input",
    )
    p.add_argument("--dry-run", action="store_true", help="print the verdicts, write nothing")
    p.add_argument("-v", "--verbose", action="store_true", help="also list passing verdicts")


JudgeFn = Callable[["Trial", list[str]], list["JudgeVerdict"]]


def _judge_fn(args: argparse.Namespace) -> JudgeFn:
    if args.judge == "rules":
        from replay.judges.rules import judge_trial

        return judge_trial
    from replay.judges.llm import LlmJudge
    from sessions.llm_client import LLMClient
    from sessions.settings import load_settings

    config = llm_config(load_settings(), args, temperature=0.0)
    judge = LlmJudge(LLMClient(config))
    return judge.judge


def _scenario_phrases(name: str) -> list[str]:
    from sessions.scenarios import ScenarioError, load_scenario

    try:
        return list(load_scenario(name).success.agent_says)
    except (ScenarioError, OSError) as exc:
        raise CliError(str(exc)) from None


def _phrases(args: argparse.Namespace, trial: Trial, cache: dict[str, list[str]]) -> list[str]:
    """--success wins; then --scenario; then a cutin log's own scenario, if it loads."""
    if args.success:
        return list(args.success)
    if args.scenario:
        if args.scenario not in cache:
            cache[args.scenario] = _scenario_phrases(args.scenario)
        return cache[args.scenario]
    if trial.kind != "cutin" or not trial.task_id:
        return []
    if trial.task_id not in cache:
        try:
            cache[trial.task_id] = _scenario_phrases(trial.task_id)
        except CliError:
            cache[trial.task_id] = []
    return cache[trial.task_id]


def _print(trial: Trial, verdicts: list[JudgeVerdict], where: str, verbose: bool) -> None:
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.label] = counts.get(v.label, 0) + 1
    summary = ", ".join(f"{n} {label}" for label, n in sorted(counts.items())) or "no verdicts"
    print(terminal_line(f"{trial.id}: {summary}{where}"))
    from replay.report.wording import GLYPH

    for v in verdicts:
        if v.label == "pass" and not verbose:
            continue
        turn = f"turn {v.turn}" if v.turn is not None else "call"
        line = f"{GLYPH.get(v.label, v.label)} {turn:>8}  {v.judge} {v.name}: {v.rationale}"
        print("  " + terminal_line(line))


def run(args: argparse.Namespace) -> int:
    from replay.cutin_log.session_import import log_verdict
    from replay.errors import LoadError
    from replay.tau2.sidecar import default_sidecar, write_verdicts
    from sessions.log.writer import append_events

    batch = load_inputs(args.paths)
    print_warnings(batch.warnings)
    trials = [t for t in batch.trials if not args.trial or t.id in args.trial]
    if not trials:
        raise CliError(
            "no trials to judge"
            + (f" (no id matches {', '.join(args.trial)})" if args.trial else "")
        )
    judge = _judge_fn(args)
    phrases: dict[str, list[str]] = {}
    failures = 0
    noted: set[Path] = set()
    for trial in trials:
        verdicts = judge(trial, _phrases(args, trial, phrases))
        errors = [v for v in verdicts if v.label == "error"]
        if errors:
            failures += 1
            for v in errors:
                print(
                    f"cutin: {trial.id}: judge failed, nothing recorded: {v.rationale}",
                    file=sys.stderr,
                )
            continue
        where = ""
        if not args.dry_run and verdicts:
            if trial.kind == "cutin":
                target = Path(trial.source)
                append_events(target, [log_verdict(v, trial) for v in verdicts])
            else:
                target = Path(args.sidecar) if args.sidecar else default_sidecar(Path(trial.source))
                if target not in noted:
                    noted.add(target)
                    print(
                        f"cutin: {shown_name(trial.source)} is τ2-bench output and is never "
                        f"modified; verdicts go to the sidecar {shown_name(target)}",
                        file=sys.stderr,
                    )
                try:
                    write_verdicts(target, Path(trial.source), trial, verdicts)
                except (LoadError, OSError) as exc:
                    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                    raise CliError(
                        f"{target}: cannot write the verdict sidecar ({reason}); "
                        "pass --sidecar FILE"
                    ) from None
            where = f" → {target}"
        _print(trial, verdicts, where, args.verbose)
    return 1 if failures else 0
