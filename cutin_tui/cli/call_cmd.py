"""`cutin call`: a live call in the terminal."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from cutin_tui.cli.args import tendency

DESCRIPTION = """\
Open a live call. You are the caller and type; the agent (offline: a scenario's
script, spoken on a text clock) answers word by word. At every 200 ms pause in
its speech the rule engine decides whether to interrupt (β) or backchannel (γ);
what you type gets disfluencies (α) before it is "spoken". The screen shows the
transcript with cut markers, a timeline, the last decision with every check, and
the realized counts. Every call is logged (JSONL) to the sessions directory and
"log: PATH" is printed on exit.

Defaults: α 0.5, β 0, γ 0.5 — typed disfluencies and backchannels from the
agent's second turn on, no automatic interruptions (the method varies β and γ
one at a time; raise β with F7 then ctrl+↑, or start with --beta). Keys: Enter
speak, F2 interrupt now (with the typed text, or a scenario line), F3
backchannel now, F4/F5 auto-interrupt/auto-backchannel on/off, F6/F7/F8 select
α/β/γ, ctrl+↑/ctrl+↓ (or shift+↑/↓) step it by 0.1, F10 hang up, ctrl+q quit,
ctrl+p every action by name."""

DEFAULT_SCENARIO = "retail-order-change"


def _wpm(value: str) -> float:
    try:
        wpm = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"words per minute must be a number, got {value!r}"
        ) from None
    if not 60.0 <= wpm <= 400.0:
        raise argparse.ArgumentTypeError(f"words per minute must be 60..400, got {value}")
    return wpm


def configure(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument(
        "--scenario",
        metavar="NAME|FILE",
        default=DEFAULT_SCENARIO,
        help=f"a shipped scenario name or a scenario TOML file (default {DEFAULT_SCENARIO}; "
        "see --list-scenarios)",
    )
    p.add_argument(
        "--list-scenarios",
        action="store_true",
        help="print the shipped scenarios, one per line: name, a tab, the title; then exit",
    )
    p.add_argument(
        "--alpha", type=tendency("alpha"), default=0.5, help="disfluency tendency 0..1 (0.5)"
    )
    p.add_argument(
        "--beta", type=tendency("beta"), default=0.0, help="interruption tendency 0..1 (0)"
    )
    p.add_argument(
        "--gamma", type=tendency("gamma"), default=0.5, help="backchannel tendency 0..1 (0.5)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for timings and token choices (0)")
    p.add_argument(
        "--wpm",
        type=_wpm,
        default=None,
        metavar="N",
        help="speaking rate of the text clock, 60..400 (default CUTIN_WORDS_PER_MINUTE or 165)",
    )
    p.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the call log goes (default CUTIN_SESSIONS_DIR, else the user data dir)",
    )
    llm = p.add_argument_group(
        "agents and policies over an OpenAI-compatible endpoint",
        "The key comes from OPENAI_API_KEY (never logged); a local server needs only "
        "--base-url. Settings: CUTIN_OPENAI_BASE_URL, CUTIN_OPENAI_MODEL.",
    )
    llm.add_argument(
        "--agent",
        choices=("scripted", "openai"),
        default="scripted",
        help="the agent under test: the scenario's script (default, offline) or an LLM "
        "defined by a system prompt (the scenario's, or --agent-prompt)",
    )
    llm.add_argument(
        "--base-url",
        metavar="URL",
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1",
    )
    llm.add_argument(
        "--model", metavar="NAME", help="chat model (default CUTIN_OPENAI_MODEL or gpt-4o-mini)"
    )
    llm.add_argument(
        "--agent-prompt",
        type=Path,
        metavar="FILE",
        help="system prompt of the agent under test (with --agent openai)",
    )
    llm.add_argument(
        "--policy",
        choices=("rules", "tau-voice"),
        default="rules",
        help="who decides interruptions/backchannels: the rules (default) or τ-Voice's "
        "LLM classifiers, consulted every 2.0 s of agent speech",
    )
    llm.add_argument(
        "--shadow",
        choices=("rules", "tau-voice"),
        help="a second policy asked at the same opportunities and only logged, so one call "
        "shows both decisions (with LLM calls, latency and tokens)",
    )
    llm.add_argument(
        "--suggest",
        action="store_true",
        help="offer LLM-suggested caller replies on F9 (on by default with --agent openai)",
    )
    p.add_argument(
        "--no-auto-interrupt",
        dest="auto_interrupt",
        action="store_false",
        help="start with automatic interruptions off (F4 toggles)",
    )
    p.add_argument(
        "--no-auto-backchannel",
        dest="auto_backchannel",
        action="store_false",
        help="start with automatic backchannels off (F5 toggles)",
    )


def run(args: argparse.Namespace) -> int:
    from controls.tendencies import Tendencies
    from cutin_tui.cli import CliError
    from sessions.scenarios import ScenarioError, list_scenarios

    if args.list_scenarios:
        for scenario in list_scenarios():
            print(f"{scenario.name}\t{scenario.title}")
        return 0

    from cutin_tui.app import CutinApp
    from cutin_tui.call_driver import CallOptions, open_call
    from sessions.settings import Settings

    settings = Settings()
    sessions_dir: Path = args.sessions_dir or settings.sessions_dir
    options = CallOptions(
        scenario=args.scenario,
        tendencies=Tendencies(args.alpha, args.beta, args.gamma),
        seed=args.seed,
        words_per_minute=args.wpm or settings.words_per_minute,
        auto_interrupt=args.auto_interrupt,
        auto_backchannel=args.auto_backchannel,
        sessions_dir=sessions_dir,
        agent=args.agent,
        base_url=args.base_url,
        model=args.model,
        agent_prompt=args.agent_prompt,
        policy=args.policy,
        shadow=args.shadow,
        simulator=args.suggest,
    )
    if args.shadow is not None and args.shadow == args.policy:
        raise CliError(f"--shadow {args.shadow} is already the acting --policy")
    if args.agent_prompt is not None and args.agent != "openai":
        raise CliError("--agent-prompt needs --agent openai")
    try:
        driver = open_call(options)
    except ScenarioError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot create the call log in {sessions_dir}: {exc}") from None
    except (ValueError, RuntimeError) as exc:  # an unusable endpoint, key or prompt file
        raise CliError(str(exc)) from None
    app = CutinApp(call=driver)
    try:
        app.run()
    finally:
        # Whatever ended the app, the call gets its end event and the log is closed.
        app.stop_calls()
        driver.stop()
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            print(f"log: {driver.log_path}", flush=True)
    return app.return_code or 0
