"""`cutin replay`: step through logged calls and τ2-bench trials turn by turn."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cutin_tui.cli import CliError

DESCRIPTION = (
    "Replay calls turn by turn: a list of calls and trials (✓/✗, · not judged, reward, "
    "verdict counts; "
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
    from replay.load import preflight

    paths = [Path(p) for p in args.paths]
    if args.recent < 1:
        raise CliError("--recent must be at least 1")
    # Loaded up front until one path loads: when none can be, each is named with its
    # reason here (exit 2) rather than on a screen with nothing to show. Those loaded
    # are handed to the screen; the rest load there, a failure named under the list.
    preloaded, problems = preflight(paths)
    if problems and not any(not isinstance(r, str) and r.trials for r in preloaded):
        from sessions.hostile.safe_files import terminal_line

        for problem in problems:  # one line per path (a newline in a name shows as ␤)
            print(f"cutin: {terminal_line(problem)}", file=sys.stderr)
        return 2
    sessions_dir: Path | None = args.sessions_dir
    if not paths and sessions_dir is None:
        from sessions.settings import Settings

        sessions_dir = Settings().sessions_dir
    app = ReplayApp(paths, sessions_dir=sessions_dir, recent=args.recent, preloaded=preloaded)
    app.run()
    return app.return_code or 0
