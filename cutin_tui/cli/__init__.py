"""`cutin` command line. Subcommands live in small modules listed in COMMANDS;
each has ``configure(parser)`` and ``run(args) -> int`` and imports heavy things
only inside ``run`` so that ``cutin --help`` stays fast."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from sessions.hostile.safe_files import FileError, terminal_line
from sessions.version import version_string

# (name, module, one-line help). Order is the order shown in --help.
COMMANDS: list[tuple[str, str, str]] = [
    ("call", "cutin_tui.cli.call_cmd", "open a live call against an agent (offline by default)"),
    ("replay", "cutin_tui.cli.replay_cmd", "step through logged calls and τ2 trials turn by turn"),
    ("overlaps", "cutin_tui.cli.overlaps_cmd", "gallery of overlap and disfluency types; handout"),
    ("simulate", "cutin_tui.cli.simulate_cmd", "headless batches: scenarios × conditions × runs"),
    ("audit", "cutin_tui.cli.audit_cmd", "realized disfluency and turn-taking rates, with tests"),
    ("check", "cutin_tui.cli.check_cmd", "check a run against expectations: exit 0/1 for CI"),
    ("compare", "cutin_tui.cli.compare_cmd", "compare two runs measure by measure: regressed?"),
    ("judge", "cutin_tui.cli.judge_cmd", "judge logged calls (rules or LLM) and record verdicts"),
    ("report", "cutin_tui.cli.report_cmd", "render calls turn by turn as Markdown, HTML or JSON"),
    ("inject", "cutin_tui.cli.inject_cmd", "add rule-based disfluencies to text"),
    ("vad", "cutin_tui.cli.vad_cmd", "list speech starts, short pauses and turn ends in a WAV"),
    ("devices", "cutin_tui.cli.devices_cmd", "list audio devices (--input/--output-device)"),
    ("positions", "cutin_tui.cli.positions_cmd", "freeze caller-reply positions of calls"),
    ("prompt-audit", "cutin_tui.cli.prompt_audit_cmd", "prompted vs injected disfluency"),
]


class CliError(Exception):
    """A usage or input problem: printed as one line, exit code 2."""


class OneLineParser(argparse.ArgumentParser):
    """Usage errors are one line (plus a pointer to --help), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")


class WholeFlagsFormatter(argparse.HelpFormatter):
    """Help text wrapped at spaces only: argparse's own wrapping also breaks at hyphens,
    which split a flag across lines (``--keep-`` / ``lagged``, ``--max-`` / ``seconds``).
    A description's paragraphs (blank-line separated) stay paragraphs, each refilled to
    the terminal's width."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import re
        import textwrap

        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]
        return "\n\n".join(
            textwrap.fill(
                p, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
            )
            for p in paragraphs
            if p
        )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="cutin",
        formatter_class=WholeFlagsFormatter,
        description=(
            "A terminal workbench for testing voice agents: rule-based interruptions, "
            "backchannels and disfluencies, call logs, replay and audits. "
            "With no command, opens the home screen."
        ),
        epilog=(
            "Exit status 2: a usage error, or an input file cutin cannot use (hostile or "
            "malformed: one line on stderr naming the file, the place in it and what is wrong)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"cutin {version_string()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name, module_name, help_text in COMMANDS:
        module = importlib.import_module(module_name)
        description = getattr(module, "DESCRIPTION", help_text)
        p = sub.add_parser(
            name, help=help_text, description=description, formatter_class=WholeFlagsFormatter
        )
        module.configure(p)
        p.set_defaults(_module=module_name)
    return parser


def _exit_at_once(code: int) -> None:
    """End the program now (a batch stopped by Ctrl-C, every call filed): without waiting
    for a worker thread still transcribing or synthesizing for a call that was given up,
    seconds on a loaded machine. Only as the program (``argv`` None), never in-process."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


EXIT_BROKEN_PIPE = 141
"""What a shell reports for a writer whose reader went away (128 + SIGPIPE): never 0,
so a gate piped through ``head`` cannot pass by accident."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader of our output went away (`cutin check RUN | head -1`): stop quietly,
        # as a Unix tool does, with no traceback. stdout is pointed at /dev/null so the
        # interpreter's last flush at exit cannot raise again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    from sessions.speech.tuning import limit_helper_threads

    limit_helper_threads()  # before anything imports numpy (sessions/speech/tuning.py)
    parser = build_parser()
    args = parser.parse_args(argv)
    module_name = getattr(args, "_module", None)
    try:
        if module_name is None:
            from cutin_tui.cli.home_cmd import run_home

            return run_home(args)
        module = importlib.import_module(module_name)
        result: int = module.run(args)
        if argv is None and getattr(args, "exit_at_once", False):
            _exit_at_once(result)
        return result
    except (CliError, FileError) as exc:
        # A usage or input problem, or a file cutin cannot use (sessions.hostile.safe_files):
        # one line, exit 2. terminal_line shows CR, LF and ESC from a file's text or
        # name as ␍ ␤ ␛, so a name holding a newline cannot split or forge the line.
        message = terminal_line(str(exc).rstrip("\n"))
        print(f"cutin: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        problem = settings_problem(exc)
        if problem is None:
            raise
        print(f"cutin: {terminal_line(problem)}", file=sys.stderr)
        return 2


def settings_problem(exc: BaseException) -> str | None:
    """One line for a bad ``CUTIN_*`` environment setting (pydantic-settings refuses it
    when the settings are built), naming the variable and what it needs; the value itself
    is never shown (``OPENAI_API_KEY`` is a setting too). None for any other error."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError) or exc.title != "Settings":
        return None
    parts = []
    for error in exc.errors(include_input=False, include_url=False):
        field = str(error["loc"][0]) if error["loc"] else "?"
        name = "OPENAI_API_KEY" if field == "openai_api_key" else f"CUTIN_{field.upper()}"
        parts.append(f"{name}: {error['msg']}")
    return "bad setting in the environment: " + "; ".join(parts)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
