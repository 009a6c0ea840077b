"""`cutin replay`: step through logged calls and τ2-bench trials turn by turn."""

from __future__ import annotations

import argparse
from pathlib import Path

from cutin_tui.cli import CliError

DESCRIPTION = (
    "Replay calls turn by turn: a list of calls and trials (✓/✗, reward, verdict counts; "
    "f lists only failures) beside a table of turns with the cut marker and the unheard "
    "rest of cut agent turns, the disfluency diff of tester turns, backchannels and pauses "
    "among the words, and each judge's verdicts in its own column (rules · LLM · τ2 "
    "reward · τ2 review); τ2 hang-ups and transfers are call events, never speech. "
    "Keys: j/k turns, n/N failures, c/C cuts, space plays a turn, v hides the judge "
    "columns, r writes a report, ctrl+p lists every command. PATH is a session log, a "
    "folder of logs, a τ2-bench results file or folder (any layout and version: "
    "monolithic, dir, one simulation, a simulation_run record), or a verdict sidecar; without "
    "PATH the most recent calls of the sessions folder are listed."
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="logs or results to open")
    p.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to look for recent calls without PATH (default: the settings' "
        "sessions_dir, env CUTIN_SESSIONS_DIR)",
    )
    p.add_argument(
        "--recent",
        type=int,
        default=50,
        metavar="N",
        help="how many recent calls to list without PATH (default: 50)",
    )


def run(args: argparse.Namespace) -> int:
    from cutin_tui.screens.replay import ReplayApp

    paths = [Path(p) for p in args.paths]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise CliError(f"no such file or directory: {', '.join(missing)}")
    if args.recent < 1:
        raise CliError("--recent must be at least 1")
    sessions_dir: Path | None = args.sessions_dir
    if not paths and sessions_dir is None:
        from sessions.settings import Settings

        sessions_dir = Settings().sessions_dir
    app = ReplayApp(paths, sessions_dir=sessions_dir, recent=args.recent)
    app.run()
    return app.return_code or 0
