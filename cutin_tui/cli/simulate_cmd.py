"""`cutin simulate`: headless batch runs, scenarios × conditions × runs, one log per call."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from controls.tendencies import DEFAULT_TENDENCIES
from cutin_tui.cli import CliError
from cutin_tui.cli.args import add_caller_style, tendency_list
from cutin_tui.cli.call_cmd import check_agent_key
from cutin_tui.cli.progress import batch_progress
from cutin_tui.cli.simulate_agents import AgentsAction, check_agents, check_capacity
from cutin_tui.cli.simulate_ray import add_ray_options, check_ray, ray_setup
from cutin_tui.cli.simulate_report import report

if TYPE_CHECKING:
    from sessions.batch.filing import CallOutcome
    from sessions.batch.plan import CallSpec
    from sessions.plan import CallPlan

DESCRIPTION = (
    "Run calls headless on the virtual text clock: every scenario × every combination of "
    "the --alpha/--beta/--gamma lists × --runs, the scenario's scripted caller (or the LLM "
    "simulator, --user llm) against the scripted or an LLM agent. One log per call goes "
    "into the batch folder (--out), named <scenario>__a<α>_b<β>_g<γ>__run<NN>.jsonl, which "
    "`cutin audit` and `cutin replay` open. Rerunning the same command resumes: finished "
    "calls are skipped. Ends with a table of realized rates per condition."
)


def configure(p: argparse.ArgumentParser) -> None:
    from sessions.lines.registry import line_help

    p.add_argument(
        "--scenario",
        action="append",
        metavar="NAME|PATH",
        help="a shipped scenario name or a TOML file; repeat for several (default: all shipped; "
        "for an agent on a line, line-check). A scenario whose caller presses keys "
        '({ dtmf = "1#" } turns, e.g. ivr-menu) needs --agent sip:USER@HOST',
    )
    p.add_argument(
        "--alpha",
        type=tendency_list("alpha"),
        default=[DEFAULT_TENDENCIES.alpha],
        metavar="LIST",
        help="disfluency tendencies, a comma list of 0..1 values "
        f"(default {DEFAULT_TENDENCIES.alpha:g})",
    )
    add_caller_style(p)
    p.add_argument(
        "--beta",
        type=tendency_list("beta"),
        default=[DEFAULT_TENDENCIES.beta],
        metavar="LIST",
        help=f"interruption tendencies, e.g. 0,0.3,0.7,1 (default {DEFAULT_TENDENCIES.beta:g})",
    )
    p.add_argument(
        "--gamma",
        type=tendency_list("gamma"),
        default=[DEFAULT_TENDENCIES.gamma],
        metavar="LIST",
        help="backchannel tendencies, a comma list "
        f"(default {DEFAULT_TENDENCIES.gamma:g}, as in cutin call)",
    )
    p.add_argument(
        "--runs", type=int, default=1, help="runs per scenario and condition (default 1)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="base seed; each call's seed derives from it, the scenario, condition and run",
    )
    p.add_argument(
        "--paired",
        action="store_true",
        help="leave the condition out of the seed: run k of every condition has the same timings",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="batch folder (default: a new folder under the sessions dir); rerun with it to resume",
    )
    p.add_argument(
        "--sessions-dir",
        type=Path,
        metavar="DIR",
        help="holds the default batch folder (default CUTIN_SESSIONS_DIR, else the user data dir)",
    )
    p.add_argument("--name", help="batch name recorded in every log (default: the folder's name)")
    p.add_argument(
        "--agent",
        action=AgentsAction,
        default="scripted",
        metavar="AGENT",
        help="agent under test: scripted (default), openai, or a black-box voice agent: "
        f"{line_help()}. "
        "Calls to a black-box agent run in real time (--jobs at once), each ending when the "
        "scenario's caller has said everything (or after --max-seconds, default 120); "
        "the caller is spoken by espeak-ng and each call's audio is kept beside its log. "
        "Repeat it (or write a port range, 'twilio:ws://h:{8765..8772}/') for agents that "
        "take one call at a time: each call takes a free one",
    )
    p.add_argument(
        "--base-url", help="OpenAI-compatible endpoint for --agent openai and --user llm"
    )
    p.add_argument("--model", help="chat model for --agent openai / --user llm (default: settings)")
    p.add_argument(
        "--user",
        choices=("scripted", "llm"),
        default="scripted",
        help="the caller: the scenario's scripted lines (default) or the LLM simulator",
    )
    p.add_argument(
        "--policy",
        choices=("rules", "tau-voice"),
        default="rules",
        help="turn-taking policy that acts: rules (default) or tau-voice (LLM classifiers "
        "every 2.0 s of agent speech; needs --base-url/--model)",
    )
    p.add_argument(
        "--shadow",
        choices=("rules", "tau-voice"),
        help="a second policy asked at the same opportunities, logged only (mode shadow)",
    )
    p.add_argument(
        "--speech",
        choices=("text", "espeak"),
        default="text",
        help="text: the text clock (fast; default); espeak: each call synthesized with "
        "espeak-ng on the virtual clock, its 200 ms pauses found by VAD on the agent's audio, "
        "both sides kept as <stem>.wav beside the log (no audio device needed)",
    )
    p.add_argument(
        "--agent-profile",
        metavar="NAME|FILE",
        help="time every scenario's agent turns by an agent profile (TOML quantiles of "
        "speaking rate, sentence and comma pauses, words per turn; shipped: tau2-voice, "
        "measured on τ2-bench agents); default: the scenario's agent.profile, if any",
    )
    p.add_argument(
        "--adapt",
        action="store_true",
        help="calibrate the rule's thresholds to the agent's rhythm so a dial gives the same "
        "actions per agent turn on any agent (docs/adaptive-rules.md): a scripted agent on "
        "the text clock is measured on its own script before each call, any other (a line "
        "too: its VAD pauses and STT words) live over the call's turns; every calibration "
        "is a 'calibration' log event",
    )
    p.add_argument("--wpm", type=float, help="base speaking rate (default from settings, 165)")
    p.add_argument(
        "--rate-jitter",
        type=float,
        default=None,
        metavar="FRACTION",
        help="each run speaks up to ± this fraction faster or slower (default 0.05; 0 = off)",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        help="end a call after this many virtual seconds (a black-box agent: real seconds)",
    )
    p.add_argument(
        "--transcribe",
        choices=("live", "end", "off"),
        default="live",
        help="a black-box agent's words: live (default; each stretch between its pauses, "
        "as it speaks), end (each turn once it ends: cheaper; the rule counts words "
        "estimated from speech time, logged as estimated), off (no words: load runs that "
        "need only yield timing; the log says so and cutin audit leaves out word-based "
        "measures)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="calls at once (default 1): virtual-clock calls in that many processes; "
        "real-time calls on a line in this process on one clock, sharing the VAD and STT "
        "models; more than this machine can pace is refused (see --force)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="run --jobs real-time calls even beyond what this machine paces (calls whose "
        "frame lag exceeds one frame are flagged and their timings not trusted)",
    )
    add_ray_options(p)
    from cutin_tui.cli.check_cmd import add_check_options

    add_check_options(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the per-condition summary as JSON instead of a table",
    )


def _check_available(args: argparse.Namespace) -> None:
    """Flags accepted for the interface, whose backends are not wired in yet."""
    if args.shadow is not None and args.shadow == args.policy:
        raise CliError(f"--shadow {args.shadow} is already the acting --policy")
    if args.speech == "espeak":
        import shutil

        if shutil.which("espeak-ng") is None:
            raise CliError(
                "--speech espeak needs espeak-ng: apt-get install espeak-ng (or --speech text)"
            )
    from sessions.plan import on_line

    if not _uses_llm(args) and not on_line(args.agent) and (args.model or args.base_url):
        raise CliError(
            "--model and --base-url need --agent openai, --user llm or a tau-voice policy"
        )
    if args.jobs < 1:
        raise CliError(f"--jobs must be at least 1, got {args.jobs}")


def _check_line(args: argparse.Namespace) -> None:
    """What a batch over a line to a black-box agent cannot do (one clear line each)."""
    import shutil

    if shutil.which("espeak-ng") is None:
        raise CliError(
            f"--agent {args.agent}: the caller speaks through espeak-ng: apt-get install espeak-ng"
        )


def _uses_llm(args: argparse.Namespace) -> bool:
    return bool(
        args.agent == "openai" or args.user == "llm" or "tau-voice" in (args.policy, args.shadow)
    )


def _check_llm(args: argparse.Namespace) -> str:
    """Fail before the batch starts if the endpoint cannot be used; returns the model."""
    from sessions.llm_client import LLMConfig, LLMError
    from sessions.settings import load_settings

    config = LLMConfig.from_settings(load_settings(), model=args.model, base_url=args.base_url)
    try:
        config.resolved_key()
    except LLMError as exc:
        raise CliError(str(exc)) from None
    return config.model


def _options(args: argparse.Namespace) -> CallPlan:
    """The plan every call of the batch shares, from the arguments (each call's scenario,
    dials, seed, rate and log are its own: :func:`sessions.batch.filing.call_plan`)."""
    from cutin_tui.cli.plan_args import plan_from_args
    from sessions.plan import on_line

    if on_line(args.agent):
        _check_line(args)
        args.speech = "espeak"  # the caller's voice on the line
    elif args.transcribe != "live":
        raise CliError(
            f"--transcribe {args.transcribe} needs --agent twilio:ws://... or realtime: "
            "a simulated agent's words are known, not transcribed"
        )
    return plan_from_args(args, transcribe=args.transcribe)


def run(args: argparse.Namespace) -> int:
    from sessions.batch.board import BatchBoard
    from sessions.batch.cluster.connect import ClusterError
    from sessions.batch.filing import BatchMismatch, CallStatus
    from sessions.batch.plan import (
        RATE_JITTER_DEFAULT,
        BatchPlan,
        BatchPlanError,
        conditions,
        plan_batch,
    )
    from sessions.batch.runner.run import run_batch
    from sessions.plan import LINE_SCENARIO, on_line
    from sessions.plan import on_line as is_line
    from sessions.scenarios import ScenarioError, load_scenario, shipped_scenario_names
    from sessions.scenarios.keypad import check_keypad
    from sessions.scenarios.profile import load_profile
    from sessions.settings import load_settings

    _check_available(args)
    check_ray(args)
    agents = check_agents(args)
    options = _options(args)
    jobs = check_capacity(args, agents) if is_line(args.agent) and args.ray is None else args.jobs
    check_agent_key(args)  # else every call of the batch fails on the missing key
    if _uses_llm(args):
        options = _with_model(options, _check_llm(args))
    settings = load_settings()
    try:
        # An agent on a line gets the caller-only line-check, not the shops' scripts.
        default = [LINE_SCENARIO] if on_line(options.agent) else shipped_scenario_names()
        loaded = [load_scenario(s) for s in (args.scenario or default)]
        for sc in loaded:
            check_keypad(sc, options.agent, options.user)  # keys need a line with DTMF
            name = args.agent_profile or sc.agent.profile
            if name is not None:
                load_profile(name)  # a bad profile fails before the batch starts
    except ScenarioError as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    scenarios = {sc.name: sc for sc in loaded}
    from cutin_tui.cli.check_cmd import expectations_before_batch

    expectations = expectations_before_batch(args, loaded)  # a bad file: exit 2 at once
    sessions_dir: Path = args.sessions_dir or settings.sessions_dir
    out_dir: Path = args.out or (
        sessions_dir / "batches" / dt.datetime.now().strftime("simulate-%Y%m%d-%H%M%S")
    )
    if out_dir.exists() and not out_dir.is_dir():
        raise CliError(f"--out {out_dir}: not a folder")
    wpm = args.wpm if args.wpm is not None else settings.words_per_minute
    jitter = RATE_JITTER_DEFAULT if args.rate_jitter is None else args.rate_jitter
    try:
        specs = plan_batch(
            [sc.name for sc in loaded],
            conditions(args.alpha, args.beta, args.gamma),
            runs=args.runs,
            seed=args.seed,
            batch=args.name or out_dir.resolve().name,
            words_per_minute=wpm,
            rate_jitter=jitter,
            paired=args.paired,
        )
        _check_rates(specs)
    except (BatchPlanError, ValueError) as exc:
        raise CliError(str(exc)) from None

    plan = BatchPlan(
        specs,
        scenarios,
        options,
        out_dir,
        jobs=jobs,
        agents=agents,
        settings=settings,
        ray=ray_setup(args),  # the same plan and filing, on a Ray cluster
    )
    outcomes: list[CallOutcome] = []
    interrupted = False
    board = BatchBoard()
    created = not out_dir.exists()  # an empty folder this run made is not left behind
    batch: Iterator[CallOutcome] = iter(())
    with batch_progress(len(specs), board, jobs) as progress:
        try:
            batch = run_batch(plan, board=board)
            for outcome in batch:
                outcomes.append(outcome)
                progress.advance(outcome)
        except (BatchMismatch, ClusterError) as exc:
            raise CliError(str(exc)) from None
        except KeyboardInterrupt:
            interrupted = True
            # Stopped between two outcomes: the runner hangs up and files its running
            # calls now (not when the generator is collected, after the report).
            with contextlib.suppress(KeyboardInterrupt):
                close = getattr(batch, "close", None)
                if close is not None:
                    close()
            outcomes += board.stopped
    if created and _remove_if_empty(out_dir):
        out_dir_shown: Path | None = None
    else:
        out_dir_shown = out_dir
    report(
        outcomes,
        specs,
        out_dir_shown,
        as_json=args.json,
        interrupted=interrupted,
        on_ray=args.ray is not None,
        told=progress.told,
    )
    if interrupted:
        # Every call is filed: the program need not wait for the given-up calls' threads.
        args.exit_at_once = True
        return 130
    if any(o.status is CallStatus.FAILED for o in outcomes):
        return 1
    if expectations is not None:
        from cutin_tui.cli.check_cmd import check_after_batch

        return check_after_batch(args, out_dir, expectations)
    return 0


def _remove_if_empty(folder: Path) -> bool:
    """Remove ``folder`` if nothing was written into it; whether it is gone."""
    try:
        folder.rmdir()  # only an empty folder
    except OSError:
        return False
    return True


def _with_model(options: CallPlan, model: str) -> CallPlan:
    return options.model_copy(update={"model": model})


def _check_rates(specs: list[CallSpec]) -> None:
    from sessions.speech.speech_clock import SpeakingStyle

    for wpm in {s.words_per_minute for s in specs}:
        SpeakingStyle(words_per_minute=wpm)  # raises ValueError naming the bad rate
